"""The learning queue's writes: a round's queue policy, computing its queue from the parser's
posteriors and the round's answers so far, and serving it (each annotator's pending items in the
queue's order). The ranking itself is nsmcore.queue's; this module reads its inputs from the
database and writes its result back."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from adjudication.models import Convention
from annotator.models import (
    SLOT_FIELDS,
    Annotation,
    Assignment,
    ItemSet,
    ItemSetMember,
    ParserPrediction,
    Round,
)
from learning.models import QueueEntry, QueuePolicy
from nsmcore.decoding import rule_lattice
from nsmcore.mapper import ABSTAIN, route_batch
from nsmcore.queue import (
    ORDERS,
    QueueError,
    check_order,
    conflict_rates,
    posteriors_of,
    posteriors_to_log,
    rank_items,
)
from nsmcore.render import render
from nsmcore.schema import Explication, ExplicationError
from nsmcore.verifier import text_key
from rules.rulesets import active_rule_set
from verification.models import LineVerification

#: conventions whose pair still splits annotators: proposed, or accepted (a convention settles
#: gold, but annotators may not have read it yet); rejected, withdrawn and superseded ones do not
CONVENTION_STATUSES = (Convention.Status.PROPOSED, Convention.Status.ACCEPTED)


class QueuePolicyError(ValueError):
    """A queue setting that cannot be used: the message names the field (a 400, or exit 2)."""

    api_status = 400

    def __init__(self, message: str, *, field: str = ""):
        super().__init__(message)
        self.field = field

    def api_body(self) -> dict[str, Any]:
        """DRF's shape of a validation error: the message under its field (config.schema)."""
        return {"detail": str(self), **({self.field: [str(self)]} if self.field else {})}


def queue_policy_set(
    *,
    round_: Round,
    user: Any,
    order: str,
    random_share: float | None = None,
    seed: int | None = None,
    parser: str | None = None,
    retrain_every: int | None = None,
) -> QueuePolicy:
    """Create or change a round's queue policy; values left None keep theirs (or the defaults).
    The queue itself is computed by a job (learning.jobs)."""
    policy = QueuePolicy.objects.filter(round=round_).first() or QueuePolicy(round=round_)
    if order not in ORDERS:
        raise QueuePolicyError(
            _("order %(order)s: choose one of %(orders)s")
            % {"order": repr(order), "orders": ", ".join(ORDERS)},
            field="order",
        )
    share = policy.random_share if random_share is None else random_share
    try:
        check_order(order, share)
    except QueueError:
        raise QueuePolicyError(
            _("random share %(share)s: a share between 0 and 1, such as 0.2") % {"share": repr(random_share)},
            field="random_share",
        ) from None
    if not 0 < share < 1:  # stored for a later mixed order even when this one ignores it
        raise QueuePolicyError(
            _("random share %(share)s: a share between 0 and 1, such as 0.2") % {"share": repr(random_share)},
            field="random_share",
        )
    if seed is not None and not 0 <= seed < 2**63:
        raise QueuePolicyError(_("seed: a whole number from 0"), field="seed")
    if retrain_every is not None and not 0 <= retrain_every <= 1_000_000:
        raise QueuePolicyError(
            _("retrain every: a whole number of gold items from 0 (never)"), field="retrain_every"
        )
    if (
        parser
        and not ParserPrediction.objects.filter(parser=parser, item__item_sets=round_.item_set).exists()
    ):
        raise QueuePolicyError(
            _("parser %(parser)s has no predictions for this round's items: prefill them first")
            % {"parser": repr(parser)},
            field="parser",
        )
    policy.order = order
    policy.random_share = share
    if seed is not None:
        policy.seed = seed
    if parser is not None:
        policy.parser = parser
    if retrain_every is not None:
        policy.retrain_every = retrain_every
        if retrain_every and policy.pk is None:
            policy.gold_at_retrain = resolved_gold(round_)
    policy.updated_by = user if getattr(user, "pk", None) else None
    policy.save()
    return policy


def resolved_gold(round_: Round) -> int:
    return round_.gold_items.filter(status="resolved").count()


def queue_parser(policy: QueuePolicy) -> str:
    """Whose posteriors rank the round: the policy's parser, else the round's prefill parser, else
    the parser with the newest prediction for one of its items ("" when there is none)."""
    round_ = policy.round
    if policy.parser:
        return policy.parser
    if round_.prefill_parser:
        return round_.prefill_parser
    newest = (
        ParserPrediction.objects.filter(item__item_sets=round_.item_set)
        .order_by("-created_at", "-pk")
        .values_list("parser", flat=True)
        .first()
    )
    return newest or ""


