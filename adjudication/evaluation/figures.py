"""The paper's evaluation suite for a round's passes, read from the database and computed by
``nsmcore.evaluation`` (issue 15; docs/evaluation.md).

A pass is named by a stable key usable in addresses, the API and the shell:

- ``annotator:<username>``: that annotator's submitted annotations in the round;
- ``parser:<name>``: that parser's newest prediction for each of the round's items (an
  unreadable or illegal prediction is data: it abstains as illegal);
- ``gold``: the round's resolved gold, construal 1. An item kept with a second construal is
  evaluated on its first and carries the ``two-construals`` flag, so the flag rate counts it.

Each item is scored against its reference label (``Item.reference_label``); the tier is the item
set's (the round's, or the one given), the rule set the active one. Reports are kept in Django's
cache under the pass's data version, the rule set hash and the options.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Max, QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from adjudication.agreement.analysis import round_signature
from adjudication.models import GoldConstrual, GoldItem
from annotator.csv_cells import fixed
from annotator.models import SLOT_FIELDS, Annotation, Assignment, Item, ItemSet, ParserPrediction, Round
from annotator.selectors import read_from
from annotator.versions import round_version
from nsmcore import charts
from nsmcore.evaluation import (
    DEFAULT_SWAPS,
    ROUTED,
    RoutedItems,
    correct_by_id,
    evaluate,
    order_correct_counts,
    random_orders,
    route_items,
)
from nsmcore.evaluation_report import EvaluationError, EvaluationReport, Proportion
from nsmcore.evaluation_tables import FourCell, four_cell
from nsmcore.mapper import RuleSet
from rules.rulesets import active_rule_set

ANNOTATOR, PARSER, GOLD = "annotator", "parser", "gold"
MAX_ORDERS = 5000
DEFAULT_ORDERS = 1000
CACHE_SECONDS = 24 * 3600
TABLES = (
    "headline", "per_emotion", "confusion", "flows", "overrides", "flags", "scoring", "sensitivity",
    "slot_labels",
)  # fmt: skip


class EvaluationRequestError(ValueError):
    """A bad pass key, item set or option: the message names it (a 400, or exit 2)."""


@dataclass(frozen=True)
class EvalPass:
    key: str
    kind: str
    name: str

    @property
    def label(self) -> str:
        """The pass as the page names it, in the reader's language (evaluations are cached across
        languages, so the label is made when read)."""
        if self.kind == ANNOTATOR:
            return _("annotator %(name)s") % {"name": self.name}
        if self.kind == PARSER:
            return _("parser %(name)s") % {"name": self.name}
        return _("gold (construal 1)")


@dataclass(frozen=True)
class Options:
    orders: int = DEFAULT_ORDERS
    seed: int = 0
    swaps: tuple[tuple[str, str], ...] = DEFAULT_SWAPS
    decay: float = 0.5

    def signature(self) -> str:
        swaps = ",".join(f"{a}:{b}" for a, b in self.swaps)
        return f"o{self.orders}:s{self.seed}:w{swaps}:d{self.decay!r}"

    def as_query(self) -> dict[str, Any]:
        return {
            "orders": self.orders,
            "seed": self.seed,
            "swap": [f"{a}:{b}" for a, b in self.swaps],
            "decay": self.decay,
        }


def options_from(params: Mapping[str, Any], rule_set: RuleSet, *, max_orders: int = MAX_ORDERS) -> Options:
    """Options from request parameters (a QueryDict or a dict of lists/strings); a bad value
    raises EvaluationRequestError naming the parameter."""

    def one(name: str) -> str | None:
        value = params.get(name)
        if isinstance(value, list | tuple):
            value = value[-1] if value else None
        return None if value in (None, "") else str(value)

    def integer(name: str, default: int, lo: int, hi: int | None) -> int:
        raw = one(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise EvaluationRequestError(
                _("%(name)s must be a whole number, got %(raw)s") % {"name": name, "raw": repr(raw)}
            ) from None
        if value < lo or (hi is not None and value > hi):
            if hi is not None:
                message = _("%(name)s must be between %(lo)s and %(hi)s, got %(value)s")
            else:
                message = _("%(name)s must be at least %(lo)s, got %(value)s")
            raise EvaluationRequestError(message % {"name": name, "lo": lo, "hi": hi, "value": value})
        return value

    orders = integer("orders", DEFAULT_ORDERS, 0, max_orders)
    seed = integer("seed", 0, 0, 2**32 - 1)
    raw_decay = one("decay")
    decay = 0.5
    if raw_decay is not None:
        try:
            decay = float(raw_decay)
        except ValueError:
            raise EvaluationRequestError(
                _("decay must be a number in (0, 1], got %(raw)s") % {"raw": repr(raw_decay)}
            ) from None
        if not 0 < decay <= 1:
            raise EvaluationRequestError(_("decay must be in (0, 1], got %(raw)s") % {"raw": raw_decay})
    getlist = getattr(params, "getlist", None)
    raw_swaps = getlist("swap") if getlist else params.get("swap") or []
    if isinstance(raw_swaps, str):
        raw_swaps = [raw_swaps]
    raw_swaps = [s for s in raw_swaps if s]
    swaps = []
    for spec in raw_swaps:
        a, sep, b = spec.partition(":")
        if not sep or not a or not b or a == b:
            raise EvaluationRequestError(
                _("swap %(spec)s: expected two different emotions as a:b, e.g. guilt:shame")
                % {"spec": repr(spec)}
            )
        for e in (a, b):
            if e not in rule_set.emotions:
                raise EvaluationRequestError(
                    _("swap %(spec)s: %(emotion)s is not a rule of v%(version)s (%(emotions)s)")
                    % {
                        "spec": repr(spec),
                        "emotion": repr(e),
                        "version": rule_set.version,
                        "emotions": ", ".join(rule_set.emotions),
                    }
                )
        swaps.append((a, b))
    return Options(orders, seed, tuple(swaps) if raw_swaps else DEFAULT_SWAPS, decay)


# Passes ----------------------------------------------------------------------------------------


def round_items(round_: Round) -> QuerySet[Item]:
    return Item.objects.filter(item_sets=round_.item_set)


def evaluation_passes(round_: Round) -> list[EvalPass]:
    """The round's passes: its annotators (by username), the parsers with predictions for its
    items, and gold when some of it is resolved."""
    out = []
    usernames = (
        Assignment.objects.filter(round=round_, status=Assignment.Status.DONE, control=False)
        .values_list("annotator__username", flat=True)
        .distinct()
        .order_by("annotator__username")
    )
    out += [EvalPass(f"{ANNOTATOR}:{u}", ANNOTATOR, u) for u in usernames]
    parsers = (
        ParserPrediction.objects.filter(item__in=round_items(round_))
        .values_list("parser", flat=True)
        .distinct()
        .order_by("parser")
    )
    out += [EvalPass(f"{PARSER}:{p}", PARSER, p) for p in parsers]
    if GoldItem.objects.filter(round=round_, status=GoldItem.Status.RESOLVED).exists():
        out.append(EvalPass(GOLD, GOLD, GOLD))
    return out


def item_set_named(name: str) -> ItemSet | None:
    """The item set of that name (None for no name: the round's own); EvaluationRequestError if
    there is none."""
    if not name:
        return None
    found = ItemSet.objects.filter(name=name).first()
    if found is None:
        raise EvaluationRequestError(
            _("item_set %(name)s: there is no item set of that name") % {"name": repr(name)}
        )
    return found


def pass_named(round_: Round, key: str) -> EvalPass:
    """The pass with this key; EvaluationRequestError naming it and the round's passes if none."""
    passes = evaluation_passes(round_)
    for p in passes:
        if p.key == key:
            return p
    known = ", ".join(p.key for p in passes) or _("none yet")
    raise EvaluationRequestError(
        _("pass %(pass)s is not a pass of round %(round)s; its passes: %(known)s")
        % {"pass": repr(key), "round": round_.name, "known": known}
    )


def _explication(values: Mapping[str, Any], residue: str, notes: str) -> dict[str, Any]:
    return {
        **{name: values.get(name) for name in SLOT_FIELDS},
        "residue": residue or "",
        "notes": notes or "",
    }


def label_distribution(raw_output: str) -> dict[str, float] | None:
    """A prediction's own label distribution, from the raw output of a parser that decodes inside
    the rules (nsmcore.decoding: ``label_mass``); None for one that has none (lexical, servers)."""
    if not raw_output or not raw_output.startswith("{"):
        return None
    try:
        found = json.loads(raw_output).get("label_mass")
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, dict) else None


