"""A parser pass against the round's gold on a held-out item set, beside the baselines (issue 16;
docs/evaluation.md, "A parser against gold").

For a round, a parser pass (``parser:<name>``) and an item set (``heldout``, default the round's
own), the *scored* items are the held-out items with the round's resolved gold (construal 1) and a
prediction of the parser (its newest); items without gold, or without a prediction, are counted
and said. On the scored items:

- per slot: accuracy against gold (k/n, exact interval; a missing or out-of-set value is wrong)
  and Krippendorff's alpha of parser and gold as two coders (``nsmcore.agreement``; undefined,
  with the reason, when the slot shows no variation, never 0 or 1);
- the routed label against the items' reference labels: accuracy, abstention and selective
  accuracy (``nsmcore.evaluation``);
- the baselines on the same items: the label classifier (the round's text field) and the
  appraisal baseline (the 21 imported ratings), trained on the round's *other* items, those
  neither in the held-out set nor in any eval-tier item set, with their reference labels. They
  never abstain, so accuracy is their one figure. With fewer than two labels to learn, or a
  held-out item without its ratings, the row says so instead of a figure.

Legality (legal predictions / predictions) is over every held-out item the parser predicted,
gold or not. Results are kept in Django's cache under the predictions' and the gold's data
versions, the two item sets' and the eval tier's membership, the rule set hash and the round's
text field.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Max
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from adjudication.evaluation.figures import (
    CACHE_SECONDS,
    GOLD,
    PARSER,
    EvalPass,
    EvaluationRequestError,
    pass_named,
    pass_version,
)
from adjudication.models import GoldConstrual, GoldItem
from annotator.csv_cells import fixed
from annotator.models import Item, ItemSet, ItemSetMember, ParserPrediction, Round, text_in_field
from annotator.selectors import read_from
from nsmcore.agreement import MISSING, agreement
from nsmcore.baselines import APPRAISALS, BaselineError, train_appraisal_baseline, train_label_classifier
from nsmcore.evaluation import EvaluationError, Evidence, Proportion, evaluate, route_items
from nsmcore.legality import is_legal
from nsmcore.mapper import RuleSet
from nsmcore.schema import SLOT_NAMES, SLOTS, canonical_value
from registry.selectors import trained_ids
from rules.rulesets import active_rule_set

# names, not prose: the tables and the API carry them as they are; the page translates them
PATHWAY, LABEL_CLASSIFIER, APPRAISAL = (
    gettext_noop("parser pathway"),
    gettext_noop("label classifier"),
    gettext_noop("appraisal baseline"),
)
PARSER_TABLES = ("parser_slots", "parser_labels")
_INDEX = [{v: i for i, v in enumerate(s.values)} for s in SLOTS]


@dataclass(frozen=True)
class SlotRow:
    slot: str
    accuracy: Proportion
    alpha: float | None
    alpha_undefined: str  # why alpha is undefined; empty when defined
    alpha_low: float | None
    alpha_high: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "accuracy": self.accuracy.to_dict(),
            "alpha": self.alpha,
            "alpha_undefined": self.alpha_undefined,
            "alpha_ci": [self.alpha_low, self.alpha_high],
        }


@dataclass(frozen=True)
class LabelRow:
    """One pathway to the label on the scored items. ``accuracy`` is None when there is no
    figure (``note`` says why); abstention and selective accuracy are the parser pathway's only
    (a baseline never abstains). ``trained_on``: the baseline's training items."""

    model: str
    accuracy: Proportion | None
    abstention: Proportion | None = None
    selective_accuracy: Proportion | None = None
    trained_on: int | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        def d(p: Proportion | None) -> dict[str, Any] | None:
            return p.to_dict() if p is not None else None

        return {
            "model": self.model,
            "accuracy": d(self.accuracy),
            "abstention": d(self.abstention),
            "selective_accuracy": d(self.selective_accuracy),
            "trained_on": self.trained_on,
            "note": self.note,
        }


