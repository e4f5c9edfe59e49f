"""Rule set revisions (SPEC section 9): propose a new version, check it against the regression
suite, compare it with the active version on gold and on a pass, vote on it, activate it (which
routes every gold construal again under it), and roll back to any earlier version the same way.

The versions, votes and activations are the rules app's models; this module lives here because
proposing reads gold and predictions and activating rewrites gold, which sit above rules.
Every write is a service (``revision_<verb>``, keyword-only).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

import nsmcore
from adjudication.gold.services import vote_outcome
from adjudication.models import GoldChange, GoldConstrual, GoldItem
from annotator.events import event_send
from annotator.models import Item, ItemSet, ParserPrediction
from nsmcore.evaluation_report import Proportion
from nsmcore.mapper import RuleSetError, route_batch
from nsmcore.regression import run_suite
from nsmcore.schema import SLOT_NAMES
from rules import revision_checks
from rules.models import RuleSetActivation, RuleSetVersion, RuleSetVote
from rules.rulesets import (
    active_rule_set,
    ensure_initial_version,
    forget_active_rule_set,
    next_version_name,
    proposed_rule_set,
    rule_set_document,
    rule_set_from_document,
)

CHANGES_SHOWN = 200  # the label changes a page lists (the count covers them all)
_CHUNK = 5_000  # ids per UPDATE: under every backend's limit on query parameters


class RevisionError(ValueError):
    """A revision step that cannot be taken; the message says why (the API's 400)."""

    api_status = 400


class AlreadyStored(RevisionError):
    """A proposal whose name or rules are already stored: the request is well formed, what is
    stored refuses it (the API's 409)."""

    api_status = 409


class AlreadyDecided(RevisionError):
    """A vote on a version no longer proposed, or a second vote: the version's state, or the
    vote already cast, refuses it (the API's 409)."""

    api_status = 409


class ActivationRefused(RevisionError):
    """A version whose state forbids activating it (already active, failing its suite): the
    request is well formed, the version refuses it (the API's 409)."""

    api_status = 409


def _rule_set(version: RuleSetVersion) -> nsmcore.RuleSet:
    return rule_set_from_document(version.document)


# Reading gold and passes -------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One item's explication to route, with what it is compared against."""

    item_id: int
    source_id: str
    text: str
    reference_label: str
    explication: dict[str, Any]
    gold_round_id: int | None = None


def gold_rows(item_ids: Any = None) -> list[Row]:
    """The first construal of every resolved gold record (of ``item_ids`` when given)."""
    construals = GoldConstrual.objects.filter(index=1, gold__status=GoldItem.Status.RESOLVED)
    if item_ids is not None:
        construals = construals.filter(gold__item_id__in=item_ids)
    values = construals.order_by("gold__item_id").values_list(
        "gold__item_id", "gold__item__source_id", "gold__item__text", "gold__item__reference_label",
        "slots", "residue", "gold__round_id",
    )  # fmt: skip
    return [
        Row(item_id, source_id, text, reference, {**slots, "residue": residue}, round_id)
        for item_id, source_id, text, reference, slots, residue, round_id in values
        if all(slots.get(name) is not None for name in SLOT_NAMES)
    ]


def pass_names() -> list[str]:
    """The passes a proposal can be compared on: the parsers with stored predictions."""
    return list(ParserPrediction.objects.values_list("parser", flat=True).distinct().order_by("parser"))


def pass_rows(parser: str) -> list[Row]:
    """Each item's newest legal prediction of ``parser``."""
    predictions = (
        ParserPrediction.objects.filter(parser=parser, legal=True)
        .order_by("item_id", "-created_at", "-id")
        .values_list("item_id", "item__source_id", "item__text", "item__reference_label", "explication")
    )
    rows: dict[int, Row] = {}
    for item_id, source_id, text, reference, explication in predictions:
        if item_id not in rows and isinstance(explication, dict):
            rows[item_id] = Row(item_id, source_id, text, reference, explication)
    return list(rows.values())


# Comparing two versions --------------------------------------------------------------------------


def _accuracy(labels: list[str], references: list[str]) -> dict[str, Any]:
    routed = [label != nsmcore.ABSTAIN for label in labels]
    correct = sum(1 for label, ref in zip(labels, references, strict=True) if label == ref)
    n = len(labels)
    return {
        "accuracy": Proportion.of(correct, n),
        "selective_accuracy": Proportion.of(correct, sum(routed)),
        "abstentions": n - sum(routed),
    }


def compare(rows: list[Row], old: nsmcore.RuleSet, new: nsmcore.RuleSet) -> dict[str, Any]:
    """Accuracy and selective accuracy (Clopper-Pearson intervals) of ``rows`` routed under both
    versions, and the items whose label changes."""
    explications = [row.explication for row in rows]
    before = [r.label for r in route_batch(explications, old)] if rows else []
    after = [r.label for r in route_batch(explications, new)] if rows else []
    references = [row.reference_label for row in rows]
    changes = [
        {
            "item_id": row.item_id,
            "source_id": row.source_id,
            "text": row.text[:120],
            "reference_label": row.reference_label,
            "old": a,
            "new": b,
            "gold_round_id": row.gold_round_id,
        }
        for row, a, b in zip(rows, before, after, strict=True)
        if a != b
    ]
    old_acc, new_acc = _accuracy(before, references), _accuracy(after, references)
    difference = None
    if rows:
        difference = new_acc["accuracy"].value - old_acc["accuracy"].value
    return {
        "n": len(rows),
        "old": old_acc,
        "new": new_acc,
        "difference": difference,
        "changed": len(changes),
        "changes": changes,
    }


def pilot_section(old: nsmcore.RuleSet, new: nsmcore.RuleSet, item_set_name: str) -> dict[str, Any]:
    """The pilot item set's gold routed under the active and the proposed version. It fails when
    the proposal gets fewer pilot items right (label = reference label) than the active version;
    items without gold are named, and an absent item set is said, not failed."""
    item_set = ItemSet.objects.filter(name=item_set_name).first()
    if item_set is None:
        return {
            "item_set": item_set_name,
            "found": False,
            "ok": True,
            "note": f"no item set named {item_set_name!r}",
        }
    item_ids = list(item_set.members.values_list("item_id", flat=True))
    rows = gold_rows(item_ids)
    with_gold = {row.item_id for row in rows}
    without = list(
        Item.objects.filter(pk__in=[i for i in item_ids if i not in with_gold])
        .order_by("pk")
        .values_list("source_id", flat=True)
    )
    result = compare(rows, old, new)
    fewer = result["old"]["accuracy"].k - result["new"]["accuracy"].k
    return {
        "item_set": item_set_name,
        "found": True,
        "items": len(item_ids),
        "with_gold": result["n"],
        "without_gold": without,
        "correct_before": result["old"]["accuracy"].k,
        "correct_after": result["new"]["accuracy"].k,
        "changes": result["changes"],
        "ok": fewer <= 0,
        "note": f"the proposal gets {fewer} fewer pilot items right" if fewer > 0 else "",
    }


def regression_report(
    old: nsmcore.RuleSet, new: nsmcore.RuleSet, *, pilot_item_set: str | None = None
) -> dict[str, Any]:
    """The regression suite of SPEC section 9: canonical self-checks, slot-flip consistency (and
    the renderer's grammar) from nsmcore, and the pilot item set compared with the active version."""
    suite = run_suite(new).as_dict()
    pilot = pilot_section(old, new, pilot_item_set or settings.NSM_PILOT_ITEM_SET)
    # what the features registered with rules.revision_checks see change (the minimal pairs whose
    # label the revision changes): shown with the report, never a reason to fail it
    checks = revision_checks.run(old, new)
    return {
        "ok": suite["ok"] and pilot["ok"], "suite": suite, "pilot": pilot, "against": old.version,
        "checks": checks,
    }  # fmt: skip


def revision_comparison(*, version: RuleSetVersion, parser: str = "") -> dict[str, Any]:
    """The proposal against the active version on gold and, when named, on a parser's pass."""
    old, new = active_rule_set(), _rule_set(version)
    out = {"against": old.version, "gold": compare(gold_rows(), old, new), "pass": None}
    if parser:
        out["pass"] = {"name": parser, **compare(pass_rows(parser), old, new)}
    return out


def blocker(version: RuleSetVersion) -> str:
    """Why ``version`` cannot be activated now ("" when it can)."""
    if version.status == RuleSetVersion.Status.ACTIVE:
        return _("v%(version)s is already active") % {"version": version.version}
    if not version.report.get("ok"):
        failed = [s["name"] for s in version.report.get("suite", {}).get("sections", []) if s["failures"]]
        if version.report.get("suite", {}).get("causal_consistency_rate", 1.0) != 1.0:
            failed.append(_("causal consistency rate below 1"))
        pilot = version.report.get("pilot") or {}
        if not pilot.get("ok", True):
            failed.append(
                _("pilot item set %(item_set)s: %(note)s")
                % {"item_set": pilot.get("item_set"), "note": pilot.get("note")}
            )
        return _("v%(version)s fails the regression suite: %(failed)s") % {
            "version": version.version,
            "failed": "; ".join(failed) or _("see the report"),
        }
    return ""


# Writes ------------------------------------------------------------------------------------------


def revision_propose(
    *, user, document: Any, version: str = "", note: str = "", pilot_item_set: str = ""
) -> RuleSetVersion:
    """Store a proposed version with its regression report. A bad document raises RuleSetError
    naming the rule and slot; a version name or content already stored raises RevisionError."""
    active = ensure_initial_version()
    name = version.strip() or next_version_name()
    rule_set = proposed_rule_set(document, name)
    if RuleSetVersion.objects.filter(version=name).exists():
        raise AlreadyStored(_("version %(name)s already exists: choose another name") % {"name": repr(name)})
    digest = rule_set.content_hash
    same = RuleSetVersion.objects.filter(content_hash=digest).first()
    if same is not None:
        raise AlreadyStored(
            _("these rules are identical to v%(version)s (%(status)s): nothing to propose")
            % {"version": same.version, "status": _(same.status)}
        )
    old = _rule_set(active) if active else rule_set
    report = regression_report(old, rule_set, pilot_item_set=pilot_item_set)
    try:
        with transaction.atomic():
            return RuleSetVersion.objects.create(
                version=name, document=rule_set_document(rule_set), content_hash=digest, parent=active,
                note=note.strip(), created_by=user, report=as_json(report),
            )  # fmt: skip
    except IntegrityError:  # a concurrent proposal took the name or the content first
        raise AlreadyStored(
            _("version %(name)s or identical rules were just proposed: reload") % {"name": repr(name)}
        ) from None


def as_json(value: Any) -> Any:
    """The report as JSON: Proportions as their dicts."""
    if isinstance(value, Proportion):
        return value.to_dict()
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_json(v) for v in value]
    return value