def pass_items(round_: Round, p: EvalPass, item_set: ItemSet | None = None) -> list[dict[str, Any]]:
    """The pass's items as nsmcore.evaluation reads them (explication, reference label, id,
    flags), in item order; restricted to ``item_set``'s items when given."""
    scope = Item.objects.filter(item_sets=item_set) if item_set is not None else round_items(round_)
    out: list[dict[str, Any]] = []
    if p.kind == ANNOTATOR:
        rows = (
            Annotation.objects.filter(
                assignment__round=round_,
                assignment__status=Assignment.Status.DONE,
                assignment__annotator__username=p.name,
                assignment__item__in=scope,
                assignment__control=False,
            )
            .order_by("assignment__item_id")
            .values_list(
                "assignment__item__source_id",
                "assignment__item__reference_label",
                "residue",
                "notes",
                "flags",
                *SLOT_FIELDS,
            )
        )
        for source_id, label, residue, notes, flags, *slots in rows:
            explication = _explication(dict(zip(SLOT_FIELDS, slots, strict=True)), residue, notes)
            out.append({"id": source_id, "reference_label": label, "flags": list(flags or []),
                        "explication": explication})  # fmt: skip
    elif p.kind == PARSER:
        rows = (
            read_from(ParserPrediction.objects.filter(parser=p.name, item__in=scope), round_.text_field)
            .order_by("item_id", "-created_at", "-id")
            .values_list("item_id", "item__source_id", "item__reference_label", "explication", "raw_output")
        )
        seen: set[int] = set()
        for item_id, source_id, label, explication, raw in rows:
            if item_id in seen:  # an older version's prediction
                continue
            seen.add(item_id)
            item = {"id": source_id, "reference_label": label, "explication": explication}
            distribution = label_distribution(raw)
            if distribution is not None:  # scored beside the mapper's schemes when every item has one
                item["label_distribution"] = distribution
            out.append(item)
    else:
        construals = (
            GoldConstrual.objects.filter(
                gold__round=round_, gold__status=GoldItem.Status.RESOLVED, gold__item__in=scope
            )
            .order_by("gold__item_id", "index")
            .values_list("gold__item_id", "gold__item__source_id", "gold__item__reference_label", "index",
                         "slots", "residue", "notes")
        )  # fmt: skip
        by_item: dict[int, dict[str, Any]] = {}
        for item_id, source_id, label, index, slots, residue, notes in construals:
            if index == 1:
                by_item[item_id] = {"id": source_id, "reference_label": label, "flags": [],
                                    "explication": _explication(slots, residue, notes)}  # fmt: skip
            elif item_id in by_item:
                by_item[item_id]["flags"] = ["two-construals"]
        out = list(by_item.values())
    return out


