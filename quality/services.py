"""Writes: a round's quality settings, its control items (mixed into each annotator's queue), and
the nudge after a prefill kept whole too fast. Abandoned work: quality.abandoned."""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count
from django.utils.translation import gettext as _

from adjudication.models import GoldItem
from annotator.models import SLOT_FIELDS, Annotation, Assignment, ParserPrediction, Round
from annotator.selectors import read_from
from annotator.versions import round_changed
from quality.models import (
    HOURS_MAX,
    MIN_ANSWERED_MAX,
    NUDGE_SECONDS_MAX,
    RATE_MAX,
    Nudge,
    QualitySettings,
)


class QualityError(ValueError):
    """A refused quality change; ``field`` names the input at fault. Nothing was written."""

    api_status = 400

    def __init__(self, message: str, *, field: str = ""):
        self.field = field
        super().__init__(message)

    def api_body(self) -> dict[str, Any]:
        return {self.field: [str(self)]} if self.field else {"detail": str(self)}


def quality_settings(round_: Round) -> QualitySettings:
    """The round's settings: its row, or (not saved) the defaults."""
    found = QualitySettings.objects.select_related("control_source").filter(round=round_).first()
    return found if found is not None else QualitySettings(round=round_)


#: what quality_settings_set takes, each with its check
SETTINGS_FIELDS = (
    "control_source", "control_rate", "threshold", "measure", "min_answered", "abandon_hours", "nudge",
    "nudge_seconds",
)  # fmt: skip


def _number(field: str, value: Any, low: float, high: float, *, whole: bool = False) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise QualityError(_("must be a number, not %(value)s") % {"value": repr(value)[:40]}, field=field)
    if whole and value != int(value):
        raise QualityError(_("must be a whole number, not %(value)s") % {"value": value}, field=field)
    if not low <= value <= high:
        raise QualityError(
            _("must be between %(low)s and %(high)s, not %(value)s")
            % {"low": low, "high": high, "value": value},
            field=field,
        )
    return int(value) if whole else float(value)


def _checked(round_: Round, field: str, value: Any) -> Any:
    if field == "control_source":
        if value is not None and not isinstance(value, Round):
            raise QualityError(_("must be a round or nothing"), field=field)
        if value is not None and value.pk == round_.pk:
            raise QualityError(
                _("control items come from other rounds' gold, not from round %(round)s itself")
                % {"round": round_.name},
                field=field,
            )
        return value
    if field == "control_rate":
        return _number(field, value, 0, RATE_MAX)
    if field == "threshold":
        return _number(field, value, 0, 1)
    if field == "measure":
        if value not in QualitySettings.Measure.values:
            raise QualityError(
                _("unknown measure %(value)s; measures: %(known)s")
                % {"value": repr(value)[:40], "known": ", ".join(QualitySettings.Measure.values)},
                field=field,
            )
        return value
    if field == "min_answered":
        return _number(field, value, 1, MIN_ANSWERED_MAX, whole=True)
    if field == "abandon_hours":
        return _number(field, value, 0, HOURS_MAX, whole=True)
    if field == "nudge":
        if not isinstance(value, bool):
            raise QualityError(_("must be true or false"), field=field)
        return value
    if field == "nudge_seconds":
        return _number(field, value, 1, NUDGE_SECONDS_MAX, whole=True)
    raise QualityError(
        _("unknown setting %(field)s; settings: %(known)s")
        % {"field": repr(field)[:40], "known": ", ".join(SETTINGS_FIELDS)},
        field=field,
    )


@transaction.atomic
def quality_settings_set(*, round_: Round, user: AbstractBaseUser | None, **changes: Any) -> QualitySettings:
    """Change some of the round's settings (the others keep their value): every value is checked
    first, and a bad one raises QualityError naming it with nothing written."""
    checked = {field: _checked(round_, field, value) for field, value in changes.items()}
    settings = quality_settings(round_)
    for field, value in checked.items():
        setattr(settings, field, value)
    settings.updated_by = user if user is not None and user.is_authenticated else None
    settings.save()
    return settings


