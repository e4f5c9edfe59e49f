"""Reads: each annotator's accuracy on the round's control items (per slot and routed label, with
exact intervals), the alerts, the control progress, the moves and the nudges.

An answered control is a done control assignment whose item's gold is resolved. Per slot, the
share of answers equal to gold construal 1; routed label, the share whose explication routes (the
active rule set, residue included) to the label gold construal 1 routes to; mean per-slot
accuracy, the mean of the twelve. Intervals are Clopper-Pearson 95%."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Min

import nsmcore
from adjudication.models import GoldConstrual, GoldItem
from annotator.models import SLOT_FIELDS, Assignment, Round
from nsmcore import clopper_pearson
from quality.models import Move, Nudge, QualitySettings
from quality.services import quality_settings
from rules.rulesets import active_rule_set


@dataclass(frozen=True)
class Share:
    """k of n, with its exact 95% interval (None for n = 0)."""

    k: int
    n: int

    @property
    def value(self) -> float | None:
        return self.k / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return clopper_pearson(self.k, self.n) if self.n else None

    def as_dict(self) -> dict[str, Any]:
        low, high = self.interval or (None, None)
        return {"k": self.k, "n": self.n, "value": self.value, "low": low, "high": high}


@dataclass(frozen=True)
class ControlScore:
    """One annotator's control items in a round: how many, how far, and how well answered."""

    annotator: str
    assigned: int
    done: int
    skipped: int
    answered: int  # done, with resolved gold to score against
    routed: Share
    slots: dict[str, Share]
    measured: float | None  # the round's alert measure
    alert: bool

    @property
    def pending(self) -> int:
        return self.assigned - self.done - self.skipped

    @property
    def mean_slots(self) -> float | None:
        return _mean(self.slots)

    def as_dict(self) -> dict[str, Any]:
        return {
            "annotator": self.annotator,
            "assigned": self.assigned,
            "done": self.done,
            "skipped": self.skipped,
            "pending": self.pending,
            "answered": self.answered,
            "routed": self.routed.as_dict(),
            "mean_slots": self.mean_slots,
            "slots": {name: share.as_dict() for name, share in self.slots.items()},
            "measured": self.measured,
            "alert": self.alert,
        }


def _mean(slots: dict[str, Share]) -> float | None:
    values = [s.value for s in slots.values() if s.value is not None]
    return sum(values) / len(values) if values else None


def _gold(item_ids: set[int]) -> dict[int, dict[str, Any]]:
    """item id -> construal 1 of its resolved gold, as an explication object."""
    rows = GoldConstrual.objects.filter(
        gold__item_id__in=item_ids, gold__status=GoldItem.Status.RESOLVED, index=1
    ).values_list("gold__item_id", "slots", "residue")
    return {item_id: {**slots, "residue": residue} for item_id, slots, residue in rows}


def control_scores(round_: Round, settings: QualitySettings | None = None) -> list[ControlScore]:
    """Every annotator with control items in the round, by name, scored against gold."""
    settings = settings or quality_settings(round_)
    rows = list(
        Assignment.objects.filter(round=round_, control=True)
        .order_by("annotator__username", "position")
        .values_list("annotator__username", "status", "item_id", "annotation__residue", *(
            f"annotation__{name}" for name in SLOT_FIELDS
        ))
    )  # fmt: skip
    gold = _gold({row[2] for row in rows if row[1] == Assignment.Status.DONE})
    answers: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    counts: dict[str, dict[str, int]] = {}
    for username, status, item_id, residue, *slots in rows:
        count = counts.setdefault(username, {"assigned": 0, "done": 0, "skipped": 0})
        count["assigned"] += 1
        if status in ("done", "skipped"):
            count[status] += 1
        answers.setdefault(username, [])
        if status == Assignment.Status.DONE and item_id in gold and slots[0] is not None:
            given = {**dict(zip(SLOT_FIELDS, slots, strict=True)), "residue": residue or ""}
            answers[username].append((given, gold[item_id]))
    rule_set = active_rule_set()
    out = []
    for username, pairs in answers.items():
        labels = nsmcore.route_batch([obj for pair in pairs for obj in pair], rule_set) if pairs else []
        routed = Share(
            sum(labels[2 * k].label == labels[2 * k + 1].label for k in range(len(pairs))), len(pairs)
        )
        slots = {
            name: Share(sum(given[name] == truth.get(name) for given, truth in pairs), len(pairs))
            for name in SLOT_FIELDS
        }
        measured = routed.value if settings.measure == QualitySettings.Measure.ROUTED else _mean(slots)
        alert = measured is not None and len(pairs) >= settings.min_answered and measured < settings.threshold
        out.append(
            ControlScore(
                username,
                **counts[username],
                answered=len(pairs),
                routed=routed,
                slots=slots,
                measured=measured,
                alert=alert,
            )
        )
    return out


