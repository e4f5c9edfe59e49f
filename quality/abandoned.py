"""Abandoned work: an assignment its annotator opened and then left, with no draft kept and
nothing saved, for longer than the round's limit goes back to the pool. It moves to the eligible
member of the pool with the fewest pending assignments (ties by name), as
annotator.services.round_annotator_remove hands out a leaver's work: never to someone who has the
item in the round already, in a blind round never to someone who saw it prefilled, and (a control
item) never to someone who had the item in any round. Every move is recorded (``Move``).

Openings are posted by the annotation page once loaded (quality.views.opening); a draft kept
or a save counts as activity (the receivers in quality.receivers)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Max, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _

from annotator.models import AnnotationDraft, Assignment, Round
from annotator.round_selectors import prefilled_seen
from annotator.versions import round_changed
from quality.models import HOURS_MAX, Move, Opening
from quality.services import QualityError, quality_settings


def opening_record(*, assignment: Assignment, user: AbstractBaseUser, now: datetime | None = None) -> None:
    """The annotator opened the assignment's page: the first time starts its opening, each later
    one is activity."""
    now = now or timezone.now()
    if Opening.objects.filter(assignment_id=assignment.pk, annotator_id=user.pk).update(active_at=now):
        return
    try:
        with transaction.atomic():  # a savepoint: another tab may open it at the same moment
            Opening.objects.create(
                assignment_id=assignment.pk, annotator_id=user.pk, opened_at=now, active_at=now
            )
    except IntegrityError:
        Opening.objects.filter(assignment_id=assignment.pk, annotator_id=user.pk).update(active_at=now)


def activity_touch(*, assignment_id: int, now: datetime | None = None) -> None:
    """Its annotator worked on the assignment (kept a draft, saved): its opening is active now."""
    holder = Assignment.objects.filter(pk=assignment_id).values("annotator_id")[:1]
    Opening.objects.filter(assignment_id=assignment_id, annotator_id=Subquery(holder)).update(
        active_at=now or timezone.now()
    )


def stale_openings(round_: Round, cutoff: datetime):
    """Openings of the round's pending, never saved assignments, by whoever holds them now, with
    no activity since ``cutoff``; the idlest first."""
    return (
        Opening.objects.filter(
            assignment__round=round_,
            assignment__status=Assignment.Status.PENDING,
            assignment__annotator=F("annotator"),
            assignment__annotation__isnull=True,
            active_at__lt=cutoff,
        )
        .select_related("assignment")
        .order_by("active_at", "pk")
    )


@dataclass
class SweepResult:
    """What a sweep did: assignments moved, and those left where they were because nobody in
    the pool may take them (by round name)."""

    moved: Counter[str] = field(default_factory=Counter)
    stuck: Counter[str] = field(default_factory=Counter)

    def summary(self) -> str:
        text = _("%(n)s abandoned assignments moved back to the pool") % {"n": sum(self.moved.values())}
        if self.moved:
            text += " (" + ", ".join(f"{name} {n}" for name, n in sorted(self.moved.items())) + ")"
        if self.stuck:
            names = ", ".join(f"{name} {n}" for name, n in sorted(self.stuck.items()))
            text += "; " + _("left in place, nobody else in the pool may take them: %(names)s") % {
                "names": names
            }
        return text


def abandoned_sweep(
    *,
    round_: Round | None = None,
    hours: int | None = None,
    user: AbstractBaseUser | None = None,
    now: datetime | None = None,
) -> SweepResult:
    """Move every abandoned assignment (of one round, or of all) back to the pool; ``hours``
    overrides each round's limit. Safe to run twice, and beside another sweep: each move is a
    conditional update of the assignment as it was read."""
    if hours is not None and (
        isinstance(hours, bool) or not isinstance(hours, int) or not 1 <= hours <= HOURS_MAX
    ):
        raise QualityError(
            _("must be a whole number of hours between 1 and %(max)s") % {"max": HOURS_MAX}, field="hours"
        )
    now = now or timezone.now()
    result = SweepResult()
    if round_ is not None:
        rounds = [round_]
    else:
        # only the rounds with an opening idle for at least an hour: the shortest limit there is
        idle = Opening.objects.filter(active_at__lt=now - timedelta(hours=1), assignment__status="pending")
        rounds = list(Round.objects.filter(pk__in=idle.values("assignment__round_id")).order_by("name"))
    for r in rounds:
        limit = hours if hours is not None else quality_settings(r).abandon_hours
        if limit:
            _sweep_round(r, limit=limit, now=now, user=user, result=result)
    return result


@transaction.atomic
def _sweep_round(
    round_: Round, *, limit: int, now: datetime, user: AbstractBaseUser | None, result: SweepResult
) -> None:
    round_ = Round.objects.select_for_update().get(pk=round_.pk)  # one pool change at a time
    stale = list(stale_openings(round_, now - timedelta(hours=limit)))
    if not stale:
        return
    pool = dict(
        get_user_model()
        .objects.filter(annotation_rounds=round_, is_active=True)
        .values_list("pk", "username")
    )
    item_ids = [o.assignment.item_id for o in stale]
    holders = set(
        Assignment.objects.filter(round=round_, item_id__in=item_ids).values_list("annotator_id", "item_id")
    )
    seen = prefilled_seen(annotator_ids=pool, item_ids=item_ids) if round_.is_blind else set()
    controls = [o.assignment.item_id for o in stale if o.assignment.control]
    had_anywhere = set(
        Assignment.objects.filter(annotator_id__in=list(pool), item_id__in=controls).values_list(
            "annotator_id", "item_id"
        )
    )
    load = Counter(
        dict(
            Assignment.objects.filter(
                round=round_, annotator_id__in=list(pool), status=Assignment.Status.PENDING
            )
            .order_by()
            .values_list("annotator_id")
            .annotate(n=Count("pk"))
            .values_list("annotator_id", "n")
        )
    )
    last = dict(
        Assignment.objects.filter(round=round_, annotator_id__in=list(pool))
        .order_by()
        .values_list("annotator_id")
        .annotate(top=Max("position"))
        .values_list("annotator_id", "top")
    )
    moved = False
    for opening in stale:
        a = opening.assignment
        eligible = [
            pk
            for pk in pool
            if pk != a.annotator_id
            and (pk, a.item_id) not in holders
            and (pk, a.item_id) not in seen
            and not (a.control and (pk, a.item_id) in had_anywhere)
        ]
        if not eligible:
            result.stuck[round_.name] += 1
            continue
        to = min(eligible, key=lambda pk: (load[pk], pool[pk]))
        position = last.get(to, -1) + 1
        still = Assignment.objects.filter(
            pk=a.pk, annotator_id=a.annotator_id, status=Assignment.Status.PENDING, annotation__isnull=True
        )
        # its place now: an earlier move in this sweep may have closed up the queue in front of it
        place = still.values_list("position", flat=True).first()
        if place is None or not still.filter(position=place).update(annotator_id=to, position=position):
            continue  # saved or moved since it was read
        # the first annotator's queue closes up behind it: positions stay contiguous
        Assignment.objects.filter(round=round_, annotator_id=a.annotator_id, position__gt=place).update(
            position=F("position") - 1
        )
        # the draft was the first annotator's, never saved (a saved one is never moved); so is
        # the opening: were the item to come back to them, it would be abandoned again at once
        deleted, _kinds = AnnotationDraft.objects.filter(assignment_id=a.pk).delete()
        Opening.objects.filter(assignment_id=a.pk).delete()
        Move.objects.create(
            round=round_, assignment_id=a.pk, item_id=a.item_id, from_annotator_id=a.annotator_id,
            to_annotator_id=to, opened_at=opening.opened_at, idle_since=opening.active_at, hours=limit,
            draft_deleted=bool(deleted), by=user if user is not None and user.is_authenticated else None,
        )  # fmt: skip
        last[to] = position
        last[a.annotator_id] = last.get(a.annotator_id, 0) - 1
        load[to] += 1
        load[a.annotator_id] -= 1
        holders.add((to, a.item_id))
        result.moved[round_.name] += 1
        moved = True
    if moved:
        round_changed(round_.pk)