@dataclass(frozen=True)
class QueueResult:
    items: int
    with_posteriors: int
    random: int
    parser: str
    annotated: int  # items answered twice or more, whose disagreements set the conflict rates
    conventions: int
    verified: int  # items with verifier judgements on their lines
    reordered: int  # pending assignments whose place changed

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _newest_predictions(round_: Round, parser: str, item_ids: list[int]) -> dict[int, ParserPrediction]:
    rows = (
        ParserPrediction.objects.filter(
            item_id__in=item_ids, parser=parser, text_field__in=(round_.text_field, "")
        )
        .order_by("item_id", "-created_at", "-pk")
        .only("item_id", "explication", "raw_output", "parser_version", "created_at")
    )
    newest: dict[int, ParserPrediction] = {}
    for row in rows.iterator(chunk_size=5000):
        newest.setdefault(row.item_id, row)
    return newest


def _answers(round_: Round, member: set[int]) -> list[list[dict[str, str]]]:
    by_item: dict[int, list[dict[str, str]]] = defaultdict(list)
    rows = Annotation.objects.filter(assignment__round=round_).values_list(
        "assignment__item_id", *SLOT_FIELDS
    )
    for item_id, *values in rows.iterator(chunk_size=5000):
        if item_id in member:
            by_item[item_id].append(dict(zip(SLOT_FIELDS, values, strict=True)))
    return list(by_item.values())


def _rejected(round_: Round, items: list[Any], explications: dict[int, Any]) -> dict[int, float]:
    """Per item, the share of its parser explication's lines the verifier rejected (any model's
    newest judgement of the line against the item's text in the round's field)."""
    wanted: dict[int, tuple[str, list[str]]] = {}
    for item in items:
        e = explications.get(item.pk)
        if e is None:
            continue
        wanted[item.pk] = (text_key(item.text_for(round_.text_field)), [line.text for line in render(e)])
    if not wanted:
        return {}
    judged: dict[tuple[str, str], float] = {}
    shas = list({sha for sha, _ in wanted.values()})
    for start in range(0, len(shas), 2000):
        rows = (
            LineVerification.objects.filter(text_sha__in=shas[start : start + 2000])
            .order_by("created_at")
            .values_list("text_sha", "line", "p_entailment")
        )
        for sha, line, p in rows.iterator(chunk_size=5000):
            judged[sha, line] = p  # the newest judgement of a pair wins
    threshold = settings.NSM_VERIFIER_THRESHOLD
    out = {}
    for item_id, (sha, lines) in wanted.items():
        scores = [judged[sha, line] for line in lines if (sha, line) in judged]
        if scores:
            out[item_id] = sum(p < threshold for p in scores) / len(scores)
    return out