def control_alerts(scores: list[ControlScore]) -> list[ControlScore]:
    return [s for s in scores if s.alert]


@dataclass(frozen=True)
class ControlProgress:
    assigned: int
    done: int
    skipped: int

    @property
    def pending(self) -> int:
        return self.assigned - self.done - self.skipped


def control_progress(scores: list[ControlScore]) -> ControlProgress:
    """The round's control items together: shown apart from the round's own work."""
    return ControlProgress(
        sum(s.assigned for s in scores), sum(s.done for s in scores), sum(s.skipped for s in scores)
    )


def round_moves(round_: Round, *, limit: int = 200):
    """The round's abandoned assignments moved back to the pool, newest first."""
    return Move.objects.filter(round=round_).select_related("item", "from_annotator", "to_annotator", "by")[
        :limit
    ]


@dataclass(frozen=True)
class NudgeCount:
    annotator: str
    nudges: int
    fastest_ms: int


def nudge_counts(round_: Round) -> list[NudgeCount]:
    """Per annotator, how often they were nudged in the round and their fastest nudged save."""
    rows = (
        Nudge.objects.filter(round=round_)
        .order_by("annotator__username")
        .values("annotator__username")
        .annotate(n=Count("pk"), fastest=Min("time_spent_ms"))
    )
    return [NudgeCount(r["annotator__username"], r["n"], r["fastest"]) for r in rows]


def quality_report(round_: Round) -> dict[str, Any]:
    """Everything the quality page, its API and ``manage.py quality report`` show, as plain data."""
    settings = quality_settings(round_)
    scores = control_scores(round_, settings)
    progress = control_progress(scores)
    return {
        "round": round_.name,
        "settings": settings_dict(settings),
        "controls": {
            "assigned": progress.assigned,
            "done": progress.done,
            "skipped": progress.skipped,
            "pending": progress.pending,
        },
        "annotators": [s.as_dict() for s in scores],
        "alerts": [s.annotator for s in control_alerts(scores)],
        "moves": [
            {
                "item": m.item.source_id,
                "from": m.from_annotator.username,
                "to": m.to_annotator.username,
                "at": m.at.isoformat(),
                "opened_at": m.opened_at.isoformat(),
                "idle_since": m.idle_since.isoformat(),
                "hours": m.hours,
                "draft_deleted": m.draft_deleted,
                "by": m.by.username if m.by else None,
            }
            for m in round_moves(round_)
        ],
        "nudges": [
            {"annotator": n.annotator, "nudges": n.nudges, "fastest_ms": n.fastest_ms}
            for n in nudge_counts(round_)
        ],
    }


def settings_dict(settings: QualitySettings) -> dict[str, Any]:
    return {
        "control_source": settings.control_source.name if settings.control_source_id else None,
        "control_rate": settings.control_rate,
        "threshold": settings.threshold,
        "measure": settings.measure,
        "min_answered": settings.min_answered,
        "abandon_hours": settings.abandon_hours,
        "nudge": settings.nudge,
        "nudge_seconds": settings.nudge_seconds,
        "updated_by": settings.updated_by.username if settings.updated_by_id else None,
        "updated_at": settings.updated_at.isoformat() if settings.updated_at else None,
    }
