"""The house's floors: nsmcore at the ground, then rules, annotator, registry, the jobs machinery,
the feature apps (predictions, adjudication, discussion, profiles, contrasts, verification,
training, learning, quality, exports, webhooks) and
server (running the processes); a module imports only from its own floor
or below (inside functions too), and no modules import each other in a circle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from django.conf import settings

LAYERS = (
    "nsmcore", "rules", "annotator", "registry", "jobs", "predictions", "adjudication", "discussion",
    "profiles", "contrasts", "verification", "training", "learning", "quality", "exports", "webhooks",
    "server",
)  # fmt: skip


def _get_model(node: ast.AST) -> str:
    """The app a call ``get_model("app", "Model")`` or ``get_model("app.Model")`` reads, else ""."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)):
        return ""
    name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
    first = node.args[0] if node.args else None
    if name != "get_model" or not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return ""
    return first.value.split(".")[0]


def import_graph() -> dict[str, set[str]]:
    root = Path(settings.BASE_DIR)
    modules: dict[str, Path] = {}
    for app in LAYERS:
        for path in (root / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            name = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
            modules[name] = path
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif _get_model(node):  # apps.get_model("app", "Model"): an import by another name
                targets = [f"{_get_model(node)}.models"]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges[name].add(target)
    return edges


def floor(module: str) -> int:
    return LAYERS.index(module.split(".")[0])


def test_no_module_imports_from_a_higher_floor():
    upward = {(a, b) for a, targets in import_graph().items() for b in targets if floor(b) > floor(a)}
    assert upward == set(), "imports from a higher floor"


def test_no_modules_import_each_other_in_a_circle():
    edges = import_graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(edges[module]):
            if state.get(target) == 1:
                circles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert circles == [], circles


def test_the_ground_floor_imports_no_app():
    assert not [(a, b) for a, targets in import_graph().items() if a.startswith("nsmcore") for b in targets
                if not b.startswith("nsmcore")]  # fmt: skip


def test_the_jobs_machinery_names_no_kind():
    """jobs/ runs whatever kinds the feature apps register: none of its modules names one, so adding
    a kind touches only its own app."""
    from jobs.kinds import kinds

    names = set(kinds())  # every declared kind, imported
    assert {"prefill", "verify", "train", "export", "rawexport", "ranking", "retrain", "simulate"} <= names
    root = Path(settings.BASE_DIR) / "jobs"
    named = sorted(
        f"{path.relative_to(root)}:{node.lineno}: {node.value!r}"
        for path in root.rglob("*.py")
        if "migrations" not in path.parts
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and node.value in names
    )
    # nor do its templates compare a job's kind with a name (a kind's page says what it adds:
    # status_template, form_template, results_page)
    templates = Path(settings.BASE_DIR) / "templates" / "jobs"
    named += sorted(
        f"templates/jobs/{path.name}: {name!r}"
        for path in templates.glob("*.html")
        for name in names
        if re.search(rf"[\"']{name}[\"']", path.read_text())
    )
    assert named == []


def test_the_apps_import_at_module_level():
    """The apps import each other at the top of a module, where a reader sees them; only an app's
    ``ready`` imports inside a function (the modules that register its job kinds). Libraries a
    process may never need (torch, transformers) are another matter: they load when used."""
    root = Path(settings.BASE_DIR)
    hidden = []
    for app in LAYERS[1:]:
        for path in (root / app).rglob("*.py"):
            if "migrations" in path.parts or path.name == "apps.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    for inner in ast.walk(node):
                        if isinstance(inner, ast.Import):
                            names = [alias.name for alias in inner.names]
                        elif isinstance(inner, ast.ImportFrom) and inner.level == 0:
                            names = [inner.module or ""]
                        else:
                            continue
                        if any(name.split(".")[0] in LAYERS for name in names):
                            hidden.append(f"{path.relative_to(root)}:{inner.lineno}")
    assert hidden == []
