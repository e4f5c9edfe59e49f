"""Reads: what an annotator may see, their queue, and the prefill of an item in a round."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q
from django.http import Http404
from django.utils.translation import gettext as _

from annotator.models import Annotation, AnnotationDraft, Assignment, ParserPrediction, Round
from annotator.queries import assignment_with_annotation


def prefill_for(round_: Round, item_id_or_item: Any) -> dict[str, str] | None:
    """The parser explication that prefills this item in this round; None in blind rounds (the
    parser must not reach the page at all), or when the parser has no legal prediction."""
    if round_.is_blind or not round_.prefill_parser:
        return None
    return predicted_explication(round_.prefill_parser, item_id_or_item, text_field=round_.text_field)


def prefill_of(assignment: Assignment) -> dict[str, str] | None:
    """``prefill_for`` of an assignment's round and item, without a query when the assignment
    came from ``assignment_for_user``, which reads the prefill with it."""
    if assignment.round.is_blind or not assignment.round.prefill_parser:
        return None
    if hasattr(assignment, "newest_prefill"):
        return assignment.newest_prefill
    return prefill_for(assignment.round, assignment.item_id)


def read_from(predictions: Any, text_field: str) -> Any:
    """The predictions a round showing ``text_field`` may use: read from that text, or from an
    unrecorded one (an import). The generated text names the emotion the masked text hides, so
    a masked round's prefill and its parser's scores never come from the generated text."""
    return predictions.filter(text_field__in=(text_field, "")) if text_field else predictions


def predicted_explication(
    parser: str, item_id_or_item: Any, *, text_field: str = ""
) -> dict[str, str] | None:
    """The newest legal explication of one parser for an item, or None; with ``text_field``, only
    predictions read from that field (or from an unrecorded one)."""
    item_id = getattr(item_id_or_item, "pk", item_id_or_item)
    found = read_from(ParserPrediction.objects.filter(item_id=item_id, parser=parser, legal=True), text_field)
    return found.order_by("-created_at").values_list("explication", flat=True).first()


def prefills_for(assignments: list[Assignment]) -> dict[tuple[int, int], dict[str, str]]:
    """Prefills of many assignments in one query: {(round id, item id): explication}."""
    wanted = {
        (a.round.prefill_parser, a.item_id)
        for a in assignments
        if not a.round.is_blind and a.round.prefill_parser
    }
    if not wanted:
        return {}
    rows = (
        ParserPrediction.objects.filter(
            item_id__in={i for _, i in wanted}, parser__in={p for p, _ in wanted}, legal=True
        )
        .order_by("created_at")
        .values_list("parser", "item_id", "text_field", "explication")
    )
    # per field read, in creation order ("" stands for unrecorded, which every round may read)
    by_field: dict[tuple[str, int, str], list] = {}
    for order, (parser, item_id, field, explication) in enumerate(rows):
        by_field[(parser, item_id, field)] = [order, explication]  # newest wins
    out = {}
    for a in assignments:
        if a.round.is_blind or not a.round.prefill_parser:
            continue
        key = (a.round.prefill_parser, a.item_id)
        found = [f for f in (by_field.get((*key, a.round.text_field)), by_field.get((*key, ""))) if f]
        if found:
            out[(a.round_id, a.item_id)] = max(found, key=lambda f: f[0])[1]  # the newer of the two
    return out


@dataclass(frozen=True)
class Progress:
    """One annotator's (or a round's) assignments by status."""

    assigned: int
    done: int
    skipped: int

    @property
    def pending(self) -> int:
        return self.assigned - self.done - self.skipped

    @property
    def percent(self) -> int:
        """The share settled (done or skipped): how far a round has come."""
        return round(100 * (self.done + self.skipped) / self.assigned) if self.assigned else 0

    @property
    def done_percent(self) -> int:
        """The share done: how far an annotator has come with their own queue."""
        return round(100 * self.done / self.assigned) if self.assigned else 0


@dataclass(frozen=True)
class QueueRow:
    round: Round
    progress: Progress


def queue_for_user(user: AbstractBaseUser) -> list[QueueRow]:
    """Every round with work for this user, with progress, in one query."""
    rounds = (
        Round.objects.filter(assignments__annotator=user)
        .annotate(
            assigned=Count("assignments", filter=Q(assignments__annotator=user)),
            done=Count("assignments", filter=Q(assignments__annotator=user, assignments__status="done")),
            skipped=Count(
                "assignments", filter=Q(assignments__annotator=user, assignments__status="skipped")
            ),
        )
        .order_by("-created_at")
    )
    return [QueueRow(r, Progress(r.assigned, r.done, r.skipped)) for r in rounds]


def round_progress(user: AbstractBaseUser, round_id: int, *, position: int = 0) -> tuple[int, int, int]:
    """(done, assigned, place) for one annotator in one round, counted in one query: ``place``
    is the 1-based place in their queue of the item at ``position``."""
    counts = Assignment.objects.filter(annotator=user, round_id=round_id).aggregate(
        done=Count("pk", filter=Q(status=Assignment.Status.DONE)),
        assigned=Count("pk"),
        before=Count("pk", filter=Q(position__lt=position)),
    )
    return counts["done"], counts["assigned"], counts["before"] + 1


def next_assignment(user: AbstractBaseUser, round_id: int, *, after: int | None = None) -> Assignment | None:
    """The next pending item of the user's queue in a round (after a position, when given)."""
    qs = Assignment.objects.filter(annotator=user, round_id=round_id, status=Assignment.Status.PENDING)
    if after is not None:
        later = qs.filter(position__gt=after).order_by("position").first()
        if later is not None:
            return later
    return qs.order_by("position").first()


