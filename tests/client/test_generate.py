"""The client's operations are generated from the API's schema: the committed package is what the
generator makes of the schema the app has now (so the client cannot drift from the API), one module
per feature of the API, every type it names resolves, and the client is plain Python (no Django,
no app of the project)."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import sys
import types
import typing
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator

import nsmclient
from nsmclient import api, codegen, generate
from nsmclient.client import Client
from nsmclient.flows import Flows

PACKAGE = Path(nsmclient.__file__).parent


@pytest.fixture(scope="module")
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def test_the_committed_operations_are_generated_from_the_current_schema(schema):
    differ = generate.stale(PACKAGE / "api", generate.render(schema))
    assert differ == [], f"the API changed ({differ}): run `python -m nsmclient.generate`"


def generated_modules() -> list[types.ModuleType]:
    return [
        importlib.import_module(f"nsmclient.api.{p.stem}") for p in sorted((PACKAGE / "api").glob("[!_]*.py"))
    ]


def test_one_module_per_feature_each_short_and_importing_only_common():
    """The package is split by idea: a feature's operations and the types only they use, the
    shared types in common, and no feature's module imports another's (so none is a module of
    everything)."""
    modules = generated_modules()
    names = {m.__name__.rsplit(".", 1)[-1] for m in modules}
    assert {"common", "work", "jobs", "gold", "quality", "webhooks"} <= names
    for path in (PACKAGE / "api").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert text.count("\n") <= 650, path.name
        imported = {
            node.module
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.ImportFrom) and node.module
        }
        ours = {m for m in imported if m.startswith("nsmclient")}
        if path.stem != "__init__":
            assert ours <= {"nsmclient.api.common"}, (path.name, ours)
    mixins = [m for m in modules if m.__name__ != "nsmclient.api.common"]
    assert api.Operations.__mro__[1 : len(mixins) + 1] == tuple(
        getattr(m, codegen.camel(m.__name__.rsplit(".", 1)[-1]) + "Operations") for m in mixins
    )


def operation_ids(schema: dict) -> set[str]:
    return {
        op["operationId"] for ops in schema["paths"].values() for m, op in ops.items() if m in codegen.METHODS
    }


def test_every_operation_of_the_api_is_a_method_and_no_flow_hides_one(schema):
    ids = operation_ids(schema)
    assert len(ids) >= 60
    assert {codegen.identifier(i) for i in ids} <= set(dir(Client))
    hand_written = {name for cls in (Flows, Client) for name in vars(cls) if not name.startswith("_")} - {
        "token",
        "retries",
        "max_wait",
    }
    assert hand_written <= codegen.RESERVED  # the generator refuses an operation named like one
    assert not hand_written & {codegen.identifier(i) for i in ids}


def test_every_type_the_modules_name_resolves():
    hints = 0
    for module in generated_modules():
        for value in vars(module).values():
            if isinstance(value, type) and typing.is_typeddict(value) and value.__module__ == module.__name__:
                hints += len(typing.get_type_hints(value))
    for _name, function in inspect.getmembers(api.Operations, inspect.isfunction):
        hints += len(typing.get_type_hints(function))
    assert hints > 500


def test_the_generated_signature_types_path_query_and_body():
    create = inspect.signature(Client.rounds_gold_resolve_create)
    assert list(create.parameters) == ["self", "round_id", "item_id", "body"]
    listing = inspect.signature(Client.assignments_list)
    assert all(
        p.kind is p.KEYWORD_ONLY and p.default is None for n, p in listing.parameters.items() if n != "self"
    )
    hints = typing.get_type_hints(Client.assignments_list)
    assert typing.get_args(hints["status"])[0] == api.work.AssignmentsListStatus
    assert hints["return"] == api.work.PaginatedAssignmentOutList
    assert "GET /api/assignments/" in Client.assignments_list.__doc__
    assert "404: a page past the last" in Client.assignments_list.__doc__


SMALL = {
    "paths": {
        "/things/{id}/": {
            "post": {
                "operationId": "things_touch",
                "description": "Touch a thing.",
                "parameters": [
                    {"in": "path", "name": "id", "schema": {"type": "integer"}, "required": True},
                    {"in": "query", "name": "pass", "schema": {"type": "string", "enum": ["a", "b"]}},
                ],
                "requestBody": {
                    "content": {"multipart/form-data": {"schema": {"$ref": "#/components/schemas/ThingIn"}}},
                    "required": True,
                },
                "responses": {
                    "201": {
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}
                    },
                    "204": {"description": "nothing"},
                    "409": {"description": "taken"},
                },
            }
        }
    },
    "components": {
        "schemas": {
            "ThingIn": {
                "type": "object",
                "properties": {"file": {"type": "string", "format": "binary"}, "from": {"type": "integer"}},
                "required": ["file"],
            },
            "Thing": {
                "type": "object",
                "description": "A thing.",
                "properties": {
                    "id": {"type": "integer"},
                    "tags": {"type": "array", "items": {"$ref": "#/components/schemas/TagEnum"}},
                    "note": {"type": "string", "nullable": True, "description": "what it says"},
                },
                "required": ["id"],
            },
            "TagEnum": {"enum": ["x", "y"], "type": "string"},
        }
    },
}


def test_render_types_keywords_files_enums_and_answers():
    modules = generate.render(SMALL)
    assert sorted(modules) == ["__init__.py", "common.py", "things.py"]  # a section not listed: its own
    text = modules["things.py"]
    assert 'TagEnum = Literal["x", "y"]' in text
    assert 'ThingsTouchPass = Literal["a", "b"]' in text
    assert '"file": "FileInput",' in text and '"from": "NotRequired[int]",' in text  # a keyword as key
    assert "    #: what it says\n    note: NotRequired[str | None]" in text
    assert "        pass_: ThingsTouchPass | None = None,\n    ) -> Thing | None:" in text
    assert 'query={"pass": pass_}, multipart=body, files=("file",)' in text.replace("\n", " ").replace(
        "            ", ""
    )
    module = types.ModuleType("generated_small")
    sys.modules[module.__name__] = module
    try:
        exec(compile(text, "<generated>", "exec"), vars(module))  # it runs, and its types resolve
        assert typing.get_type_hints(module.ThingIn) == {"file": module.FileInput, "from": int}
        assert set(typing.get_type_hints(module.Thing)) == {"id", "tags", "note"}
        typing.get_type_hints(module.ThingsOperations.things_touch, vars(module))
    finally:
        del sys.modules[module.__name__]


def test_an_operation_named_like_a_flow_is_refused():
    schema = {"paths": {"/x/": {"get": {"operationId": "paginate", "responses": {}}}}}
    with pytest.raises(ValueError, match="paginate"):
        generate.render(schema)


def test_the_client_is_plain_python():
    project = {p.name for p in PACKAGE.parent.iterdir() if (p / "__init__.py").exists()} - {"nsmclient"}
    imported = set()
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
    assert "django" not in imported and "rest_framework" not in imported
    assert not imported & project, imported & project
    assert "httpx" in imported


def test_a_type_too_long_for_its_line_is_named_after_the_classes():
    names = [
        "AnnotationRevisionOut",
        "ConventionDetailOut",
        "GoldDetailOut",
        "ItemSetDetailOut",
        "PairSetDetailOut",
    ]
    thing = {"type": "object", "properties": {"id": {"type": "integer"}}}
    box = {"oneOf": [{"$ref": f"#/components/schemas/{n}"} for n in names], "nullable": True}
    schema = {
        "paths": {},
        "components": {
            "schemas": {**dict.fromkeys(names, thing), "Box": {"type": "object", "properties": {"held": box}}}
        },
    }
    text = generate.render(schema)["common.py"]  # named by no operation: common
    assert "    held: NotRequired[BoxHeld]\n" in text
    alias = "BoxHeld = (\n" + "".join(f"    {'| ' if i else ''}{n}\n" for i, n in enumerate([*names, "None"]))
    assert alias + ")\n\n\nclass OperationsBase(ABC):" in text  # after the classes it names, as ruff wraps it
    assert all(len(line) <= codegen.WIDTH for line in text.splitlines())


def test_the_command_writes_checks_and_refuses_an_unreadable_schema(tmp_path, capsys):
    saved, out = tmp_path / "schema.json", tmp_path / "api"
    saved.write_text(json.dumps(SMALL))
    out.mkdir()
    (out / "gone.py").write_text("a module the schema no longer makes")
    assert generate.main(["--schema", str(saved), "--output", str(out)]) == 0
    written = {p.name: p.read_text() for p in out.glob("*.py")}
    assert written == generate.render(SMALL)  # gone.py removed
    assert generate.main(["--schema", str(saved), "--output", str(out), "--check"]) == 0
    (out / "things.py").write_text("stale")
    assert generate.main(["--schema", str(saved), "--output", str(out), "--check"]) == 1
    err = capsys.readouterr().err
    assert (out / "things.py").read_text() == "stale" and "(things.py)" in err and "run python -m" in err
    saved.write_text("{not json")
    assert generate.main(["--schema", str(saved), "--output", str(out)]) == 2
    assert f"cannot read the schema {saved}" in capsys.readouterr().err