# Control items ---------------------------------------------------------------------------------


def control_candidates(round_: Round, source: Round | None) -> list[int]:
    """Item ids that may be controls in ``round_``: resolved gold of another round (of ``source``
    when given) outside the round's item set; in a prefilled round only items its parser
    predicted from the round's text field (a control must be prefilled like the others, or the
    empty form would tell); in a masked round only items with a masked text."""
    gold = GoldItem.objects.filter(status=GoldItem.Status.RESOLVED, construals__index=1).exclude(round=round_)
    if source is not None:
        gold = gold.filter(round=source)
    gold = gold.exclude(item_id__in=round_.item_set.members.values("item_id"))
    if round_.text_field == Round.TEXT_MASKED:
        gold = gold.exclude(item__masked_text="")
    if not round_.is_blind and round_.prefill_parser:
        predicted = ParserPrediction.objects.filter(parser=round_.prefill_parser, legal=True)
        gold = gold.filter(item_id__in=read_from(predicted, round_.text_field).values("item_id"))
    return list(gold.order_by("item_id").values_list("item_id", flat=True).distinct())


def controls_wanted(rate: float, items: int) -> int:
    """Controls for an annotator with ``items`` items of the round: ``rate`` of them, rounded
    half up, and at least one when the rate and the queue are not empty."""
    if rate <= 0 or items <= 0:
        return 0
    return max(1, math.floor(rate * items + 0.5))


@dataclass(frozen=True)
class ControlsAdded:
    """What controls_add did: controls added per annotator, controls still missing per annotator
    (nothing eligible left for them), and how many items could be controls at all."""

    added: dict[str, int]
    short: dict[str, int]
    candidates: int

    @property
    def total(self) -> int:
        return sum(self.added.values())

    def summary(self) -> str:
        text = _("%(n)s control items added") % {"n": self.total}
        if self.added:
            text += " (" + ", ".join(f"{name} {n}" for name, n in sorted(self.added.items())) + ")"
        if self.short:
            names = ", ".join(f"{name} {n}" for name, n in sorted(self.short.items()))
            text += "; " + _(
                "%(names)s short: of the %(candidates)s gold items that could be controls, no more are "
                "left that they have not annotated already"
            ) % {"names": names, "candidates": self.candidates}
        return text


def _no_candidates(round_: Round, source: Round | None) -> str:
    where = _("round %(round)s") % {"round": source.name} if source is not None else _("any other round")
    message = _(
        "no item can be a control in %(round)s: none of the resolved gold of %(where)s is outside its set"
    )
    if not round_.is_blind and round_.prefill_parser:
        message = _(
            "no item can be a control in %(round)s: none of the resolved gold of %(where)s outside its set "
            "has a prediction of its parser %(parser)s read from its text field (a control must be "
            "prefilled like the others)"
        )
    return message % {"round": round_.name, "where": where, "parser": round_.prefill_parser}