def pass_version(round_: Round, p: EvalPass) -> str:
    """Changes whenever the pass's data may have: the round's annotation version for an
    annotator, the predictions' count and newest for a parser, the gold's for gold."""
    if p.kind == ANNOTATOR:
        return round_version(round_.pk, round_signature)
    if p.kind == PARSER:
        agg = read_from(
            ParserPrediction.objects.filter(parser=p.name, item__in=round_items(round_)), round_.text_field
        ).aggregate(n=Count("id"), last=Max("created_at"), top=Max("id"))
    else:
        agg = GoldItem.objects.filter(round=round_).aggregate(
            n=Count("construals"), last=Max("updated_at"), top=Max("construals__id")
        )
    return f"{agg['n']}:{agg['last'].isoformat() if agg['last'] else '-'}:{agg['top']}"


# Reports ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PassEvaluation:
    """A pass's report, with what the page needs beside it: the item set it is scored on, how
    many of that set's items the pass covers, and each random order's accuracy (the strip)."""

    round_name: str
    pass_: EvalPass
    item_set: str
    item_set_size: int
    report: EvaluationReport | None  # None: the pass has no items in the item set
    order_accuracies: tuple[float, ...] = field(default=())
    correct: dict[str, bool] = field(default_factory=dict)  # per item id: routed to its reference

    @property
    def items(self) -> int:
        return self.report.evidence.n if self.report else 0


