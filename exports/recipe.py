"""The recipe of an EmoExpl export: how it was made, so that a reader can see it and ``manage.py
replay`` can rebuild it (exports.replay). It is the manifest's ``recipe`` and is shown on the
export's page and in the API.

It names the moment the export read the database (``as_of``: the newest id of each history
table then, gold changes, annotation revisions, convention votes and rule set activations, and
the newest time they, parser predictions, frozen pair sets, item sets and rounds hold), the
scope, each round's settings (mode, text field, annotators per item, pass kind, prefill parser,
with the parser versions and text fields of the predictions that could prefill it, and its
coders), the item sets behind the records' tiers (tier, seed, how drawn, members and a hash of
them), the seeds, the guidelines (a hash of the slot and value descriptions, the prompt
version, the accepted conventions), the conventions with their votes, the acceptance rule, the
rule set (version, content hash, rules, the activation that made it active) and the renderer
and software versions.

The same function writes it at export time and at replay (from the history as of ``as_of``), so
that an unchanged history gives the same bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db.models import Count, Max
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

import nsmcore
from adjudication.agreement.analysis import SEED
from adjudication.models import Convention, GoldChange, Vote
from annotator.models import AnnotationRevision, Assignment, ItemSet, ItemSetMember, ParserPrediction, Round
from contrasts.models import PairSet
from nsmcore.parsers.prompt import PROMPT_VERSION, guidelines_block
from rules.models import RuleSetActivation

RECIPE_VERSION = 1
NEVER = datetime(1970, 1, 1, tzinfo=UTC)  # the moment of an empty database: no row is older


@dataclass(frozen=True)
class AsOf:
    """The moment an export read the database, told by the database itself: the newest row of each
    history table then (ids grow with time, so "id <= as_of" is "written before the export read"),
    and ``at``, the newest time those tables, parser predictions, frozen pair sets, item sets and
    rounds hold (None on an empty database). No clock is read: the same database gives the same
    recipe, and so the same bytes; when the export ran is in its history row (``Export.created_at``)."""

    at: datetime | None
    gold_change: int
    annotation_revision: int
    convention_vote: int
    rule_set_activation: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": self.at.isoformat() if self.at else None,
            "gold_change": self.gold_change,
            "annotation_revision": self.annotation_revision,
            "convention_vote": self.convention_vote,
            "rule_set_activation": self.rule_set_activation,
        }


def _last(model: Any) -> int:
    return model.objects.aggregate(last=Max("pk"))["last"] or 0


def _newest_time() -> datetime | None:
    times = [
        GoldChange.objects.aggregate(t=Max("at"))["t"],
        AnnotationRevision.objects.aggregate(t=Max("created_at"))["t"],
        Vote.objects.aggregate(t=Max("created_at"))["t"],
        RuleSetActivation.objects.aggregate(t=Max("at"))["t"],
        ParserPrediction.objects.aggregate(t=Max("created_at"))["t"],
        PairSet.objects.aggregate(t=Max("frozen_at"))["t"],
        ItemSet.objects.aggregate(t=Max("created_at"))["t"],
        Round.objects.aggregate(t=Max("created_at"))["t"],
    ]
    return max((t for t in times if t is not None), default=None)


def as_of_now() -> AsOf:
    """Now, as the export's recipe records it (taken before the export reads gold)."""
    return AsOf(
        _newest_time(), _last(GoldChange), _last(AnnotationRevision), _last(Vote), _last(RuleSetActivation)
    )


class RecipeError(ValueError):
    """A recipe that cannot be read (the replay's bad input)."""


def as_of_recipe(recipe: dict[str, Any]) -> AsOf:
    """The moment a recipe names; RecipeError naming what is missing or malformed."""
    try:
        ids = recipe["as_of"]
        at = parse_datetime(ids["at"]) if ids["at"] is not None else None
        values = [int(ids[k]) for k in ("gold_change", "annotation_revision", "convention_vote")]
        activation = int(ids["rule_set_activation"])
    except (KeyError, TypeError, ValueError) as error:
        raise RecipeError(_("the manifest's recipe lacks or garbles %(part)s") % {"part": error}) from None
    if ids["at"] is not None and at is None:
        raise RecipeError(_("the recipe's as_of.at %(at)s is not a time") % {"at": repr(ids["at"])})
    return AsOf(at, *values, activation)