def revision_vote(*, user, version: RuleSetVersion, approve: bool, comment: str = "") -> RuleSetVersion:
    """One vote per adjudicator and ballot; at the quorum the version is activated or rejected
    (the acceptance rule of conventions)."""
    if version.status != RuleSetVersion.Status.PROPOSED:
        raise AlreadyDecided(
            _("v%(version)s is %(status)s; only a proposed version takes votes")
            % {"version": version.version, "status": _(version.status)}
        )
    if approve and (why := blocker(version)):
        raise RevisionError(why)
    try:
        with transaction.atomic():
            RuleSetVote.objects.create(
                version=version,
                ballot=version.ballot,
                adjudicator=user,
                approve=approve,
                comment=comment.strip(),
            )
    except IntegrityError:
        raise AlreadyDecided(
            _("%(user)s has already voted on v%(version)s")
            % {"user": user.username, "version": version.version}
        ) from None
    counts = version.votes.filter(ballot=version.ballot).aggregate(
        n=Count("id"), yes=Count("id", filter=Q(approve=True))
    )
    accepted = vote_outcome(votes=counts["n"], approvals=counts["yes"])
    if accepted:
        revision_activate(user=user, version=version, how=RuleSetActivation.How.VOTE)
    elif accepted is False:
        RuleSetVersion.objects.filter(pk=version.pk, status=RuleSetVersion.Status.PROPOSED).update(
            status=RuleSetVersion.Status.REJECTED, decided_at=timezone.now()
        )
    version.refresh_from_db()
    return version


