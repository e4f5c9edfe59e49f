"""The client's operations are generated from the API's schema: the committed module is what the
generator makes of the schema the app has now (so the client cannot drift from the API), every type
it names resolves, and the client is plain Python (no Django, no app of the project)."""

from __future__ import annotations

import ast
import inspect
import json
import sys
import types
import typing
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator

import nsmclient
from nsmclient import _operations, generate
from nsmclient.client import Client
from nsmclient.flows import Flows

PACKAGE = Path(nsmclient.__file__).parent


@pytest.fixture(scope="module")
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def test_the_committed_operations_are_generated_from_the_current_schema(schema):
    committed = (PACKAGE / "_operations.py").read_text(encoding="utf-8")
    assert generate.render(schema) == committed, "the API changed: run `python -m nsmclient.generate`"


def operation_ids(schema: dict) -> set[str]:
    return {
        op["operationId"]
        for ops in schema["paths"].values()
        for m, op in ops.items()
        if m in generate.METHODS
    }


def test_every_operation_of_the_api_is_a_method_and_no_flow_hides_one(schema):
    ids = operation_ids(schema)
    assert len(ids) >= 60
    assert {generate._identifier(i) for i in ids} <= set(dir(Client))
    hand_written = {name for cls in (Flows, Client) for name in vars(cls) if not name.startswith("_")} - {
        "token",
        "retries",
        "max_wait",
    }
    assert hand_written <= generate.RESERVED  # the generator refuses an operation named like one
    assert not hand_written & {generate._identifier(i) for i in ids}


def test_every_type_the_module_names_resolves():
    hints = 0
    for value in vars(_operations).values():
        if isinstance(value, type) and typing.is_typeddict(value):
            hints += len(typing.get_type_hints(value))
    for _name, function in inspect.getmembers(_operations.Operations, inspect.isfunction):
        hints += len(typing.get_type_hints(function, vars(_operations)))
    assert hints > 500


def test_the_generated_signature_types_path_query_and_body():
    create = inspect.signature(Client.rounds_gold_resolve_create)
    assert list(create.parameters) == ["self", "round_id", "item_id", "body"]
    listing = inspect.signature(Client.assignments_list)
    assert all(
        p.kind is p.KEYWORD_ONLY and p.default is None for n, p in listing.parameters.items() if n != "self"
    )
    hints = typing.get_type_hints(Client.assignments_list, vars(_operations))
    assert typing.get_args(hints["status"])[0] == _operations.AssignmentsListStatus
    assert hints["return"] == _operations.PaginatedAssignmentOutList
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
    text = generate.render(SMALL)
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
        typing.get_type_hints(module.Operations.things_touch, vars(module))
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
    text = generate.render(schema)
    assert "    held: NotRequired[BoxHeld]\n" in text
    alias = "BoxHeld = (\n" + "".join(f"    {'| ' if i else ''}{n}\n" for i, n in enumerate([*names, "None"]))
    assert alias + ")\n\n\nclass Operations(ABC):" in text  # after the classes it names, as ruff wraps it
    assert all(len(line) <= generate.WIDTH for line in text.splitlines())


def test_the_command_writes_checks_and_refuses_an_unreadable_schema(tmp_path, capsys):
    saved, out = tmp_path / "schema.json", tmp_path / "ops.py"
    saved.write_text(json.dumps(SMALL))
    assert generate.main(["--schema", str(saved), "--output", str(out)]) == 0
    assert out.read_text() == generate.render(SMALL)
    assert generate.main(["--schema", str(saved), "--output", str(out), "--check"]) == 0
    out.write_text("stale")
    assert generate.main(["--schema", str(saved), "--output", str(out), "--check"]) == 1
    assert out.read_text() == "stale" and "run python -m nsmclient.generate" in capsys.readouterr().err
    saved.write_text("{not json")
    assert generate.main(["--schema", str(saved), "--output", str(out)]) == 2
    assert f"cannot read the schema {saved}" in capsys.readouterr().err