def as_of_time(at: datetime) -> AsOf:
    """The moment ``at`` for an archive without a recipe: each history table's newest row written
    by then (by its own time column)."""

    def last(model: Any, field: str) -> int:
        return model.objects.filter(**{f"{field}__lte": at}).aggregate(last=Max("pk"))["last"] or 0

    return AsOf(
        at, last(GoldChange, "at"), last(AnnotationRevision, "created_at"), last(Vote, "created_at"),
        last(RuleSetActivation, "at"),
    )  # fmt: skip


def _sha(values: Iterable[Any]) -> str:
    return hashlib.sha256(",".join(map(str, values)).encode()).hexdigest()


def guideline_version() -> dict[str, str]:
    """The guidelines' slot and value descriptions (what annotators and parser prompts read), as a
    hash, with the prompt's version: a change of either is a change of guidelines."""
    return {"slots_sha256": hashlib.sha256(guidelines_block().encode()).hexdigest(), "prompt": PROMPT_VERSION}


def _item_sets(names: set[str]) -> list[dict[str, Any]]:
    sets = ItemSet.objects.filter(name__in=names).select_related("disjoint_from").order_by("name")
    out = []
    for s in sets:
        members = (
            ItemSetMember.objects.filter(item_set=s).order_by("item_id").values_list("item_id", flat=True)
        )
        ids = list(members)
        out.append({
            "name": s.name, "tier": s.tier, "seed": s.seed, "stratify_by": s.stratify_by,
            "per_stratum": s.per_stratum, "size": s.size, "source_filter": s.source_filter,
            "disjoint_from": s.disjoint_from.name if s.disjoint_from else None, "members": len(ids),
            "members_sha256": _sha(ids),
        })  # fmt: skip
    return out


def _round(r: Round, as_of: AsOf) -> dict[str, Any]:
    """A round's settings, the parser versions and text fields of the predictions that could
    prefill it (made by then), and its coders (names: a silver round's are its model passes)."""
    items = Assignment.objects.filter(round=r, control=False).values("item_id")
    prefill = []
    if r.prefill_parser:
        rows = (
            ParserPrediction.objects.filter(parser=r.prefill_parser, item_id__in=items)
            .filter(created_at__lte=as_of.at or NEVER)
            .values_list("parser_version", "text_field")
            .annotate(n=Count("id"))
            .order_by("parser_version", "text_field")
        )
        prefill = [
            {"parser": r.prefill_parser, "parser_version": v, "text_field": f, "predictions": n}
            for v, f, n in rows
        ]
    coders = (
        Assignment.objects.filter(
            round=r, control=False, annotation__revisions__pk__lte=as_of.annotation_revision
        )
        .values_list("annotator__username", flat=True)
        .distinct()
        .order_by("annotator__username")
    )
    return {
        "name": r.name, "item_set": r.item_set.name, "mode": r.mode, "text_field": r.text_field,
        "annotators_per_item": r.annotators_per_item, "pass_kind": r.pass_kind,
        "show_routed_label": r.show_routed_label, "prefill_parser": r.prefill_parser or None,
        "prefill": prefill, "coders": list(coders),
    }  # fmt: skip


