"""Human entailment judgements of gold lines, and the verifier's calibration against them
(SPEC section 6): ROC AUC of p(entailment) against the judgements, the threshold that best
separates them, item scores, and how well an item's score tells a correctly routed item.

A line's human label is the majority of its judges; a tie is left out (and counted)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from adjudication.gold.services import AdjudicationError
from adjudication.models import GoldConstrual, GoldItem
from annotator.models import Item, Round
from nsmcore import calibration
from nsmcore.render import Line, render
from nsmcore.schema import Explication
from nsmcore.verifier import text_key
from verification.models import EntailmentJudgement, LineVerification

HISTOGRAM_BINS = 10


@dataclass
class JudgedItem:
    gold: GoldItem
    item: Item
    premise: str
    lines: list[Line]
    mine: dict[str, bool] = field(default_factory=dict)  # line text -> this judge's reading
    construals: dict[str, list[int]] = field(default_factory=dict)  # line text -> the construals with it

    def construal_of(self, text: str) -> str:
        """'construal 2' for a line only the second construal has (and so on); '' for a line
        every construal has, or when there is one."""
        counts = {i for indexes in self.construals.values() for i in indexes}
        indexes = self.construals.get(text, [])
        if len(counts) < 2 or len(indexes) == len(counts):
            return ""
        return "construal " + " and ".join(str(i) for i in indexes)

    @property
    def rows(self) -> list[tuple[str, bool | None, str]]:
        return [(line.text, self.mine.get(line.text), self.construal_of(line.text)) for line in self.lines]


def _construal_lines(round_: Round, item_ids: list[int] | None) -> list[tuple[int, int, list[Line]]]:
    """(item id, construal index, its rendered lines) of each resolved gold item, in order."""
    construals = GoldConstrual.objects.filter(gold__round=round_, gold__status=GoldItem.Status.RESOLVED)
    if item_ids is not None:
        construals = construals.filter(gold__item_id__in=item_ids)
    rows = construals.order_by("gold__item_id", "index").values_list("gold__item_id", "index", "slots")
    return [(item_id, index, render(Explication.from_dict(slots))) for item_id, index, slots in rows]


def gold_lines(round_: Round, item_ids: list[int] | None = None) -> dict[int, list[Line]]:
    """The distinct rendered lines of each resolved gold item's construals, in order."""
    out: dict[int, list[Line]] = {}
    for item_id, _index, rendered in _construal_lines(round_, item_ids):
        lines = out.setdefault(item_id, [])
        seen = {line.text for line in lines}
        lines += [line for line in rendered if line.text not in seen]
    return out


def judgement_items(round_: Round, *, user, item_ids: list[int]) -> list[JudgedItem]:
    """The page's items: their gold lines, the construals each line belongs to, and what
    ``user`` has said of each."""
    lines: dict[int, list[Line]] = {}
    where: dict[int, dict[str, list[int]]] = {}
    for item_id, index, rendered in _construal_lines(round_, item_ids):
        own, seen = lines.setdefault(item_id, []), where.setdefault(item_id, {})
        for line in rendered:
            if line.text not in seen:
                own.append(line)
            indexes = seen.setdefault(line.text, [])
            if index not in indexes:
                indexes.append(index)
    golds = {g.item_id: g for g in GoldItem.objects.filter(item_id__in=lines).select_related("item")}
    mine: dict[tuple[int, str], bool] = {
        (item_id, line): entailed
        for item_id, line, entailed in EntailmentJudgement.objects.filter(
            judge=user, item_id__in=lines, text_field=round_.text_field
        ).values_list("item_id", "line", "entailed")
    }
    out = []
    for item_id in item_ids:
        if item_id not in lines:
            continue
        gold = golds[item_id]
        judged = JudgedItem(gold, gold.item, gold.item.text_for(round_.text_field), lines[item_id])
        judged.construals = where[item_id]
        judged.mine = {
            line.text: mine[(item_id, line.text)] for line in lines[item_id] if (item_id, line.text) in mine
        }
        out.append(judged)
    return out


def judgement_mark(*, user, round_: Round, item: Item, line: str, entailed: bool) -> EntailmentJudgement:
    """Record (or change) ``user``'s reading of one gold line of ``item``; a line that is not one
    of the item's gold lines in this round is refused."""
    lines = {line.text: line for line in gold_lines(round_, [item.pk]).get(item.pk, [])}
    if not lines:
        raise AdjudicationError(
            _("item %(item)s has no resolved gold in round %(round)s")
            % {"item": item.source_id, "round": round_.name}
        )
    if line not in lines:
        raise AdjudicationError(
            _("%(line)s is not one of the gold lines of item %(item)s")
            % {"line": repr(line), "item": item.source_id}
        )
    premise = item.text_for(round_.text_field)
    with transaction.atomic():
        judgement, _created = EntailmentJudgement.objects.update_or_create(
            item=item,
            text_field=round_.text_field,
            line=line,
            judge=user,
            defaults={
                "entailed": entailed,
                "text_sha": text_key(premise),
                "slot": lines[line].slot,
                "value": lines[line].value,
            },
        )
    return judgement