@dataclass(frozen=True)
class ParserVsGold:
    round_name: str
    pass_key: str
    held_out: str
    tier: str
    held_out_size: int
    scored: int
    without_gold: int
    without_prediction: int
    rule_set_version: str
    rule_set_hash: str
    slots: tuple[SlotRow, ...]
    legality: Proportion
    labels: tuple[LabelRow, ...]

    @property
    def evidence(self) -> Evidence:
        return Evidence(
            self.tier, self.scored, self.rule_set_version, self.rule_set_hash,
            f"{self.round_name}/{self.pass_key} vs gold on {self.held_out}",
        )  # fmt: skip

    def coverage(self) -> str:
        """What was scored of the held-out set, in words."""
        parts = [
            _("%(scored)s of the %(size)s items of %(held_out)s scored")
            % {"scored": self.scored, "size": self.held_out_size, "held_out": self.held_out}
        ]
        if self.without_gold:
            parts.append(
                _("%(n)s without resolved gold in round %(round)s")
                % {"n": self.without_gold, "round": self.round_name}
            )
        if self.without_prediction:
            parts.append(
                _("%(n)s with gold but no prediction of %(pass)s")
                % {"n": self.without_prediction, "pass": self.pass_key}
            )
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "evidence": self.evidence.to_dict(),
            "held_out": {"name": self.held_out, "tier": self.tier, "size": self.held_out_size},
            "scored": self.scored,
            "without_gold": self.without_gold,
            "without_prediction": self.without_prediction,
            "slots": [s.to_dict() for s in self.slots],
            "legality": self.legality.to_dict(),
            "labels": [r.to_dict() for r in self.labels],
        }


def heldout_named(name: str) -> ItemSet | None:
    """The held-out item set of that name (None for no name: the round's own);
    EvaluationRequestError naming it, and the eval-tier sets, if there is none."""
    if not name:
        return None
    found = ItemSet.objects.filter(name=name).first()
    if found is None:
        evals = ItemSet.objects.filter(tier=ItemSet.Tier.EVAL).order_by("name").values_list("name", flat=True)
        known = ", ".join(evals) or _("none")
        raise EvaluationRequestError(
            _("heldout %(name)s: there is no item set of that name; eval-tier sets: %(known)s")
            % {"name": repr(name), "known": known}
        )
    return found


def explication_codes(explication: Any) -> list[int]:
    """An explication's slot value indices (MISSING where a value is absent or out of its set)."""
    if not isinstance(explication, Mapping):
        return [MISSING] * len(SLOTS)
    out = []
    for s, name in enumerate(SLOT_NAMES):
        value = explication.get(name)
        out.append(
            _INDEX[s].get(canonical_value(name, value), MISSING) if isinstance(value, str) else MISSING
        )
    return out


def _membership(item_set: ItemSet) -> tuple[int, int | None]:
    agg = ItemSetMember.objects.filter(item_set=item_set).aggregate(n=Count("id"), top=Max("id"))
    return agg["n"], agg["top"]


def predictions_version(round_: Round, parser: str | Sequence[str], scope: ItemSet) -> tuple[Any, ...]:
    """Changes whenever a figure may: the parser's (or parsers') predictions for the held-out
    items, the round's gold, the membership of the two item sets and of the eval tier."""
    names = [parser] if isinstance(parser, str) else list(parser)
    predictions = read_from(
        ParserPrediction.objects.filter(parser__in=names, item__in=Item.objects.filter(item_sets=scope)),
        round_.text_field,
    )
    agg = predictions.aggregate(n=Count("id"), last=Max("created_at"), top=Max("id"))
    evals = ItemSetMember.objects.filter(item_set__tier=ItemSet.Tier.EVAL).aggregate(
        n=Count("id"), top=Max("id")
    )
    gold = pass_version(round_, EvalPass(GOLD, GOLD, GOLD))
    return (
        agg["n"], agg["last"].isoformat() if agg["last"] else "-", agg["top"], gold,
        _membership(scope), _membership(round_.item_set), evals["n"], evals["top"], round_.text_field,
    )  # fmt: skip


def parser_vs_gold(
    round_: Round, pass_key: str, *, heldout: ItemSet | None = None, rule_set: RuleSet | None = None
) -> ParserVsGold:
    """The parser pass against gold on the held-out items, beside the baselines (cached).
    EvaluationRequestError when the pass is not a parser pass of the round."""
    rule_set = rule_set or active_rule_set()
    p = pass_named(round_, pass_key)
    if p.kind != PARSER:
        raise EvaluationRequestError(
            _("pass %(pass)s is not a parser pass: parser-vs-gold needs parser:<name>") % {"pass": p.key}
        )
    scope = heldout or round_.item_set
    refuse_training_items(p.name, scope)
    parts = (round_.pk, scope.pk, p.key, predictions_version(round_, p.name, scope), rule_set.content_hash)
    key = "nsm:parser-vs-gold:" + hashlib.sha256(repr(parts).encode()).hexdigest()
    found = cache.get(key)
    if found is None:
        found = _compute(round_, p, scope, rule_set)
        cache.set(key, found, CACHE_SECONDS)
    return found