def queue_compute(*, policy: QueuePolicy, progress: Callable[[int, int], None] | None = None) -> QueueResult:
    """Rank the round's items (nsmcore.queue.rank_items), store the ranking and the random share's
    item set, and serve it: each annotator's pending items of the round take their places in the
    queue's order (done items and items outside the round's item set keep theirs)."""
    round_ = Round.objects.select_related("item_set").get(pk=policy.round_id)
    step = lambda k: progress and progress(k, 4)  # noqa: E731
    members = list(
        ItemSetMember.objects.filter(item_set=round_.item_set)
        .select_related("item")
        .only("item__id", "item__text", "item__masked_text")
        .order_by("item_id")
    )
    items = [m.item for m in members]
    ids = [i.pk for i in items]
    parser = queue_parser(policy)
    newest = _newest_predictions(round_, parser, ids) if parser else {}
    explications: dict[int, Explication | None] = {}
    for item_id, prediction in newest.items():
        try:
            explications[item_id] = (
                Explication.from_dict(prediction.explication) if prediction.explication else None
            )
        except ExplicationError:
            explications[item_id] = None
    rule_set = active_rule_set()
    routed = route_batch([explications[i] for i in ids if explications.get(i)], rule_set)
    labels_by_id = dict(zip([i for i in ids if explications.get(i)], (r.label for r in routed), strict=True))
    labels = [labels_by_id.get(i, ABSTAIN) for i in ids]
    posteriors = [posteriors_of(newest[i].raw_output) if i in newest else None for i in ids]
    step(1)
    answers = _answers(round_, set(ids))
    conventions = list(
        Convention.objects.filter(round=round_, status__in=CONVENTION_STATUSES).values_list(
            "slot", "value_a", "value_b"
        )
    )
    rejected = _rejected(round_, items, {k: v for k, v in explications.items() if v is not None})
    step(2)
    ranked = rank_items(
        ids,
        posteriors_to_log(posteriors),
        labels,
        order=policy.order,
        share=policy.random_share,
        seed=policy.seed,
        rates=conflict_rates(answers),
        conventions=conventions,
        rejected=[rejected.get(i, 0.0) for i in ids],
        lattice=rule_lattice(rule_set),
    )
    step(3)
    has_posteriors = {i for i, p in zip(ids, posteriors, strict=True) if p}
    version = max((p.parser_version for p in newest.values()), default="")
    with transaction.atomic():
        policy = QueuePolicy.objects.select_for_update().get(pk=policy.pk)
        QueueEntry.objects.filter(policy=policy).delete()
        QueueEntry.objects.bulk_create(
            [
                QueueEntry(
                    policy=policy,
                    item_id=r.id,
                    rank=r.rank,
                    score=r.score,
                    change=r.change,
                    conflict=r.conflict,
                    rejected=r.rejected,
                    label=r.label,
                    random=r.random,
                    weight=r.weight,
                    posteriors=r.id in has_posteriors,
                )
                for r in ranked
            ],
            batch_size=2000,
        )
        policy.random_set = _random_set(policy, round_, [r.id for r in ranked if r.random])
        policy.computed_at = timezone.now()
        policy.computed_with = f"{parser} {version}".strip()[:420]
        policy.save(update_fields=["random_set", "computed_at", "computed_with"])
        reordered = queue_serve(round_=round_, ranks={r.id: r.rank for r in ranked})
    step(4)
    return QueueResult(
        items=len(ids),
        with_posteriors=len(has_posteriors),
        random=sum(r.random for r in ranked),
        parser=policy.computed_with,
        annotated=sum(len(a) > 1 for a in answers),
        conventions=len(conventions),
        verified=len(rejected),
        reordered=reordered,
    )


def _random_set(policy: QueuePolicy, round_: Round, item_ids: list[int]) -> ItemSet | None:
    """The random share as an item set (tier of the round's), made or refilled: the evaluation
    page scores it (?item_set=) and the agreement page reads it, for unbiased figures."""
    if not item_ids:
        return None
    item_set = policy.random_set
    if item_set is None:
        name = _("%(round)s: random share") % {"round": round_.name}
        name = name[:100]
        item_set = ItemSet.objects.filter(name=name).first() or ItemSet.objects.create(
            name=name, tier=round_.item_set.tier, seed=policy.seed, created_by=policy.updated_by
        )
    ItemSetMember.objects.filter(item_set=item_set).delete()
    ItemSetMember.objects.bulk_create(
        [ItemSetMember(item_set=item_set, item_id=i, position=p) for p, i in enumerate(sorted(item_ids))],
        batch_size=2000,
    )
    ItemSet.objects.filter(pk=item_set.pk).update(
        size=len(item_ids), seed=policy.seed, tier=round_.item_set.tier
    )
    return item_set


def queue_serve(*, round_: Round, ranks: dict[int, int]) -> int:
    """Each annotator's pending assignments of items in ``ranks`` take the places those
    assignments already hold, in rank order: the queue changes which item comes next, never the
    places of done work or of items outside the ranking. Returns how many assignments moved."""
    rows = list(
        Assignment.objects.filter(round=round_, status=Assignment.Status.PENDING, item_id__in=list(ranks))
        .only("pk", "annotator_id", "item_id", "position")
        .order_by("annotator_id", "position")
    )
    by_annotator: dict[int, list[Assignment]] = defaultdict(list)
    for a in rows:
        by_annotator[a.annotator_id].append(a)
    moved = []
    for queue in by_annotator.values():
        places = sorted(a.position for a in queue)
        for place, a in zip(places, sorted(queue, key=lambda a: ranks[a.item_id]), strict=True):
            if a.position != place:
                a.position = place
                moved.append(a)
    Assignment.objects.bulk_update(moved, ["position"], batch_size=2000)
    return len(moved)


def queue_clear(*, round_: Round) -> None:
    """Remove a round's queue policy (its items keep the order they were last served in)."""
    QueuePolicy.objects.filter(round=round_).delete()


def newest_prediction_at(policy: QueuePolicy) -> Any:
    parser = queue_parser(policy)
    if not parser:
        return None
    return ParserPrediction.objects.filter(parser=parser, item__item_sets=policy.round.item_set).aggregate(
        at=Max("created_at")
    )["at"]
