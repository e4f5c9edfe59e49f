"""Writes of minimal pairs: create a set, add pairs while it is open, freeze it, open its next
version. Every write checks all it is given first and writes nothing when anything is wrong: a
ContrastError names each bad field (the API's 400); a set whose state refuses the step raises
ContrastConflict (the API's 409)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

import nsmcore
from annotator.models import Item
from contrasts.models import INVARIANCE, NAME_PATTERN, MinimalPair, PairSet
from contrasts.selectors import NotFound, gold_values, item_lookup, newest_version
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES
from rules.rulesets import active_rule_set

TEXT_MAX = 5000
FAMILY_MAX = 64
NOTE_MAX = 2000
NAME_RE = re.compile(NAME_PATTERN)


class ContrastError(ValueError):
    """Values a step cannot take, each named by its field (``targets.agency`` for a slot)."""

    api_status = 400

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        super().__init__("; ".join(f"{k}: {v}" if k else v for k, v in self.problems.items()))

    def api_body(self) -> dict[str, Any]:
        """{field: [message]}, a slot nested under its field: {"targets": {"agency": [message]}}."""
        body: dict[str, Any] = {}
        for key, message in self.problems.items():
            field, _dot, slot = (key or "detail").partition(".")
            if slot:
                body.setdefault(field, {})[slot] = [message]
            elif field == "detail":
                body[field] = message
            else:
                body[field] = [message]
        return body


class ContrastConflict(ContrastError):
    """The set's state refuses the step now (frozen, already frozen, not the newest version)."""

    api_status = 409

    def __init__(self, message: str) -> None:
        super().__init__({"": message})

    def api_body(self) -> dict[str, Any]:
        return {"detail": str(self)}


# Sets ------------------------------------------------------------------------------------------


