"""The tool's domain events, for apps above to listen to without the apps that send them importing
those apps (the layers: tests/app/test_layers.py). The webhooks app connects to ``domain_event``
in its AppConfig.ready and turns each event into signed deliveries (docs/webhooks.md).

``domain_event`` kwargs: ``name`` (``"gold.resolved"``...), ``payload`` (a JSON-able dict: ids and
the essentials), ``at`` (when it happened, an aware datetime). ``event_send`` sends it once the
current transaction commits, so a rolled-back write sends nothing and a listener reads committed
rows; a listener that fails is logged and never fails the write that caused the event.

The events and their senders: ``item_set.imported`` (annotator.imports.items_import),
``round.completed`` (annotator.services.annotation_submit through ``round_completed_check``),
``gold.resolved`` (adjudication.gold.services.gold_resolve), ``convention.decided``
(adjudication.gold.services.convention_vote), ``rule_set.activated``
(adjudication.rule_revisions.services.revision_activate), ``job.finished`` (jobs.services._finish)
and ``export.ready`` (exports.export and exports.raw_export)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.dispatch import Signal
from django.utils import timezone

from annotator.models import Assignment, Round

log = logging.getLogger(__name__)

domain_event = Signal()

#: asked before an event whose detection costs queries: does any listener want ``name`` now?
#: Listeners register a question here (webhooks: is there an active hook for it?); with none
#: registered, or none that says yes, the detection is skipped
_interest: list[Callable[[str], bool]] = []


def interest_register(wants: Callable[[str], bool]) -> None:
    if wants not in _interest:
        _interest.append(wants)


def event_wanted(name: str) -> bool:
    return any(wants(name) for wants in _interest)


def event_send(name: str, payload: dict[str, Any]) -> None:
    """Send ``domain_event`` after the current transaction commits (at once outside one)."""
    at = timezone.now()

    def send() -> None:
        for receiver, result in domain_event.send_robust(sender=None, name=name, payload=payload, at=at):
            if isinstance(result, Exception):
                log.error("event %s: %r failed", name, receiver, exc_info=result)

    transaction.on_commit(send)


def round_completed_check(*, assignment: Assignment) -> None:
    """Called by a submit that made ``assignment`` done (its status as the caller held it says
    whether it was done already: then nothing changed and nothing is asked). Once committed, sends
    ``round.completed`` if no assignment of the round is left to do. Cheap for the many submits of
    a round under way: the annotator's own queue (its index) answers first; the round's other
    assignments are read only when this annotator has just finished theirs. Two annotators
    finishing at the same moment may both send it: receivers key on the round's id. Nothing is
    asked when no listener wants the event (``event_wanted``): the load's submits paid a query
    each for it."""
    if assignment.status == Assignment.Status.DONE or not event_wanted("round.completed"):
        return
    round_id, annotator_id = assignment.round_id, assignment.annotator_id

    def check() -> None:
        mine = Assignment.objects.filter(round_id=round_id, annotator_id=annotator_id)
        if mine.filter(status=Assignment.Status.PENDING).exists():  # an index seek (assignment_queue_idx)
            return
        if Assignment.objects.filter(round_id=round_id).exclude(status=Assignment.Status.DONE).exists():
            return
        name = Round.objects.filter(pk=round_id).values_list("name", flat=True).first() or ""
        count = Assignment.objects.filter(round_id=round_id, control=False).count()  # controls: unsaid
        event_send("round.completed", {"round": round_id, "name": name, "assignments": count})

    transaction.on_commit(check)