def revision_reopen(*, user, version: RuleSetVersion) -> RuleSetVersion:
    """Put an earlier version (retired, rejected or withdrawn) to the vote again: a rollback by vote."""
    if version.status in (RuleSetVersion.Status.ACTIVE, RuleSetVersion.Status.PROPOSED):
        raise RevisionError(
            _("v%(version)s is %(status)s; only an earlier version is put to the vote again")
            % {"version": version.version, "status": _(version.status)}
        )
    if why := blocker(version):
        raise RevisionError(why)
    RuleSetVersion.objects.filter(pk=version.pk).update(
        status=RuleSetVersion.Status.PROPOSED, ballot=version.ballot + 1, decided_at=None
    )
    version.refresh_from_db()
    return version


def revision_withdraw(*, user, version: RuleSetVersion) -> RuleSetVersion:
    if version.status != RuleSetVersion.Status.PROPOSED:
        raise RevisionError(
            _("v%(version)s is %(status)s; only a proposed version can be withdrawn")
            % {"version": version.version, "status": _(version.status)}
        )
    RuleSetVersion.objects.filter(pk=version.pk).update(
        status=RuleSetVersion.Status.WITHDRAWN, decided_at=timezone.now()
    )
    version.refresh_from_db()
    return version


def revision_activate(
    *, user, version: RuleSetVersion, how: str = RuleSetActivation.How.ADMIN
) -> RuleSetActivation:
    """Make ``version`` the active one in one transaction: the previous one retires, every gold
    construal is routed again under it (each records the version that produced its label; a
    changed label leaves a GoldChange with the old one), the history gains a row, and every
    process reads the new version once this commits. Rolling back is activating an earlier one."""
    ensure_initial_version()
    if why := blocker(version):
        raise ActivationRefused(why)
    rule_set = _rule_set(version)
    with transaction.atomic():
        previous = (
            RuleSetVersion.objects.select_for_update().filter(status=RuleSetVersion.Status.ACTIVE).first()
        )
        if previous is not None:
            RuleSetVersion.objects.filter(pk=previous.pk).update(status=RuleSetVersion.Status.RETIRED)
        claimed = (
            RuleSetVersion.objects.filter(pk=version.pk)
            .exclude(status=RuleSetVersion.Status.ACTIVE)
            .update(status=RuleSetVersion.Status.ACTIVE, decided_at=timezone.now())
        )
        if not claimed:
            raise ActivationRefused(_("v%(version)s is already active") % {"version": version.version})
        rerouted, changed = reroute_gold(
            rule_set, user=user, why=f"rule set v{version.version} activated ({how})"
        )
        activation = RuleSetActivation.objects.create(
            version=version, previous=previous, by=user, how=how, rerouted=rerouted, changed=changed
        )
        forget_active_rule_set()
        activated = {"version": version.version, "hash": version.content_hash, "how": how, "changed": changed}
        event_send("rule_set.activated", {**activated, "previous": previous.version if previous else None})
    version.refresh_from_db()
    return activation