def _order_accuracies(routed: RoutedItems, options: Options) -> tuple[float, ...]:
    """Accuracy under each of the report's random orders (the same seed draws the same orders),
    for the strip; the report itself keeps only their min, mean and max."""
    if not options.orders:
        return ()
    routable = routed.types == ROUTED
    k = len(routed.rule_set.emotions)
    orders = random_orders(k, options.orders, options.seed)
    hits = order_correct_counts(routed.masks[routable], routed.gold[routable].astype(np.int64), orders, k)
    return tuple(float(h) / len(routed) for h in hits.tolist())


def pass_evaluation(
    round_: Round,
    pass_key: str,
    *,
    options: Options | None = None,
    item_set: ItemSet | None = None,
    rule_set: RuleSet | None = None,
) -> PassEvaluation:
    """The pass's evaluation (cached until its data, the rule set or the options change).
    EvaluationRequestError for a bad pass key or an item that cannot be evaluated."""
    rule_set = rule_set or active_rule_set()
    options = options or Options()
    p = pass_named(round_, pass_key)
    scope = item_set or round_.item_set
    parts = (round_.pk, scope.pk, p.key, pass_version(round_, p), rule_set.content_hash, options.signature())
    key = "nsm:evaluation:" + hashlib.sha256(repr(parts).encode()).hexdigest()
    found = cache.get(key)
    if found is not None:
        return found
    items = pass_items(round_, p, scope if item_set is not None else None)
    report = None
    accuracies: tuple[float, ...] = ()
    correct: dict[str, bool] = {}
    if items:
        try:
            routed = route_items(items, rule_set)
            report = evaluate(
                routed,
                tier=scope.tier,
                pass_name=f"{round_.name}/{p.key}",
                orders=options.orders,
                seed=options.seed,
                swaps=options.swaps,
                decay=options.decay,
            )
        except EvaluationError as error:
            raise EvaluationRequestError(
                _("pass %(pass)s: %(error)s") % {"pass": p.key, "error": error}
            ) from None
        accuracies = _order_accuracies(routed, options)
        correct = correct_by_id(routed)
    result = PassEvaluation(round_.name, p, scope.name, scope.size, report, accuracies, correct)
    cache.set(key, result, CACHE_SECONDS)
    return result


# Tables (the page's, the CSV downloads', the command's comparison) -----------------------------


def _num(x: float | None, digits: int = 4) -> Decimal | float | str:
    # a number, not text: a CSV keeps a negative figure numeric (annotator.csv_cells)
    return fixed(x, digits)


def _prop(p: Proportion) -> list[Any]:
    return [p.k, p.n, _num(p.value), _num(p.low), _num(p.high)]


PROP = ["k", "n", "value", "ci_low", "ci_high"]


def headline_rows(report: EvaluationReport) -> list[tuple[str, Proportion]]:
    h = report.headline
    # figure names, not prose: the CSV and the command carry them as they are; the page translates them
    rows = [(gettext_noop("accuracy"), h.accuracy), (gettext_noop("abstention"), h.abstention)]
    rows += [(f"abstention: {t}", p) for t, p in h.abstention_by_type.items()]
    rows += [(gettext_noop("selective accuracy"), h.selective_accuracy)]
    # set-valued: the reference among the rules that fired on a routed item (the paper's .521 row)
    rows += [(gettext_noop("set-valued accuracy"), h.set_accuracy)]
    rows += [(gettext_noop("set-valued selective accuracy"), h.set_selective_accuracy)]
    return rows