def judgement_progress(round_: Round, *, user) -> tuple[int, int]:
    """(lines this judge has read, gold lines in the round)."""
    total = sum(len(v) for v in gold_lines(round_).values())
    done = EntailmentJudgement.objects.filter(
        judge=user, text_field=round_.text_field, item__gold__round=round_
    ).count()
    return done, total


def verifier_models(round_: Round) -> list[str]:
    """Models (id @ revision) with cached judgements on this round's texts, newest first."""
    rows = (
        LineVerification.objects.filter(text_sha__in=list(_shas(round_).values()))
        .values("model")
        .annotate(last=Max("created_at"))
        .order_by("-last", "model")
    )
    return [row["model"] for row in rows]


def _shas(round_: Round) -> dict[int, str]:
    items = Item.objects.filter(gold__round=round_, gold__status=GoldItem.Status.RESOLVED)
    return {i.pk: text_key(i.text_for(round_.text_field)) for i in items.only("text", "masked_text")}


@dataclass
class CalibrationReport:
    model: str
    threshold: float
    judged_lines: int  # lines with a human majority
    ties: int  # lines whose judges split evenly, left out
    unverified: int  # judged lines with no cached verifier judgement
    pairs: list[tuple[float, bool]]  # (p_entailment, human says entailed)
    auc: float | None
    best: calibration.Threshold | None
    accuracy_at_threshold: float | None
    roc: list[calibration.RocPoint]
    item_scores: list[float]
    histogram: list[int]
    routed_items: int  # items with a routed label and a score
    routed_correct: int
    label_auc: float | None  # item score against "routed label == reference label"
    judges: int


def calibration_report(round_: Round, model: str) -> CalibrationReport:
    threshold = settings.NSM_VERIFIER_THRESHOLD
    votes: dict[tuple[str, str], Counter] = {}
    judges = set()
    for sha, line, entailed, judge in EntailmentJudgement.objects.filter(
        item__gold__round=round_, text_field=round_.text_field
    ).values_list("text_sha", "line", "entailed", "judge_id"):
        votes.setdefault((sha, line), Counter())[entailed] += 1
        judges.add(judge)
    shas = _shas(round_)
    probs = {
        (sha, line): p
        for sha, line, p in LineVerification.objects.filter(
            model=model, text_sha__in=list(shas.values())
        ).values_list("text_sha", "line", "p_entailment")
    }
    pairs, ties, unverified = [], 0, 0
    for key, counter in sorted(votes.items()):
        if counter[True] == counter[False]:
            ties += 1
            continue
        if key not in probs:
            unverified += 1
            continue
        pairs.append((probs[key], counter[True] > counter[False]))
    scores = [p for p, _ in pairs]
    labels = [y for _, y in pairs]

    lines = gold_lines(round_)
    item_scores: dict[int, float] = {}
    for item_id, item_lines in lines.items():
        sha = shas[item_id]
        ps = [probs.get((sha, line.text)) for line in item_lines]
        if item_lines and all(p is not None for p in ps):
            item_scores[item_id] = sum(p >= threshold for p in ps) / len(ps)
    routed = dict(
        GoldConstrual.objects.filter(gold__round=round_, gold__status=GoldItem.Status.RESOLVED, index=1)
        .exclude(abstention__gt="")
        .exclude(label="")
        .values_list("gold__item_id", "label")
    )
    reference = dict(Item.objects.filter(pk__in=list(routed)).values_list("pk", "reference_label"))
    correct_pairs = [(item_scores[i], routed[i] == reference[i]) for i in routed if i in item_scores]
    return CalibrationReport(
        model=model,
        threshold=threshold,
        judged_lines=len(votes) - ties,
        ties=ties,
        unverified=unverified,
        pairs=pairs,
        auc=calibration.roc_auc(scores, labels),
        best=calibration.best_threshold(scores, labels),
        accuracy_at_threshold=calibration.accuracy_at(scores, labels, threshold),
        roc=calibration.roc_curve(scores, labels),
        item_scores=sorted(item_scores.values()),
        histogram=calibration.histogram(list(item_scores.values()), HISTOGRAM_BINS),
        routed_items=len(correct_pairs),
        routed_correct=sum(1 for _, ok in correct_pairs if ok),
        label_auc=calibration.roc_auc([s for s, _ in correct_pairs], [ok for _, ok in correct_pairs]),
        judges=len(judges),
    )


def report_as_dict(report: CalibrationReport) -> dict[str, Any]:
    roc = [
        {"threshold": None if p.threshold == float("inf") else p.threshold, "tpr": p.tpr, "fpr": p.fpr}
        for p in report.roc
    ]
    return {
        "model": report.model,
        "threshold": report.threshold,
        "judged_lines": report.judged_lines,
        "ties": report.ties,
        "unverified": report.unverified,
        "scored_lines": len(report.pairs),
        "judges": report.judges,
        "roc_auc": report.auc,
        "best_threshold": asdict(report.best) if report.best else None,
        "accuracy_at_threshold": report.accuracy_at_threshold,
        "roc": roc,
        "item_score_histogram": {"bins": HISTOGRAM_BINS, "counts": report.histogram},
        "routed_items": report.routed_items,
        "routed_correct": report.routed_correct,
        "label_auc": report.label_auc,
    }