def assignment_for_user(user: AbstractBaseUser, assignment_id: int) -> Assignment:
    """The assignment if it is this user's, else 404: another annotator's work does not exist
    as far as this user can tell. Its round, item, annotation and the newest legal prediction of
    its round's prefill parser (``prefill_of``; a blind round never shows it) come in the same
    statement (annotator.queries.assignment_with_annotation): the API's fetch is one query
    besides authentication, its submit one read before the writes (benchmarks/bench_load.py)."""
    assignment = assignment_with_annotation(user.pk, assignment_id)
    if assignment is None:
        raise Http404(_("No such assignment"))
    return assignment


def annotation_of(assignment: Assignment) -> Annotation | None:
    """The assignment's annotation, or None: no query when it was read with the assignment
    (``assignment_for_user``)."""
    try:
        return assignment.annotation
    except Annotation.DoesNotExist:
        return None


def draft_to_restore(assignment: Assignment, annotation: Annotation | None) -> AnnotationDraft | None:
    """The assignment's unsaved draft when it was made on the version saved now (a draft older
    than a later save is not offered again: the save has what the annotator chose since)."""
    draft = AnnotationDraft.objects.filter(assignment_id=assignment.pk).first()
    if draft is None or draft.base_version != (annotation.version if annotation else 0):
        return None
    return draft


def neighbours(assignment: Assignment) -> tuple[Assignment | None, Assignment | None]:
    """The annotator's items just before and after this one in the round's queue, whatever their
    status (done, skipped or to do): previous / next on the annotation page."""
    mine = Assignment.objects.filter(annotator_id=assignment.annotator_id, round_id=assignment.round_id)
    before = mine.filter(position__lt=assignment.position).order_by("-position").first()
    after = mine.filter(position__gt=assignment.position).order_by("position").first()
    return before, after


def round_for_user(user: AbstractBaseUser, round_id: int) -> Round:
    """A round the user has items in, else 404 (as ``assignment_for_user``)."""
    round_ = Round.objects.filter(pk=round_id, assignments__annotator=user).distinct().first()
    if round_ is None:
        raise Http404(_("No such round"))
    return round_


def round_items_for_user(user: AbstractBaseUser, round_: Round, *, status: str = "") -> list[Assignment]:
    """The user's items in a round in queue order, with their texts; only those of a status when
    one is given. Nobody else's assignments, ever."""
    qs = Assignment.objects.filter(annotator=user, round=round_).select_related("item").order_by("position")
    if status:
        qs = qs.filter(status=status)
    return list(qs)


def round_status_counts(user: AbstractBaseUser, round_: Round) -> dict[str, int]:
    """{status: how many of the user's items in the round have it}, every status present."""
    counts = dict.fromkeys(Assignment.Status.values, 0)
    # order_by() drops the model's ordering, which would otherwise split the groups by position
    rows = (
        Assignment.objects.filter(annotator=user, round=round_)
        .order_by()
        .values_list("status")
        .annotate(n=Count("pk"))
    )
    counts.update(dict(rows))
    return counts