def report_table(report: EvaluationReport, table: str) -> tuple[list[str], list[list[Any]]]:
    """One table of the report as a CSV header and rows; every row carries the evidence."""
    ev = report.evidence
    evidence = [ev.tier, ev.n, ev.rule_set_version, ev.rule_set_hash, ev.pass_name]
    evidence_header = ["tier", "items", "rule_set_version", "rule_set_hash", "pass"]
    if table == "headline":
        header = ["figure", *PROP]
        rows = [[name, *_prop(p)] for name, p in headline_rows(report)]
    elif table == "per_emotion":
        header = ["emotion", "n", "routed", *(f"accuracy_{c}" for c in PROP[:1] + PROP[2:]),
                  *(f"selective_{c}" for c in PROP[:1] + PROP[2:])]  # fmt: skip
        rows = [
            [r.emotion, r.n, r.routed, r.accuracy.k, *_prop(r.accuracy)[2:], r.selective_accuracy.k,
             *_prop(r.selective_accuracy)[2:]]
            for r in report.per_emotion.rows
        ]  # fmt: skip
    elif table == "confusion":
        c = report.confusion
        header = ["reference_label", *c.columns]
        rows = [[label, *counts] for label, counts in zip(c.rows, c.counts, strict=True)]
    elif table == "flows":
        header = ["reference_label", "routed", "n", "share_of_reference"]
        rows = [[f.gold, f.routed, f.n, _num(f.share_of_gold)] for f in report.flows.flows]
    elif table == "overrides":
        m = report.multi_rule
        header = ["winner", "overruled", "n", "abstained"]
        rows = [[o.winner, o.overruled, o.n, o.abstained] for o in m.overrides]
    elif table == "slot_labels":
        t = report.slot_labels
        header = ["slot", "value", "n", *(t.columns if t else ())]
        rows = [[r.slot, r.value, r.n, *r.counts] for r in t.rows] if t else []
    elif table == "flags":
        f = report.flag_rates
        header = ["figure", *PROP]
        rows = [["residue", *_prop(f.residue)], *[[f"flag: {n}", *_prop(p)] for n, p in f.flags.items()]]
        rows.append(["multi-rule", *_prop(report.multi_rule.multi_rule)])
    elif table == "scoring":
        d = report.distributional
        # top1/top3: an abstention is a miss; the *_uniform pair is the paper's convention
        header = ["scheme", "decay", "alpha", "nll", "brier", "top1", "top3", "coverage", "set_accuracy",
                  "top1_uniform", "top3_uniform"]  # fmt: skip
        rows = [[s.scheme, d.decay, d.alpha, _num(s.nll), _num(s.brier), _num(s.top1), _num(s.top3),
                 _num(s.coverage), _num(s.set_accuracy), _num(s.top1_uniform), _num(s.top3_uniform)]
                for s in d.scores]  # fmt: skip
    elif table == "sensitivity":
        s = report.sensitivity
        header = ["order", *PROP]
        rows = [[o.name, *_prop(o.accuracy)] for o in (s.canonical, *s.swaps)] if s else []
        if s and s.orders:
            rows.append([f"{s.orders} random orders, seed {s.seed}: min", "", "", _num(s.random_min), "", ""])
            rows.append(
                [f"{s.orders} random orders, seed {s.seed}: mean", "", "", _num(s.random_mean), "", ""]
            )
            rows.append([f"{s.orders} random orders, seed {s.seed}: max", "", "", _num(s.random_max), "", ""])
    else:
        raise EvaluationRequestError(
            _("table %(table)s is not one of: %(tables)s, compare, split")
            % {"table": repr(table), "tables": ", ".join(TABLES)}
        )
    return [*header, *evidence_header], [[*row, *evidence] for row in rows]


def compare_rows(a: EvaluationReport, b: EvaluationReport) -> list[dict[str, Any]]:
    """The headline figures of two passes side by side, with the difference (a - b)."""
    out = []
    for (name, pa), (_other, pb) in zip(headline_rows(a), headline_rows(b), strict=True):
        diff = None if pa.value is None or pb.value is None else pa.value - pb.value
        out.append({"figure": name, "a": pa, "b": pb, "difference": diff})
    return out


def paired_split(a: PassEvaluation, b: PassEvaluation) -> FourCell | None:
    """Two passes on the items both score: both right, only A, only B, both wrong, and McNemar's
    exact p (nsmcore.evaluation_tables.four_cell); None when either has no item."""
    if not a.correct or not b.correct:
        return None
    return four_cell(a.correct, b.correct)