@transaction.atomic
def controls_add(
    *, round_: Round, user: AbstractBaseUser | None = None, seed: int = 0, **changes: Any
) -> ControlsAdded:
    """Mix control items into the round at its control rate (after applying ``changes`` to its
    settings: control_rate, control_source...): each annotator with items in the round gets
    ``controls_wanted`` controls in all, each a resolved gold item of another round they never had
    in any round, spread evenly through what is left of their queue. Running it again adds only
    what is missing. Raises QualityError (nothing written) when the rate is 0 or no item can be a
    control."""
    round_ = Round.objects.select_for_update().select_related("item_set").get(pk=round_.pk)
    settings = (
        quality_settings_set(round_=round_, user=user, **changes) if changes else quality_settings(round_)
    )
    if settings.control_rate <= 0:
        raise QualityError(_("the control rate is 0: choose a rate above 0 first"), field="control_rate")
    candidates = control_candidates(round_, settings.control_source)
    if not candidates:
        raise QualityError(_no_candidates(round_, settings.control_source), field="control_source")
    rows = (
        Assignment.objects.filter(round=round_)
        .order_by()
        .values_list("annotator_id", "annotator__username", "control")
        .annotate(n=Count("pk"))
    )
    names: dict[int, str] = {}
    items: Counter[int] = Counter()
    controls: Counter[int] = Counter()
    for annotator_id, username, control, n in rows:
        names[annotator_id] = username
        (controls if control else items)[annotator_id] += n
    had = set(
        Assignment.objects.filter(annotator_id__in=list(names), item_id__in=candidates).values_list(
            "annotator_id", "item_id"
        )
    )
    used = Counter(Assignment.objects.filter(round=round_, control=True).values_list("item_id", flat=True))
    rng = random.Random(f"quality-controls:{round_.pk}:{seed}")
    added: dict[str, int] = {}
    short: dict[str, int] = {}
    for annotator_id in sorted(names, key=names.get):
        need = controls_wanted(settings.control_rate, items[annotator_id]) - controls[annotator_id]
        if need <= 0:
            continue
        eligible = [i for i in candidates if (annotator_id, i) not in had]
        rng.shuffle(eligible)
        eligible.sort(key=lambda i: used[i])  # stable: the least used first, at random among equals
        chosen = eligible[:need]
        if chosen:
            _insert_spread(round_, annotator_id, chosen)
            used.update(chosen)
            added[names[annotator_id]] = len(chosen)
        if len(chosen) < need:
            short[names[annotator_id]] = need - len(chosen)
    if added:
        round_changed(round_.pk)
    return ControlsAdded(added, short, len(candidates))


def spread_slots(tail: int, controls: int) -> list[int]:
    """Where ``controls`` new items go among ``tail`` queued ones (indices into the merged list of
    tail + controls): evenly spaced, never first unless the tail is empty (the first is the item
    the annotator may have open)."""
    total = tail + controls
    return [(k + 1) * total // (controls + 1) for k in range(controls)]


def _insert_spread(round_: Round, annotator_id: int, item_ids: list[int]) -> None:
    """Insert control assignments of ``item_ids`` evenly through the annotator's queue from its
    first pending item on; the later items shift to make room, positions stay contiguous."""
    mine = list(Assignment.objects.filter(round=round_, annotator_id=annotator_id).order_by("position", "pk"))
    first = next((k for k, a in enumerate(mine) if a.status == Assignment.Status.PENDING), len(mine))
    tail = mine[first:]
    start = tail[0].position if tail else (mine[-1].position + 1 if mine else 0)
    slots = set(spread_slots(len(tail), len(item_ids)))
    queued, new_items = iter(tail), iter(item_ids)
    moved: list[Assignment] = []
    made: list[Assignment] = []
    for index in range(len(tail) + len(item_ids)):
        position = start + index
        if index in slots:
            made.append(
                Assignment(
                    round=round_, item_id=next(new_items), annotator_id=annotator_id, position=position,
                    status=Assignment.Status.PENDING, control=True,
                )
            )  # fmt: skip
            continue
        assignment = next(queued)
        if assignment.position != position:
            assignment.position = position
            moved.append(assignment)
    Assignment.objects.bulk_update(moved, ["position"], batch_size=2000)
    Assignment.objects.bulk_create(made)


# The nudge ------------------------------------------------------------------------------------


def nudge_check(*, assignment: Assignment, annotation: Annotation) -> Nudge | None:
    """Record a nudge when the round asks for them and this save kept all twelve prefilled values
    in less than its nudge time (a time of 0 is unknown: a page without its script); None when
    not. Only a save that wrote a revision counts."""
    if not annotation.changed or not annotation.prefill or annotation.time_spent_ms <= 0:
        return None
    if len(annotation.kept_prefill) != len(SLOT_FIELDS):
        return None
    settings = quality_settings(assignment.round)
    if not settings.nudge or annotation.time_spent_ms >= settings.nudge_seconds * 1000:
        return None
    return Nudge.objects.create(
        round_id=assignment.round_id,
        assignment=assignment,
        annotator_id=assignment.annotator_id,
        version=annotation.version,
        time_spent_ms=annotation.time_spent_ms,
    )
