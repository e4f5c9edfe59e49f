"""Training data for the parser from the tool: a round's (or an item set's) resolved gold, and,
when chosen, annotator passes of a round (a silver round's passes are its model annotators).

Reads only: callers that may write (the train job, the commands) run ``gold_sync`` first; the
gold page's download (a GET) offers what is resolved now. The pairs are checked and written by
nsmcore.training_data, which refuses held-out (eval tier) items, naming them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from adjudication.models import GoldConstrual, GoldItem
from annotator.models import SLOT_FIELDS, Annotation, Assignment, Item, ItemSet, ItemSetMember, Round
from nsmcore.training_data import (
    HELD_OUT_TIERS,
    LabelledText,
    TrainingDataError,
    TrainingRecord,
    held_out_message,
    training_records,
)
from rules.rulesets import active_rule_set

GOLD = "gold"
ANNOTATOR = "annotator"


@dataclass(frozen=True)
class TrainingSource:
    records: list[TrainingRecord]
    #: where the data came from, for the manifest and the adapter's card
    meta: dict[str, Any] = field(default_factory=dict)


# Training data a feature above this one adds (the minimal pairs' rewritten texts): a name a
# train job's passes may list, and a function of (the scope's item ids, the round or None) giving
# records as _gold_pairs does. Registered from the feature's AppConfig.ready (no upward import).
Source = Callable[[Any, Round | None], list[dict[str, Any]]]
_SOURCES: dict[str, Source] = {}


def register_source(name: str, fn: Source) -> None:
    _SOURCES[name] = fn


def parse_passes(passes: str | Iterable[str]) -> list[str]:
    """``"gold,annotator:alice"`` (or a list) as pass keys; TrainingDataError naming a bad one."""
    keys = [p.strip() for p in (passes.split(",") if isinstance(passes, str) else passes) if p.strip()]
    if not keys:
        raise TrainingDataError(_("no passes chosen: name gold and/or annotator:<username>"))
    for key in keys:
        kind, _sep, name = key.partition(":")
        if key != GOLD and key not in _SOURCES and not (kind == ANNOTATOR and name):
            raise TrainingDataError(
                _(
                    "pass %(pass)s: training data comes from gold or annotator:<username> passes "
                    "(a parser's predictions are not training data)"
                )
                % {"pass": repr(key)}
            )
    return list(dict.fromkeys(keys))


def _gold_pairs(scope: dict[str, Any], round_: Round | None) -> list[dict[str, Any]]:
    construals = GoldConstrual.objects.filter(gold__status=GoldItem.Status.RESOLVED, **scope)
    if round_ is not None:
        construals = construals.filter(gold__round=round_)
    rows = construals.order_by("gold__item_id", "index").values_list(
        "gold__item__source_id", "gold__item__text", "gold__item__masked_text", "gold__round__text_field",
        "index", "slots",
    )  # fmt: skip
    return [
        {
            "id": source_id,
            "text": _text(text, masked, field_),
            "explication": slots,
            "source": GOLD,
            "construal": index,
        }
        for source_id, text, masked, field_, index, slots in rows
    ]


def _text(text: str, masked: str, field_: str) -> str:
    return masked if field_ == Round.TEXT_MASKED and masked else text


def _annotator_pairs(round_: Round, username: str) -> list[dict[str, Any]]:
    done = Assignment.objects.filter(round=round_, status=Assignment.Status.DONE)
    if not done.filter(annotator__username=username).exists():
        known = sorted(set(done.values_list("annotator__username", flat=True))) or [_("none yet")]
        raise TrainingDataError(
            _(
                "pass annotator:%(username)s: no submitted annotations in round %(round)s; "
                "its annotators: %(known)s"
            )
            % {"username": username, "round": round_.name, "known": ", ".join(known)}
        )
    rows = (
        Annotation.objects.filter(
            assignment__round=round_,
            assignment__status=Assignment.Status.DONE,
            assignment__annotator__username=username,
            assignment__control=False,
        )
        .order_by("assignment__item_id")
        .values_list("assignment__item__source_id", "assignment__item__text", "assignment__item__masked_text",
                     *SLOT_FIELDS)
    )  # fmt: skip
    return [
        {
            "id": source_id,
            "text": _text(text, masked, round_.text_field),
            "explication": dict(zip(SLOT_FIELDS, slots, strict=True)),
            "source": f"{ANNOTATOR}:{username}",
        }
        for source_id, text, masked, *slots in rows
    ]


def training_data(
    *, round_: Round | None = None, item_set: ItemSet | None = None, passes: str | Iterable[str] = GOLD
) -> TrainingSource:
    """The checked training records of a round or an item set, and where they came from.
    TrainingDataError (with the item ids) when an item is held out, a pass is unknown, or there
    is nothing to train on."""
    if (round_ is None) == (item_set is None):
        raise TrainingDataError(_("choose a round or an item set, not both"))
    keys = parse_passes(passes)
    scope_set = round_.item_set if round_ is not None else item_set
    members = ItemSetMember.objects.filter(item_set=scope_set).values("item_id")
    pairs: list[dict[str, Any]] = []
    for key in keys:
        if key == GOLD:
            pairs += _gold_pairs({"gold__item_id__in": members}, round_)
        elif key in _SOURCES:
            pairs += _SOURCES[key](members, round_)
        elif round_ is None:
            raise TrainingDataError(
                _("pass %(pass)s: annotator passes belong to a round; choose a round") % {"pass": repr(key)}
            )
        else:
            pairs += _annotator_pairs(round_, key.partition(":")[2])
    item_ids = Item.objects.filter(source_id__in={p["id"] for p in pairs}, pk__in=members)
    tiers: dict[str, set[str]] = {}
    sets: dict[int, dict[str, Any]] = {}
    for source_id, set_id, name, tier in ItemSetMember.objects.filter(item__in=item_ids).values_list(
        "item__source_id", "item_set_id", "item_set__name", "item_set__tier"
    ):
        tiers.setdefault(source_id, set()).add(tier)
        sets[set_id] = {"id": set_id, "name": name, "tier": tier}
    records = training_records(pairs, tiers_of=tiers)
    rule_set = active_rule_set()
    meta = {
        "scope": f"round {round_.name}" if round_ is not None else f"item set {item_set.name}",
        "round": {"id": round_.pk, "name": round_.name, "text_field": round_.text_field} if round_ else None,
        "item_set": {"id": scope_set.pk, "name": scope_set.name, "tier": scope_set.tier},
        "item_sets": [sets[k] for k in sorted(sets)],
        "passes": keys,
        "rule_set_version": rule_set.version,
        "rule_set_hash": rule_set.content_hash,
    }
    return TrainingSource(records, meta)


def training_refusal(round_: Round) -> str:
    """Why the round's resolved gold cannot be downloaded as training data ("" when it can): its
    held-out items, named. One query, for the gold page, which hides the links and says why (the
    download itself checks everything)."""
    resolved = GoldItem.objects.filter(round=round_, status=GoldItem.Status.RESOLVED).values("item_id")
    held = (
        ItemSetMember.objects.filter(item_set__tier__in=HELD_OUT_TIERS, item_id__in=resolved)
        .order_by("item__source_id")
        .values_list("item__source_id", flat=True)
        .distinct()
    )
    ids = list(held)
    return held_out_message(ids) if ids else ""


@dataclass(frozen=True)
class LabelledSource:
    """The labelled texts an item set gives training through the rules, and what was left out."""

    rows: list[Any]  # nsmcore.training_data.LabelledText
    left_out: dict[str, int]


def labelled_texts(item_set: ItemSet, *, text_field: str, exclude: Iterable[str] = ()) -> LabelledSource:
    """Every item of ``item_set`` as a labelled text (its reference label and appraisal ratings)
    in ``text_field``, leaving out, counted: items in a held-out (eval-tier) set, the ``exclude``
    items by corpus id (those whose gold trains the same model: they are already supervised), and
    items without a label the active rule set knows."""
    emotions = set(active_rule_set().emotions)
    members = ItemSetMember.objects.filter(item_set=item_set).values("item_id")
    held = set(
        ItemSetMember.objects.filter(item_set__tier__in=HELD_OUT_TIERS, item_id__in=members).values_list(
            "item_id", flat=True
        )
    )
    excluded = set(exclude)
    left_out = {"held_out": 0, "supervised_by_gold": 0, "no_known_label": 0}
    rows = []
    for pk, source_id, text, masked, label, appraisals in (
        Item.objects.filter(pk__in=members)
        .order_by("pk")
        .values_list("pk", "source_id", "text", "masked_text", "reference_label", "appraisals")
    ):
        if pk in held:
            left_out["held_out"] += 1
        elif source_id in excluded:
            left_out["supervised_by_gold"] += 1
        elif label not in emotions:
            left_out["no_known_label"] += 1
        else:
            rows.append(LabelledText(_text(text, masked, text_field), label, appraisals or {}, source_id))
    return LabelledSource(rows, left_out)