def compare_table(a: EvaluationReport, b: EvaluationReport) -> tuple[list[str], list[list[Any]]]:
    header = ["figure", *(f"a_{c}" for c in PROP), *(f"b_{c}" for c in PROP), "difference",
              "a_pass", "b_pass", "a_tier", "b_tier", "rule_set_version"]  # fmt: skip
    rows = [
        [r["figure"], *_prop(r["a"]), *_prop(r["b"]), _num(r["difference"]), a.evidence.pass_name,
         b.evidence.pass_name, a.evidence.tier, b.evidence.tier, a.evidence.rule_set_version]
        for r in compare_rows(a, b)
    ]  # fmt: skip
    return header, rows


def split_table(
    split: FourCell, a: EvaluationReport, b: EvaluationReport
) -> tuple[list[str], list[list[Any]]]:
    """The paired split as one CSV row, with both passes named."""
    header = ["items", "both_right", "only_a", "only_b", "both_wrong", "mcnemar_exact_p", "a_pass", "b_pass",
              "rule_set_version"]  # fmt: skip
    # p in significant digits: four decimals would write silver-156's 4.0e-05 as 0.0000
    row = [split.n, split.both, split.only_a, split.only_b, split.neither, f"{split.p_value:.4g}",
           a.evidence.pass_name, b.evidence.pass_name, a.evidence.rule_set_version]  # fmt: skip
    return header, [row]


def split_text(split: FourCell) -> str:
    return (
        f"\npaired on the {split.n} items both score: both right {split.both}, only A {split.only_a}, "
        f"only B {split.only_b}, both wrong {split.neither}; McNemar's exact p = {split.p_value:.4g}\n"
    )


def compare_text(a: EvaluationReport, b: EvaluationReport) -> str:
    """The headline figures of two passes and their difference, as a plain-text table."""
    out = [f"comparison: A = {a.evidence.label()}", f"            B = {b.evidence.label()}", ""]
    out.append(f"{'figure':32}{'A':>22}{'B':>22}{'A - B':>9}")
    for r in compare_rows(a, b):

        def cell(p: Proportion) -> str:
            return "-" if p.value is None else f"{p.value:.3f} ({p.k}/{p.n})"

        diff = "-" if r["difference"] is None else f"{r['difference']:+.3f}"
        out.append(f"  {r['figure']:30}{cell(r['a']):>22}{cell(r['b']):>22}{diff:>9}")
    return "\n".join(out) + "\n"


# Charts (geometry from nsmcore.charts; the page draws it) ---------------------------------------


def confusion_chart(report: EvaluationReport) -> dict[str, Any]:
    """The confusion heatmap, coloured by row share, each cell carrying its count."""
    c = report.confusion
    rates = [r if r is not None else [0.0] * len(c.columns) for r in c.rates]
    chart = charts.heatmap(rates, rows=list(c.rows), columns=list(c.columns), vmax=1.0, cell=40.0)
    counts = [n for row in c.counts for n in row]
    chart["cells"] = [{**cell, "count": n} for cell, n in zip(chart["cells"], counts, strict=True)]
    return chart


def per_emotion_chart(report: EvaluationReport, *, selective: bool = False) -> dict[str, Any]:
    """Per-emotion accuracy (or, ``selective``, accuracy over the routed items: the paper's
    figure) as bars with their exact intervals as whiskers (axis 0 to 1)."""
    rows = report.per_emotion.rows
    shown = [r.selective_accuracy if selective else r.accuracy for r in rows]
    bars = [charts.Bar(r.emotion, p.value or 0.0, p.low, p.high) for r, p in zip(rows, shown, strict=True)]
    chart = charts.whisker_bars(bars, axis_max=1.0, bar_width=30.0, gap=14.0, label_room=70.0)
    chart["bars"] = [
        {**b, "n": p.n, "k": p.k, "empty": p.n == 0} for b, p in zip(chart["bars"], shown, strict=True)
    ]
    return chart


def sensitivity_chart(evaluation: PassEvaluation) -> dict[str, Any] | None:
    s = evaluation.report.sensitivity if evaluation.report else None
    if s is None:
        return None
    marks = [("canonical", s.canonical.accuracy.value or 0.0)]
    marks += [(sw.name, sw.accuracy.value or 0.0) for sw in s.swaps]
    return charts.strip_chart(evaluation.order_accuracies, marks=marks)