def refuse_training_items(parser: str, scope: ItemSet) -> None:
    """A parser scored on items it was trained on reads as perfect and means nothing: refuse,
    naming the items (a model that records no training items is not refused)."""
    trained = trained_ids(parser)
    if not trained:
        return
    held = list(Item.objects.filter(item_sets=scope).order_by("source_id").values_list("source", "source_id"))
    # a registry records (source, source_id) pairs; a model folder only the corpus ids
    qualified = isinstance(next(iter(trained)), tuple)
    overlap = [sid for source, sid in held if ((source, sid) if qualified else sid) in trained]
    if overlap:
        shown = ", ".join(overlap[:20])
        if len(overlap) > 20:
            shown = _("%(shown)s and %(n)s more") % {"shown": shown, "n": len(overlap) - 20}
        raise EvaluationRequestError(
            _(
                "parser %(parser)s was trained on %(n)s of the %(held)s held-out items of %(item_set)s: "
                "%(shown)s; evaluate it on items it has not seen (another eval-tier set), or train it again "
                "without them"
            )
            % {"parser": parser, "n": len(overlap), "held": len(held), "item_set": scope.name, "shown": shown}
        )


def resolved_gold(round_: Round, item_ids: Sequence[int]) -> dict[int, Any]:
    """{item id: the round's resolved gold explication (construal 1)} of those items that have one."""
    return dict(
        GoldConstrual.objects.filter(
            gold__round=round_, gold__status=GoldItem.Status.RESOLVED, index=1, gold__item_id__in=item_ids
        ).values_list("gold__item_id", "slots")
    )


def newest_predictions(parser: str, item_ids: Sequence[int], text_field: str) -> dict[int, Any]:
    """{item id: the parser's newest prediction's explication (None when unreadable)}, of those
    read from ``text_field`` (the round's) or from an unrecorded one."""
    predicted: dict[int, Any] = {}
    rows = (
        read_from(ParserPrediction.objects.filter(parser=parser, item_id__in=item_ids), text_field)
        .order_by("item_id", "-created_at", "-id")
        .values_list("item_id", "explication")
    )
    for item_id, explication in rows:
        predicted.setdefault(item_id, explication)  # the newest comes first
    return predicted


def _compute(round_: Round, p: EvalPass, scope: ItemSet, rule_set: RuleSet) -> ParserVsGold:
    held = list(
        Item.objects.filter(item_sets=scope)
        .order_by("id")
        .values_list("id", "source_id", "reference_label", "text", "masked_text", "appraisals")
    )
    held_ids = [row[0] for row in held]
    gold = resolved_gold(round_, held_ids)
    predicted = newest_predictions(p.name, held_ids, round_.text_field)
    scored = [row for row in held if row[0] in gold and row[0] in predicted]
    legality = Proportion.of(sum(is_legal(e) for e in predicted.values() if e is not None), len(predicted))
    slots = _slot_rows([gold[row[0]] for row in scored], [predicted[row[0]] for row in scored])
    items = [{"id": row[1], "reference_label": row[2], "explication": predicted[row[0]]} for row in scored]
    try:
        pathway = _pathway(items, rule_set, scope.tier, p.key)
    except EvaluationError as error:
        raise EvaluationRequestError(
            _("pass %(pass)s on %(item_set)s: %(error)s")
            % {"pass": p.key, "item_set": scope.name, "error": error}
        ) from None
    training = list(
        Item.objects.filter(item_sets=round_.item_set)
        .exclude(id__in=held_ids)
        .exclude(item_sets__tier=ItemSet.Tier.EVAL)
        .distinct()
        .order_by("id")
        .values_list("reference_label", "text", "masked_text", "appraisals")
    )
    baselines = _baselines(training, [row[2:] for row in scored], round_.text_field)
    without_gold = sum(row[0] not in gold for row in held)
    without_prediction = sum(row[0] in gold and row[0] not in predicted for row in held)
    return ParserVsGold(
        round_.name, p.key, scope.name, scope.tier, len(held), len(scored), without_gold, without_prediction,
        rule_set.version, rule_set.content_hash, slots, legality, (pathway, *baselines),
    )  # fmt: skip


