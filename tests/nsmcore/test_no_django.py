"""nsmcore is a plain library: no module may import Django, directly or through another."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_nsmcore_module_imports_django():
    offenders = []
    for path in (ROOT / "nsmcore").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{path.name}: {n}" for n in names if n.split(".")[0] in {"django", "rest_framework"}
            ]
    assert offenders == []


def test_importing_all_of_nsmcore_loads_no_django():
    code = (
        "import sys, pkgutil, importlib, nsmcore\n"
        "for m in pkgutil.walk_packages(nsmcore.__path__, 'nsmcore.'):\n"
        "    if not m.name.endswith('__main__'):  # __main__ runs the CLI\n"
        "        importlib.import_module(m.name)\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] == 'django'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "[]"
