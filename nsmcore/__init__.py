"""nsmcore: the NSM emotion explication pathway as a plain Python library (no Django).

text --parser--> explication --mapper--> label or typed abstention
                      +--renderer--> prime-language lines (checked by the NLI verifier)
"""

from nsmcore.counterfactual import counterfactual
from nsmcore.evaluation import evaluate, route_items, routed_from_codes
from nsmcore.evaluation_report import EvaluationError, EvaluationReport, clopper_pearson
from nsmcore.grammar import check_line, is_legal_line
from nsmcore.legality import check, is_legal
from nsmcore.mapper import (
    ABSTAIN,
    ABSTENTION_TYPES,
    Routing,
    RuleSet,
    RuleSetError,
    encode,
    load_rule_set,
    route,
    route_batch,
    route_codes,
)
from nsmcore.render import RENDERER_VERSION, Line, render
from nsmcore.schema import (
    SLOT_NAMES,
    SLOTS,
    SPACE_SIZE,
    Explication,
    ExplicationError,
    SchemaProblem,
)
from nsmcore.scoring import distribution, pivotal_slots, score, score_masks
from nsmcore.space import regions

__version__ = "0.1.0"

__all__ = [
    "ABSTAIN",
    "ABSTENTION_TYPES",
    "RENDERER_VERSION",
    "SLOTS",
    "SLOT_NAMES",
    "SPACE_SIZE",
    "EvaluationError",
    "EvaluationReport",
    "Explication",
    "ExplicationError",
    "Line",
    "Routing",
    "RuleSet",
    "RuleSetError",
    "SchemaProblem",
    "check",
    "check_line",
    "clopper_pearson",
    "counterfactual",
    "distribution",
    "encode",
    "evaluate",
    "is_legal",
    "is_legal_line",
    "load_rule_set",
    "pivotal_slots",
    "regions",
    "render",
    "route",
    "route_batch",
    "route_codes",
    "route_items",
    "routed_from_codes",
    "score",
    "score_masks",
]