def export_recipe(
    *, as_of: AsOf, round_: Round | None, rounds: list[Round], tier_sets: Iterable[str],
    rule_set: nsmcore.RuleSet, activation: RuleSetActivation | None, conventions: list[dict[str, Any]],
    acceptance: tuple[int, float], software_version: str,
) -> dict[str, Any]:  # fmt: skip
    """The recipe (see the module's docstring). ``tier_sets``: the names of the item sets the
    records' tiers name; ``conventions``: the accepted ones, each with ``label`` and its votes
    (``approve``, ``reject``); ``activation``: the activation that made ``rule_set`` active then
    (None: the packaged default, never activated)."""
    names = set(tier_sets) | {r.item_set.name for r in rounds}
    item_sets = _item_sets(names)
    quorum, majority = acceptance
    return {
        "recipe_version": RECIPE_VERSION,
        "as_of": as_of.as_dict(),
        "scope": {"round": round_.name if round_ else None},
        "rounds": [_round(r, as_of) for r in sorted(rounds, key=lambda r: r.name)],
        "item_sets": item_sets,
        "seeds": {
            "agreement_bootstrap": SEED,
            "item_sets": {s["name"]: s["seed"] for s in item_sets if s["seed"] is not None},
        },
        "guideline": {**guideline_version(), "conventions": [c["label"] for c in conventions]},
        "conventions": conventions,
        "acceptance": {"quorum": quorum, "majority": majority},
        "rule_set": {
            "version": rule_set.version,
            "hash": rule_set.content_hash,
            "rules": len(rule_set.rules),
            "activation": activation.pk if activation else None,
            "activated_at": activation.at.isoformat() if activation else None,
        },
        "renderer_version": nsmcore.RENDERER_VERSION,
        "software_version": software_version,
    }


def acceptance_now() -> tuple[int, float]:
    return settings.NSM_CONVENTION_QUORUM, settings.NSM_CONVENTION_MAJORITY


def activation_as_of(as_of: AsOf) -> RuleSetActivation | None:
    """The newest rule set activation by then: the version active when the export read."""
    return (
        RuleSetActivation.objects.filter(pk__lte=as_of.rule_set_activation)
        .select_related("version")
        .order_by("-pk")
        .first()
    )


def votes_of(convention_ids: list[int], as_of: AsOf) -> dict[int, tuple[int, int]]:
    """Convention id -> (approvals, rejections) among the votes cast by then."""
    out: dict[int, tuple[int, int]] = {}
    votes = Vote.objects.filter(convention_id__in=convention_ids, pk__lte=as_of.convention_vote)
    for cid, approve in votes.values_list("convention_id", "approve"):
        yes, no = out.get(cid, (0, 0))
        out[cid] = (yes + approve, no + (not approve))
    return out


def convention_entries(conventions: list[Any], as_of: AsOf) -> list[dict[str, Any]]:
    """The recipe's conventions: each accepted one's label with its votes by then."""
    votes = votes_of([c.pk for c in conventions], as_of)
    return [
        {"label": c.label, "approve": votes.get(c.pk, (0, 0))[0], "reject": votes.get(c.pk, (0, 0))[1]}
        for c in conventions
    ]


def recipe_for_export(
    *, read_at: AsOf, round_: Round | None, rounds: list[Round], tier_sets: Iterable[str],
    rule_set: nsmcore.RuleSet,
) -> dict[str, Any]:  # fmt: skip
    """The recipe the export job writes into its manifest: the conventions accepted as it reads
    (with their votes by then), the rule set it routes with, and the newest activation by then."""
    accepted = Convention.objects.filter(round__in=rounds, status=Convention.Status.ACCEPTED).order_by(
        "number", "version"
    )
    return export_recipe(
        as_of=read_at, round_=round_, rounds=rounds, tier_sets=tier_sets, rule_set=rule_set,
        activation=activation_as_of(read_at), conventions=convention_entries(list(accepted), read_at),
        acceptance=acceptance_now(), software_version=nsmcore.__version__,
    )  # fmt: skip


def recipe_of(export: Any) -> dict[str, Any] | None:
    """A stored export's recipe (an EmoExpl archive's manifest holds it); None for a raw export or
    an archive made before exports had one."""
    recipe = (export.manifest or {}).get("recipe") if export.kind == "emoexpl" else None
    return recipe if isinstance(recipe, dict) else None
