"""nsmcore: the NSM emotion explication pathway as a plain Python library (no Django).

text --parser--> explication --mapper--> label or typed abstention
                      +--renderer--> prime-language lines (checked by the NLI verifier)

The names below are imported on first use (PEP 562): ``import nsmcore.parsers`` or a process that
only routes labels does not load the evaluation's statistics (scipy, about 25 MiB with what it
pulls in) or any module it never calls (issue 24's memory goal).
"""

from __future__ import annotations

import importlib

# Two names are also their module's name: importing the submodule (``from nsmcore.render import
# Line``) would set the package's attribute to the module and hide the function, so these two
# are bound now (neither loads scipy).
from nsmcore.counterfactual import counterfactual as counterfactual
from nsmcore.render import render as render

__version__ = "0.1.0"

#: each public name and the module that defines it
_EXPORTS = {
    "counterfactual": "counterfactual",
    "evaluate": "evaluation",
    "route_items": "evaluation",
    "routed_from_codes": "evaluation",
    "EvaluationError": "evaluation_report",
    "EvaluationReport": "evaluation_report",
    "clopper_pearson": "evaluation_report",
    "check_line": "grammar",
    "is_legal_line": "grammar",
    "check": "legality",
    "is_legal": "legality",
    "ABSTAIN": "mapper",
    "ABSTENTION_TYPES": "mapper",
    "Routing": "mapper",
    "RuleSet": "mapper",
    "RuleSetError": "mapper",
    "encode": "mapper",
    "load_rule_set": "mapper",
    "route": "mapper",
    "route_batch": "mapper",
    "route_codes": "mapper",
    "RENDERER_VERSION": "render",
    "Line": "render",
    "render": "render",
    "SLOT_NAMES": "schema",
    "SLOTS": "schema",
    "SPACE_SIZE": "schema",
    "Explication": "schema",
    "ExplicationError": "schema",
    "SchemaProblem": "schema",
    "distribution": "scoring",
    "pivotal_slots": "scoring",
    "score": "scoring",
    "score_masks": "scoring",
    "regions": "space",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'nsmcore' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"nsmcore.{module}"), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