def _slot_rows(gold: Sequence[Any], predicted: Sequence[Any]) -> tuple[SlotRow, ...]:
    """Per slot, accuracy against gold and alpha of gold and parser as two coders."""
    n = len(gold)
    gold_codes = np.asarray([explication_codes(e) for e in gold], dtype=np.int16).reshape(n, len(SLOTS))
    parser_codes = np.asarray([explication_codes(e) for e in predicted], dtype=np.int16).reshape(
        n, len(SLOTS)
    )
    right = (parser_codes == gold_codes) & (gold_codes >= 0)
    report = agreement(np.stack([gold_codes, parser_codes], axis=1), bootstrap=1000, seed=0)
    return tuple(
        SlotRow(name, Proportion.of(int(right[:, s].sum()), n), a.alpha, a.undefined, a.ci_low, a.ci_high)
        for s, (name, a) in enumerate(zip(SLOT_NAMES, report.slots, strict=True))
    )


def _pathway(items: list[dict[str, Any]], rule_set: RuleSet, tier: str, pass_key: str) -> LabelRow:
    """The routed label's accuracy, abstention and selective accuracy (nsmcore.evaluation)."""
    if not items:
        none = Proportion.of(0, 0)
        return LabelRow(PATHWAY, none, none, none, note="no scored item")
    routed = route_items(items, rule_set)
    h = evaluate(routed, tier=tier, pass_name=pass_key, orders=0, swaps=(), consistency=False).headline
    return LabelRow(PATHWAY, h.accuracy, h.abstention, h.selective_accuracy)


def _baselines(
    training: Sequence[tuple[str, str, str, Any]], scored: Sequence[tuple[str, str, str, Any]], field: str
) -> tuple[LabelRow, LabelRow]:
    """The label classifier and the appraisal baseline, trained on ``training`` and scored on
    ``scored`` (each row: reference label, text, masked text, appraisals)."""
    labels = [row[0] for row in scored]
    classifier = _baseline(
        LABEL_CLASSIFIER,
        [row[0] for row in training],
        labels,
        lambda x, y: train_label_classifier(x, y, seed=0),
        [text_in_field(t, m, field) for _, t, m, _ in training],
        [text_in_field(t, m, field) for _, t, m, _ in scored],
    )
    rated = [(label, a) for label, _, _, a in training if _rated(a)]
    unrated = sum(not _rated(row[3]) for row in scored)
    if unrated:
        note = (
            f"{unrated} of the {len(scored)} scored items lack some of the 21 appraisal ratings "
            "(no rating is imputed)"
        )
        return classifier, LabelRow(APPRAISAL, None, trained_on=len(rated), note=note)
    appraisal = _baseline(
        APPRAISAL,
        [label for label, _ in rated],
        labels,
        lambda x, y: train_appraisal_baseline(x, y, seed=0),
        [a for _, a in rated],
        [row[3] for row in scored],
    )
    if len(rated) < len(training) and appraisal.accuracy is not None:
        note = f"{len(training) - len(rated)} training items without all 21 ratings left out"
        note = f"{appraisal.note}; {note}" if appraisal.note else note
        appraisal = LabelRow(APPRAISAL, appraisal.accuracy, trained_on=len(rated), note=note)
    return classifier, appraisal


def _rated(appraisals: Any) -> bool:
    return isinstance(appraisals, Mapping) and all(appraisals.get(a) not in (None, "") for a in APPRAISALS)


def _baseline(
    model: str,
    train_labels: Sequence[str],
    labels: Sequence[str],
    train: Any,
    train_inputs: Sequence[Any],
    inputs: Sequence[Any],
) -> LabelRow:
    """Train a baseline and score it on the scored items, or say why there is no figure."""
    distinct = len(set(train_labels))
    if distinct < 2:
        plural = "" if distinct == 1 else "s"
        return LabelRow(
            model, None, trained_on=len(train_labels),
            note=f"too few training items: {len(train_labels)} (with {distinct} label{plural}) outside the "
            "held-out set and the eval tier; at least two labels are needed",
        )  # fmt: skip
    if not inputs:
        return LabelRow(model, Proportion.of(0, 0), trained_on=len(train_labels), note="no scored item")
    try:
        trained = train(list(train_inputs), list(train_labels))
        predictions = trained.predict(list(inputs))
    except BaselineError as error:
        return LabelRow(model, None, trained_on=len(train_labels), note=str(error))
    hits = sum(a == b for a, b in zip(predictions, labels, strict=True))
    # how the appraisal baseline chose its regularisation (inner cross-validation), for the record
    note = getattr(trained, "chosen", "")
    return LabelRow(model, Proportion.of(hits, len(labels)), trained_on=len(train_labels), note=note)