def reroute_gold(rule_set: nsmcore.RuleSet, *, user=None, why: str) -> tuple[int, int]:
    """Route every complete gold construal again under ``rule_set``, with one UPDATE per distinct
    outcome and chunk of ids; a GoldChange (old and new label, old and new version) for each gold
    record whose label changed. Returns (construals routed, gold records whose label changed)."""
    rows = list(
        GoldConstrual.objects.values_list(
            "pk", "gold_id", "index", "slots", "residue", "label", "rule_set_version"
        )
    )
    complete = [r for r in rows if all(r[3].get(name) is not None for name in SLOT_NAMES)]
    routings = route_batch([{**r[3], "residue": r[4]} for r in complete], rule_set) if complete else []
    by_outcome: dict[tuple, list[int]] = defaultdict(list)
    changes: dict[int, dict[str, Any]] = {}
    for row, routing in zip(complete, routings, strict=True):
        pk, gold_id, index, _, _, old_label, old_version = row
        outcome = (routing.label, routing.rule_index, routing.fired, routing.abstention_type or "")
        by_outcome[outcome].append(pk)
        if old_label != routing.label:
            change = changes.setdefault(gold_id, {"before": {}, "after": {}})
            key = "label" if index == 1 else f"label {index}"
            change["before"] |= {key: old_label, "rule_set_version": old_version}
            change["after"] |= {key: routing.label, "rule_set_version": rule_set.version}
    for (label, rule, fired, abstention), pks in by_outcome.items():
        for start in range(0, len(pks), _CHUNK):
            GoldConstrual.objects.filter(pk__in=pks[start : start + _CHUNK]).update(
                label=label,
                rule=rule,
                fired=list(fired),
                abstention=abstention,
                rule_set_version=rule_set.version,
            )
    now = timezone.now()
    GoldChange.objects.bulk_create(
        [
            GoldChange(gold_id=gold_id, who=user, at=now, before=c["before"], after=c["after"], why=why[:300])
            for gold_id, c in changes.items()
        ],
        batch_size=2_000,
    )
    return len(complete), len(changes)


__all__ = [
    "RevisionError",
    "RuleSetError",
    "as_json",
    "blocker",
    "compare",
    "gold_rows",
    "pass_names",
    "pass_rows",
    "regression_report",
    "reroute_gold",
    "revision_activate",
    "revision_comparison",
    "revision_propose",
    "revision_reopen",
    "revision_vote",
    "revision_withdraw",
]
