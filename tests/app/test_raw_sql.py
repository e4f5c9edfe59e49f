"""Hand-written SQL lives only in an app's queries.py, behind named functions whose docstrings give
the benchmark figure that justifies them; everywhere else the apps use the ORM."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from django.conf import settings

from tests.app.test_layers import LAYERS

#: every app (the ground floor, nsmcore, runs no SQL)
APPS = LAYERS[1:]
# a cursor, a database vendor branch, or SQL handed to the database by hand; any use of the
# connection object but closing it (a thread gives its connection back to the pool: no SQL in that)
RAW = re.compile(r"\.cursor\(|\.vendor\b|\.raw\(|RawSQL|\.extra\(|executemany|\bconnection\.(?!close\(\))")


def app_modules() -> list[Path]:
    root = Path(settings.BASE_DIR)
    return [p for app in APPS for p in (root / app).rglob("*.py") if "migrations" not in p.parts]


def test_raw_sql_only_in_the_queries_modules():
    found = [
        f"{path.relative_to(settings.BASE_DIR)}:{n}: {line.strip()}"
        for path in app_modules()
        if path.name != "queries.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if RAW.search(line)
    ]
    assert found == []


def test_each_queries_function_names_its_benchmark_figure():
    queries = [p for p in app_modules() if p.name == "queries.py"]
    assert {p.parent.name for p in queries} == {"annotator", "adjudication", "exports"}
    for path in queries:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                doc = ast.get_docstring(node) or ""
                assert "Justified by the" in doc and re.search(r"\d s\b|\d ms\b", doc), (
                    f"{path.name}:{node.name} says no benchmark figure"
                )