def pair_set_create(*, user: Any, name: str, note: str = "") -> PairSet:
    """Version 1 of a new set. A name already used is a conflict: open a new version of it."""
    name = name.strip() if isinstance(name, str) else ""
    problems = {}
    if not NAME_RE.fullmatch(name):
        problems["name"] = _(
            "use 1-63 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    note_problem = _text_problem(note, NOTE_MAX, required=False)
    if note_problem:
        problems["note"] = note_problem
    if problems:
        raise ContrastError(problems)
    taken = newest_version(name)
    if taken:
        raise ContrastConflict(
            _("a set named %(name)s exists (newest v%(version)s): open a new version of it")
            % {"name": name, "version": taken}
        )
    try:
        with transaction.atomic():
            return PairSet.objects.create(name=name, version=1, note=note.strip(), created_by=_who(user))
    except IntegrityError:  # a concurrent creation took the name first
        raise ContrastConflict(_("a set named %(name)s was just created: reload") % {"name": name}) from None


def pair_set_freeze(*, user: Any, pair_set: PairSet) -> PairSet:
    """Close an open set: from now on it is what its scores and exports name, unchanged."""
    if not pair_set.pairs.exists():
        raise ContrastConflict(
            _("%(set)s has no pairs yet: add one before freezing it") % {"set": pair_set.spec}
        )
    claimed = PairSet.objects.filter(pk=pair_set.pk, frozen_at__isnull=True).update(
        frozen_at=timezone.now(), frozen_by=_who(user)
    )
    if not claimed:
        raise ContrastConflict(_("%(set)s is already frozen") % {"set": pair_set.spec})
    pair_set.refresh_from_db()
    return pair_set


def pair_set_new_version(*, user: Any, pair_set: PairSet) -> PairSet:
    """The next version of a frozen set, open, holding a copy of its pairs (who wrote each, and
    when, kept)."""
    if pair_set.is_open:
        raise ContrastConflict(
            _("%(set)s is open: freeze it first (a new version starts from a frozen one)")
            % {"set": pair_set.spec}
        )
    newest = newest_version(pair_set.name)
    if newest != pair_set.version:
        raise ContrastConflict(
            _("%(name)s@v%(newest)s is newer: open a new version from it")
            % {"name": pair_set.name, "newest": newest}
        )
    try:
        with transaction.atomic():
            fresh = PairSet.objects.create(
                name=pair_set.name, version=pair_set.version + 1, note=pair_set.note, created_by=_who(user)
            )
            MinimalPair.objects.bulk_create(
                MinimalPair(
                    pair_set=fresh,
                    item_id=p.item_id,
                    text=p.text,
                    family=p.family,
                    targets=p.targets,
                    invariance=p.invariance,
                    expected=p.expected,
                    note=p.note,
                    created_by_id=p.created_by_id,
                    created_at=p.created_at,
                )
                for p in pair_set.pairs.order_by("id")
            )
    except IntegrityError:
        raise ContrastConflict(
            _("%(name)s@v%(version)s was just opened: reload")
            % {"name": pair_set.name, "version": newest + 1}
        ) from None
    return fresh


# Pairs -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairValues:
    """A pair as checked: what is written."""

    item: Item
    text: str
    family: str
    targets: dict[str, list[str]]  # slot -> [from, to], in the schema's order
    invariance: bool
    expected: str
    note: str


def pair_check(
    *,
    item: Any,
    text: Any,
    targets: Mapping[str, Any] | None = None,
    from_values: Mapping[str, Any] | None = None,
    expected: Any = "",
    invariance: bool = False,
    family: Any = "",
    note: Any = "",
    rule_set: nsmcore.RuleSet | None = None,
    gold: Mapping[int, Mapping[str, str]] | None = None,
) -> PairValues:
    """Check a pair; ContrastError names every bad field. ``targets`` maps a slot to the value
    it should take in the rewrite ("" or None: no change); ``from_values`` the value it has in
    the item's text, needed only when the item has no resolved gold (gold says it otherwise, and
    a stated value must agree with it). ``gold`` (item id -> slots) spares a query per pair."""
    problems: dict[str, str] = {}
    found: Item | None = None
    try:
        found = item_lookup(item)
    except NotFound as error:
        problems["item"] = str(error)
    text_problem = _text_problem(text, TEXT_MAX, required=True)
    if text_problem:
        problems["text"] = text_problem
    elif found is not None and text.strip() == found.text.strip():
        problems["text"] = _("this is the item's own text: write the rewrite")
    gold_slots = None
    if found is not None:
        gold_slots = (gold if gold is not None else gold_values([found.pk])).get(found.pk)
    wanted = _slot_values(targets, "targets", problems)
    stated = _slot_values(from_values, "from", problems)
    chosen: dict[str, list[str]] = {}
    for name in SLOT_NAMES:
        if name in stated and name not in wanted and f"targets.{name}" not in problems:
            problems[f"from.{name}"] = _("%(slot)s is not a target slot: give the value it changes to") % {
                "slot": name
            }
        if name not in wanted:
            continue
        before = gold_slots[name] if gold_slots else stated.get(name)
        if gold_slots and name in stated and stated[name] != gold_slots[name]:
            problems[f"from.{name}"] = _("the item's gold has %(slot)s=%(value)s") % {
                "slot": name,
                "value": gold_slots[name],
            }
        elif before is None and found is not None:
            problems[f"from.{name}"] = _(
                "the item has no resolved gold: say which value %(slot)s has in the item's text"
            ) % {"slot": name}
        elif before == wanted[name]:
            problems[f"targets.{name}"] = _("%(value)s on both sides: a target slot must change") % {
                "value": before
            }
        elif before is not None:
            chosen[name] = [before, wanted[name]]
    labels = (rule_set or active_rule_set()).emotions
    expected = expected.strip() if isinstance(expected, str) else expected
    if invariance:
        if wanted:
            problems["targets"] = _("an invariance pair changes no slot: leave every slot unchanged")
        if expected:
            problems["expected"] = _("an invariance pair expects the item's own label: leave it empty")
        expected = ""
    else:
        if not wanted and not any(k.startswith("targets") for k in problems):
            problems["targets"] = _("name a slot the rewrite flips, or mark the pair as an invariance pair")
        if not expected:
            problems["expected"] = _("choose the label the rewritten text should route to")
        elif expected not in labels:
            problems["expected"] = _("%(label)s is not an emotion of the active rule set: %(labels)s") % {
                "label": repr(expected),
                "labels": ", ".join(labels),
            }
    family_problem = _text_problem(family, FAMILY_MAX, required=False)
    if family_problem:
        problems["family"] = family_problem
    note_problem = _text_problem(note, NOTE_MAX, required=False)
    if note_problem:
        problems["note"] = note_problem
    if problems:
        raise ContrastError(problems)
    assert found is not None
    family = family.strip() or (INVARIANCE if invariance else "+".join(chosen))
    return PairValues(found, text.strip(), family, chosen, bool(invariance), expected, note.strip())


def pair_add(*, user: Any, pair_set: PairSet, **values: Any) -> MinimalPair:
    """Add one pair to an open set (``values``: pair_check's); nothing is written on a refusal."""
    (pair,) = pairs_add(user=user, pair_set=pair_set, rows=[values])
    return pair


def pairs_add(
    *, user: Any, pair_set: PairSet, rows: Sequence[Mapping[str, Any]], where: Sequence[str] = ()
) -> list[MinimalPair]:
    """Add pairs to an open set, all or none: every row is checked first, and a refusal names
    each bad field (prefixed with ``where[k]``, e.g. "line 3", when given)."""
    with transaction.atomic():
        locked = PairSet.objects.select_for_update().get(pk=pair_set.pk)
        if not locked.is_open:
            raise ContrastConflict(
                _("%(set)s is frozen: open a new version of it to add pairs") % {"set": locked.spec}
            )
        rule_set = active_rule_set()
        checked: list[PairValues] = []
        problems: dict[str, str] = {}
        for k, row in enumerate(rows):
            try:
                checked.append(pair_check(**row, rule_set=rule_set))
            except ContrastError as error:
                prefix = f"{where[k]}: " if k < len(where) else ""
                problems |= {
                    f"{prefix}{field}" if prefix else field: m for field, m in error.problems.items()
                }
        if problems:
            raise ContrastError(problems)
        made = [
            MinimalPair(
                pair_set=locked,
                item=v.item,
                text=v.text,
                family=v.family,
                targets=v.targets,
                invariance=v.invariance,
                expected=v.expected,
                note=v.note,
                created_by=_who(user),
            )
            for v in checked
        ]
        return MinimalPair.objects.bulk_create(made)


# Helpers ---------------------------------------------------------------------------------------


def _who(user: Any) -> Any:
    return user if getattr(user, "pk", None) else None


def _text_problem(value: Any, limit: int, *, required: bool) -> str:
    if not isinstance(value, str):
        return _("expected text")
    if "\x00" in value:
        return _("contains a NUL character")
    if required and not value.strip():
        return _("write the rewritten text")
    if len(value.strip()) > limit:
        return _("at most %(limit)s characters") % {"limit": limit}
    return ""


def _slot_values(values: Mapping[str, Any] | None, field: str, problems: dict[str, str]) -> dict[str, str]:
    """{slot: value} with "" and None left out (no change); an unknown slot or value is named."""
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        problems[field] = _('expected an object of slot values: {"others_know": "can-know"}')
        return {}
    out: dict[str, str] = {}
    for name, value in values.items():
        if value in ("", None):
            continue
        slot = SLOT_BY_NAME.get(name) if isinstance(name, str) else None
        if slot is None:
            problems[f"{field}.{name}"] = _("unknown slot; slots: %(slots)s") % {
                "slots": ", ".join(SLOT_NAMES)
            }
        elif not isinstance(value, str) or value not in slot.values:
            problems[f"{field}.{name}"] = _("%(value)s is not a value of %(slot)s; allowed: %(allowed)s") % {
                "value": repr(value),
                "slot": name,
                "allowed": ", ".join(slot.values),
            }
        else:
            out[name] = value
    return out