# Tables (page, CSV, command) -------------------------------------------------------------------


def _num(x: float | None, digits: int = 4) -> Decimal | float | str:
    # a number, not text: a CSV keeps a negative figure numeric (annotator.csv_cells)
    return fixed(x, digits)


def _prop(p: Proportion | None) -> list[Any]:
    if p is None:
        return ["", "", "", "", ""]
    return [p.k, p.n, _num(p.value), _num(p.low), _num(p.high)]


PROP = ["k", "n", "value", "ci_low", "ci_high"]


def label_figures(result: ParserVsGold) -> list[tuple[str, str, Proportion | None, LabelRow]]:
    """(model, figure, proportion, row) for the labels table: legality and the parser pathway's
    three figures, then each baseline's accuracy."""
    pathway = result.labels[0]
    out = [(PATHWAY, gettext_noop("legality"), result.legality, pathway)]
    out += [
        (PATHWAY, gettext_noop("accuracy"), pathway.accuracy, pathway),
        (PATHWAY, gettext_noop("abstention"), pathway.abstention, pathway),
    ]
    out += [(PATHWAY, gettext_noop("selective accuracy"), pathway.selective_accuracy, pathway)]
    out += [(r.model, gettext_noop("accuracy"), r.accuracy, r) for r in result.labels[1:]]
    return out


def parser_table(result: ParserVsGold, table: str) -> tuple[list[str], list[list[Any]]]:
    """One of PARSER_TABLES as a CSV header and rows; every row carries the evidence."""
    ev = result.evidence
    evidence = [result.held_out, ev.tier, result.scored, result.without_gold, result.without_prediction,
                ev.rule_set_version, ev.rule_set_hash, ev.pass_name]  # fmt: skip
    evidence_header = ["held_out", "tier", "items", "without_gold", "without_prediction", "rule_set_version",
                       "rule_set_hash", "pass"]  # fmt: skip
    if table == "parser_slots":
        header = ["slot", *PROP, "alpha", "alpha_ci_low", "alpha_ci_high", "alpha_undefined"]
        rows = [[s.slot, *_prop(s.accuracy), _num(s.alpha), _num(s.alpha_low), _num(s.alpha_high),
                 s.alpha_undefined] for s in result.slots]  # fmt: skip
    elif table == "parser_labels":
        header = ["model", "figure", *PROP, "trained_on", "note"]
        rows = [
            [model, figure, *_prop(p), "" if row.trained_on is None else row.trained_on, row.note]
            for model, figure, p, row in label_figures(result)
        ]
    else:
        raise EvaluationRequestError(
            _("table %(table)s is not one of: %(tables)s")
            % {"table": repr(table), "tables": ", ".join(PARSER_TABLES)}
        )
    return [*header, *evidence_header], [[*row, *evidence] for row in rows]


def parser_text(result: ParserVsGold) -> str:
    """The parser-vs-gold tables as plain text (what `manage.py evaluate` prints)."""
    out = [f"Parser against gold [{result.evidence.label()}]", f"  {result.coverage()}", ""]
    out.append(f"{'slot':16}{'accuracy [95% CI]  (k/n)':34}alpha (parser vs gold)")
    for s in result.slots:
        if s.alpha is None:
            alpha = f"undefined: {s.alpha_undefined}"
        elif s.alpha_low is not None:
            alpha = f"{s.alpha:.3f} [{s.alpha_low:.2f}, {s.alpha_high:.2f}]"
        else:
            alpha = f"{s.alpha:.3f}"
        out.append(f"  {s.slot:14}{s.accuracy.text():34}{alpha}")
    out.append("")
    out.append(f"{'pathway':22}{'figure':20}value [95% CI]  (k/n)")
    for model, figure, p, row in label_figures(result):
        if p is None:
            value = f"- ({row.note})"
        else:
            value = p.text() + (f"  trained on {row.trained_on}" if row.trained_on is not None else "")
            value += f"; {row.note}" if row.note and row.model != PATHWAY else ""
        out.append(f"  {model:20}{figure:20}{value}")
    return "\n".join(out) + "\n"
