"""Annotator profiles, read from the database (selectors: they never write). The counting is
``profiles.figures``'s, over arrays read here in a few queries per page, whatever the number of
items: the scope's submitted annotations with their prefills and the items' gold, the control
arm's blind annotations with the parser's predictions, and the days of first submission.

Scope: every human round with submitted work, or one round. Silver passes (a model annotator,
``Round.pass_kind`` silver) are never a person's work: they are left out, and the page names them.
The control arm is the blind rounds of the scope (for one prefilled round, the blind rounds over
its items, ``adjudication.agreement.analysis.blind_controls``, as the anchoring page offers them);
the parser it is compared with is the one that prefilled the scope (the one that prefilled most
of its submitted work when there are several)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Q, QuerySet
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import TruncDate
from django.utils.translation import gettext as _

from adjudication.agreement.analysis import blind_controls
from adjudication.gold.audit import ADJUDICATED, CONVENTION, SlotDiff, gold_audit_trail
from adjudication.models import Convention, GoldConstrual, GoldItem
from annotator.filters import typed_id
from annotator.models import (
    SLOT_FIELDS,
    Annotation,
    AnnotationRevision,
    Assignment,
    Item,
    ParserPrediction,
    Round,
)
from annotator.roles import ADJUDICATOR, ADMIN, ANNOTATOR, user_roles
from nsmcore.agreement import MISSING, Flow
from nsmcore.evaluation_report import Proportion
from nsmcore.schema import SLOT_NAMES, SLOTS
from profiles import figures
from profiles.figures import Period, Shares, TimeSummary

DONE = Assignment.Status.DONE
HUMAN = Round.PassKind.HUMAN
SILVER = Round.PassKind.SILVER
OWN, TEAM = "own", "team"  # whose blind values the control is


class ProfileError(ValueError):
    """A bad query (a round that is no round, a silver pass, a page past the last): the message
    says why and ``field`` names the input. The API answers it 400 (config.errors)."""

    api_status = 400

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field

    @property
    def named(self) -> str:
        """The message named by its field: "round: there is no round 'x'; rounds: ..."."""
        return f"{self.field}: {self}"

    def api_body(self) -> dict[str, Any]:
        return {"detail": self.named, self.field: [str(self)]}


class NotFound(LookupError):
    """No profile of that name that this reader may see."""


# Scope -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scope:
    chosen: Round | None  # None: every human round
    rounds: tuple[Round, ...]  # the human rounds counted
    silver: tuple[Round, ...]  # silver passes with submitted work, left out
    control_rounds: tuple[Round, ...]  # the blind rounds of the control arm
    parser: str  # whose predictions the blind values are compared with ("" when no round prefilled)

    @property
    def round_ids(self) -> list[int]:
        return [r.pk for r in self.rounds]


def round_for_profiles(value: str, *, by_name: bool = False) -> Round:
    """The round a query names (its id, or with ``by_name`` its name), or ProfileError."""
    text = value.strip()
    if by_name:
        found = Round.objects.filter(name=text).first()
    else:
        pk = typed_id(text)
        found = Round.objects.filter(pk=pk).first() if pk is not None else None
    if found is None:
        rounds = Round.objects.order_by("name").values_list("pk", "name")[:20]
        if by_name:
            listed = ", ".join(name for _pk, name in rounds) or _("none")
            problem = _("there is no round %(round)s; rounds: %(names)s")
        else:  # an id is asked for: the list says each round's, or the name refused looks valid
            listed = ", ".join(f"{pk} ({name})" for pk, name in rounds) or _("none")
            problem = _("there is no round %(round)s (give a round's id); rounds: %(names)s")
        raise ProfileError(problem % {"round": repr(value), "names": listed}, field="round")
    return found


def profile_scope(*, round_: Round | None = None) -> Scope:
    """Which rounds count: ``round_`` alone, or every human round with submitted work. A silver
    pass is refused (ProfileError): its work is a model's, not an annotator's."""
    if round_ is not None:
        if round_.pass_kind == SILVER:
            raise ProfileError(
                _("%(round)s is a silver pass (a model annotator); profiles count human rounds only")
                % {"round": round_.name},
                field="round",
            )
        if round_.is_blind:
            controls: tuple[Round, ...] = (round_,)
        else:
            controls = tuple(r for r, _shared in blind_controls(round_) if r.pass_kind == HUMAN)
        return Scope(round_, (round_,), (), controls, _reference_parser((round_,)))
    worked = Round.objects.filter(pk__in=Assignment.objects.filter(status=DONE).values("round_id"))
    every = list(worked.order_by("name"))
    rounds = tuple(r for r in every if r.pass_kind == HUMAN)
    silver = tuple(r for r in every if r.pass_kind == SILVER)
    return Scope(None, rounds, silver, tuple(r for r in rounds if r.is_blind), _reference_parser(rounds))


def _reference_parser(rounds: tuple[Round, ...]) -> str:
    """The parser that prefilled the most submitted work of ``rounds``; of every human round when
    none of them was prefilled (a blind round alone is still compared with the team's parser)."""
    prefilled = [r for r in rounds if not r.is_blind and r.prefill_parser]
    if len({r.prefill_parser for r in prefilled}) == 1:
        return prefilled[0].prefill_parser
    done = Assignment.objects.filter(status=DONE, round__mode=Round.Mode.PREFILLED, round__pass_kind=HUMAN)
    done = done.exclude(round__prefill_parser="")
    if prefilled:
        done = done.filter(round__in=prefilled)
    top = done.values("round__prefill_parser").annotate(n=Count("id")).order_by("-n", "round__prefill_parser")
    return top.values_list("round__prefill_parser", flat=True).first() or ""


# Who may be seen ----------------------------------------------------------------------------------


def _annotators() -> QuerySet:
    """Users whose profile there is: annotators, and anyone with work in a human round."""
    worked = Assignment.objects.filter(round__pass_kind=HUMAN).values("annotator_id")
    return get_user_model().objects.filter(Q(groups__name=ANNOTATOR) | Q(pk__in=worked)).distinct()


def can_see_all(viewer: AbstractBaseUser | AnonymousUser) -> bool:
    return bool(user_roles(viewer) & {ADJUDICATOR, ADMIN})


def profile_subject(*, viewer: AbstractBaseUser | AnonymousUser, username: str) -> AbstractBaseUser:
    """The user whose profile ``viewer`` asks for: their own (any role), or, for adjudicators and
    admins, any annotator's. Anything else is NotFound, as a page that does not exist."""
    if not user_roles(viewer):
        raise NotFound(username)
    if viewer.get_username() == username:
        return viewer
    if not can_see_all(viewer):
        raise NotFound(username)
    found = _annotators().filter(username=username).first()
    if found is None:
        raise NotFound(username)
    return found


def profile_users(*, viewer: AbstractBaseUser | AnonymousUser, scope: Scope) -> list[AbstractBaseUser]:
    """The annotators a reader may list: for adjudicators and admins every annotator (of the
    round, when one is chosen), for anyone else themselves."""
    if not can_see_all(viewer):
        return [viewer] if user_roles(viewer) else []
    if scope.chosen is not None:
        users = get_user_model().objects.filter(
            pk__in=Assignment.objects.filter(round=scope.chosen).values("annotator_id")
        )
    else:
        users = _annotators()
    return list(users.order_by("username"))


# Reading arrays -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rows:
    """Submitted annotations of the scope, one row each, and their item's gold (construal 1)."""

    user: np.ndarray
    item: np.ndarray
    round: np.ndarray
    assignment: np.ndarray
    times: np.ndarray
    codes: np.ndarray  # (rows, 12)
    prefill: np.ndarray  # (rows, 12): the prefill shown, MISSING where none was
    gold: np.ndarray  # (rows, 12): the item's resolved gold, MISSING where it has none
    gold_of: dict[int, tuple[int, Any, int]]  # item id -> (gold id, decided at, gold round id)

    def of(self, user_id: int) -> Rows:
        pick = self.user == user_id
        arrays = {
            name: getattr(self, name)[pick]
            for name in ("user", "item", "round", "assignment", "times", "codes", "prefill", "gold")
        }
        return replace(self, **arrays)

    @property
    def has_gold(self) -> np.ndarray:
        return (self.gold >= 0).any(axis=1)

    @property
    def has_prefill(self) -> np.ndarray:
        return (self.prefill >= 0).any(axis=1)


def _empty_codes() -> np.ndarray:
    return np.full((0, len(SLOTS)), MISSING, dtype=np.int16)


def _json_slots(field: str) -> dict[str, KeyTextTransform]:
    """The twelve slots of a JSON explication column as text columns, read by the database: far
    cheaper than decoding each row's JSON in Python (a prefill per annotation)."""
    return {f"{field}_{name}": KeyTextTransform(name, field) for name in SLOT_NAMES}


def _rows(scope: Scope, user_ids: list[int] | None) -> Rows:
    done = Annotation.objects.filter(assignment__round_id__in=scope.round_ids, assignment__status=DONE)
    if user_ids is not None:
        done = done.filter(assignment__annotator_id__in=user_ids)
    shown = _json_slots("prefill")
    found = list(
        done.order_by().annotate(**shown).values_list(
            "assignment__annotator_id", "assignment__item_id", "assignment__round_id", "assignment_id",
            "time_spent_ms", *SLOT_FIELDS, *shown,
        )
    )  # fmt: skip
    columns = list(zip(*found, strict=True)) if found else [()] * 5
    items = np.array(columns[1], dtype=np.int64)
    gold_of, gold_items, gold_codes = _gold(done)
    gold = np.full((len(found), len(SLOTS)), MISSING, dtype=np.int16)
    if gold_items.size:
        order = np.argsort(gold_items)
        keys, table = gold_items[order], gold_codes[order]
        at = np.searchsorted(keys, items)
        hit = (at < keys.size) & (keys[np.minimum(at, keys.size - 1)] == items)
        gold[hit] = table[at[hit]]
    end = 5 + len(SLOTS)
    return Rows(
        user=np.array(columns[0], dtype=np.int64),
        item=items,
        round=np.array(columns[2], dtype=np.int64),
        assignment=np.array(columns[3], dtype=np.int64),
        times=np.array(columns[4], dtype=np.int64),
        codes=figures.encode([row[5:end] for row in found]),
        prefill=figures.encode([row[end:] for row in found]),
        gold=gold,
        gold_of=gold_of,
    )


def _gold(annotations: QuerySet) -> tuple[dict[int, tuple[int, Any, int]], np.ndarray, np.ndarray]:
    """The resolved gold (construal 1) of the annotations' items: item id -> (gold id, when it was
    last decided, its round); and the item ids with their twelve codes, row by row."""
    slots = _json_slots("slots")
    rows = list(
        GoldConstrual.objects.filter(
            index=1,
            gold__status=GoldItem.Status.RESOLVED,
            gold__item_id__in=annotations.values("assignment__item_id"),
        )
        .annotate(**slots)
        .values_list("gold__item_id", "gold_id", "gold__updated_at", "gold__round_id", *slots)
    )
    return (
        {item: (gold, at, round_id) for item, gold, at, round_id, *_slots in rows},
        np.array([r[0] for r in rows], dtype=np.int64),
        figures.encode([r[4:] for r in rows]),
    )


def _control(scope: Scope, user_ids: list[int] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The control arm: (annotator ids, codes, the parser's codes) of the blind annotations of the
    scope's control rounds whose item has a legal prediction of the scope's parser, read from the
    round's text (or an unrecorded one), the newest: what a prefill would have shown
    (annotator.selectors.predicted_explication)."""
    if not scope.control_rounds or not scope.parser:
        return np.zeros(0, dtype=np.int64), _empty_codes(), _empty_codes()
    ids = [r.pk for r in scope.control_rounds]
    done = Annotation.objects.filter(assignment__round_id__in=ids, assignment__status=DONE)
    if user_ids is not None:
        done = done.filter(assignment__annotator_id__in=user_ids)
    found = list(
        done.order_by().values_list(
            "assignment__annotator_id", "assignment__item_id", "assignment__round__text_field", *SLOT_FIELDS
        )
    )
    if not found:
        return np.zeros(0, dtype=np.int64), _empty_codes(), _empty_codes()
    newest: dict[tuple[int, str], tuple[Any, tuple]] = {}
    slots = _json_slots("explication")
    predictions = ParserPrediction.objects.filter(
        parser=scope.parser, legal=True, item_id__in=done.values("assignment__item_id")
    ).exclude(explication=None)
    for item_id, field, at, *explication in (
        predictions.order_by("created_at", "id")
        .annotate(**slots)
        .values_list("item_id", "text_field", "created_at", *slots)
    ):
        newest[(item_id, field)] = (at, explication)
    keep, predicted = [], []
    for k, (_user, item_id, field, *_slots) in enumerate(found):
        candidates = [p for p in (newest.get((item_id, field)), newest.get((item_id, ""))) if p]
        if candidates:
            keep.append(k)
            predicted.append(max(candidates, key=lambda p: p[0])[1])
    users = np.array([found[k][0] for k in keep], dtype=np.int64)
    codes = figures.encode([found[k][3:] for k in keep])
    return users, codes, figures.encode(predicted)


def _days(scope: Scope, user_id: int) -> dict[date, int]:
    """Items first submitted per day (the day of each annotation's first revision, UTC)."""
    first = AnnotationRevision.objects.filter(
        version=1,
        annotation__assignment__round_id__in=scope.round_ids,
        annotation__assignment__status=DONE,
        annotation__assignment__annotator_id=user_id,
    )
    rows = first.annotate(day=TruncDate("created_at")).values("day").annotate(n=Count("id")).order_by("day")
    return {r["day"]: r["n"] for r in rows}


# Profiles -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlotFigures:
    slot: str  # a slot's name, or "" for the twelve pooled
    gold: Proportion  # agreement with gold
    kept: Proportion  # prefilled values kept
    control: Proportion  # blind values equal to the parser's
    difference: float | None  # kept - control: anchoring
    overturned: Proportion  # kept values that gold overturned


@dataclass(frozen=True)
class Profile:
    user_id: int
    username: str
    scope: Scope
    submitted: int
    with_gold: int
    with_prefill: int
    in_control: int  # blind annotations in the control (the annotator's own, or the team's)
    control_source: str  # OWN, TEAM, or "" when there is none
    disagreements: int  # annotations differing from gold in some slot
    slots: tuple[SlotFigures, ...]
    overall: SlotFigures
    time: TimeSummary
    flows: tuple[Flow, ...] = ()
    throughput: tuple[Period, ...] = ()


def _figures(rows: Rows, control: Shares) -> tuple[tuple[SlotFigures, ...], SlotFigures]:
    gold = figures.gold_agreement(rows.codes, rows.gold)
    kept = figures.kept_share(rows.codes, rows.prefill)
    over = figures.overturned(rows.codes, rows.prefill, rows.gold)

    def one(slot: str, g: Proportion, k: Proportion, c: Proportion, o: Proportion) -> SlotFigures:
        return SlotFigures(slot, g, k, c, figures.difference(k, c), o)

    per_slot = tuple(
        one(name, *parts)
        for name, *parts in zip(SLOT_NAMES, gold.slots, kept.slots, control.slots, over.slots, strict=True)
    )
    return per_slot, one("", gold.overall, kept.overall, control.overall, over.overall)


def _profile(
    user: AbstractBaseUser, scope: Scope, rows: Rows, own: Shares, team: Shares | None, *, detail: bool
) -> Profile:
    source, control = (OWN, own) if own.overall.n else ("", own)
    if not source and team is not None and team.overall.n:
        source, control = TEAM, team
    slots, overall = _figures(rows, control)
    differs = ((rows.codes != rows.gold) & (rows.codes >= 0) & (rows.gold >= 0)).any(axis=1)
    extra: dict[str, Any] = {}
    if detail:
        extra = {
            "flows": tuple(figures.gold_flows(rows.codes, rows.gold)),
            "throughput": tuple(figures.throughput(_days(scope, user.pk))),
        }
    return Profile(
        user_id=user.pk,
        username=user.get_username(),
        scope=scope,
        submitted=int(rows.user.size),
        with_gold=int(rows.has_gold.sum()),
        with_prefill=int(rows.has_prefill.sum()),
        in_control=control.slots[0].n if source else 0,
        control_source=source,
        disagreements=int(differs.sum()),
        slots=slots,
        overall=overall,
        time=figures.time_summary(rows.times),
        **extra,
    )


def profile_of(*, user: AbstractBaseUser, scope: Scope) -> Profile:
    """One annotator's profile, every figure."""
    rows = _rows(scope, [user.pk])
    _users, codes, predicted = _control(scope, [user.pk])
    own = figures.blind_control(codes, predicted)
    team = None
    if not own.overall.n:
        _users, codes, predicted = _control(scope, None)
        team = figures.blind_control(codes, predicted)
    return _profile(user, scope, rows, own, team, detail=True)


def profiles_of(*, users: list[AbstractBaseUser], scope: Scope) -> list[Profile]:
    """The headline figures of several annotators (no flows, no throughput), read together."""
    if not users:
        return []
    rows = _rows(scope, [u.pk for u in users])
    control_users, codes, predicted = _control(scope, None)
    team = figures.blind_control(codes, predicted)
    out = []
    for user in users:
        mine = control_users == user.pk
        own = figures.blind_control(codes[mine], predicted[mine])
        out.append(_profile(user, scope, rows.of(user.pk), own, team, detail=False))
    return out


def user_rows(*, user: AbstractBaseUser, scope: Scope) -> Rows:
    """The annotator's submitted annotations of the scope, as arrays (the digest reads them)."""
    return _rows(scope, [user.pk])


# The digest ---------------------------------------------------------------------------------------

DIGEST_PAGE = 20


@dataclass(frozen=True)
class DigestSlot:
    slot: str
    theirs: str
    gold: str
    second: str  # construal 2's value where gold kept two construals that differ here, else ""
    source: str  # how gold got its value: unanimous, convention or adjudicated
    why: str  # the adjudicator's words (a hand resolution), or the convention's change line
    who: str
    at: Any
    convention: Any  # the Convention (a version) that decided it, or None
    convention_pk: int | None


@dataclass(frozen=True)
class DigestEntry:
    item_id: int
    source_id: str
    round_id: int  # the round of the annotator's work
    round_name: str
    assignment_id: int
    gold_round_id: int
    decided_at: Any
    slots: tuple[DigestSlot, ...]


@dataclass(frozen=True)
class Digest:
    entries: tuple[DigestEntry, ...]
    total: int  # annotations that differ from gold in some slot
    page: int
    pages: int


def _disagreeing(rows: Rows) -> list[int]:
    """Row indices of the annotations that differ from gold in some slot: the newest decisions
    first (when gold was last changed), then by item."""
    differs = ((rows.codes != rows.gold) & (rows.codes >= 0) & (rows.gold >= 0)).any(axis=1)
    picks = np.nonzero(differs)[0].tolist()
    return sorted(picks, key=lambda r: (-rows.gold_of[int(rows.item[r])][1].timestamp(), int(rows.item[r]),
                                        int(rows.round[r])))  # fmt: skip


def _why(trail: list, slot: str, source: str) -> tuple[str, str, Any]:
    """The newest change of the audit trail that changed ``slot`` (in either construal) in the way
    its provenance says (a convention, or by hand): its why, who, when."""
    kind = CONVENTION if source == CONVENTION else ADJUDICATED
    for entry in trail:  # newest first
        if entry.kind == kind and any(isinstance(d, SlotDiff) and d.slot == slot for d in entry.diffs):
            return entry.why, entry.who, entry.at
    for entry in trail:  # resolved again with the same value: the newest resolution of that kind
        if entry.kind == kind:
            return entry.why, entry.who, entry.at
    return "", "", None


def profile_digest(
    *, user: AbstractBaseUser, scope: Scope, page: int = 1, per_page: int | None = None
) -> Digest:
    """What adjudication decided where the annotator's submitted values differ from gold: per
    item and differing slot, their value, gold's, and why (the adjudicator's words from the audit
    trail, or the convention that settled it with its rule). Newest decisions first, a page at a
    time; a page past the last is a ProfileError."""
    per_page = per_page or DIGEST_PAGE
    rows = user_rows(user=user, scope=scope)
    picks = _disagreeing(rows)
    pages = max(1, -(-len(picks) // per_page))
    if page < 1 or page > pages:
        raise ProfileError(
            _("there is no page %(page)s; pages 1 to %(pages)s") % {"page": page, "pages": pages},
            field="page",
        )
    shown = picks[(page - 1) * per_page : page * per_page]
    items = sorted({int(rows.item[r]) for r in shown})
    gold_ids = [rows.gold_of[i][0] for i in items]
    stored = GoldConstrual.objects.filter(gold_id__in=gold_ids)
    construals: dict[tuple[int, int], tuple[dict, dict]] = {
        (gold_id, index): (slots, provenance)
        for gold_id, index, slots, provenance in stored.values_list("gold_id", "index", "slots", "provenance")
    }
    trails = {g.pk: gold_audit_trail(g) for g in GoldItem.objects.filter(pk__in=gold_ids)}
    wanted = {
        (p.get("convention"), p.get("version"))
        for slots, provenance in construals.values()
        for p in provenance.values()
        if p.get("source") == CONVENTION
    }
    conventions = {}
    if wanted:
        numbers = {n for n, _v in wanted}
        conventions = {(c.number, c.version): c for c in Convention.objects.filter(number__in=numbers)}
    sources = dict(Item.objects.filter(pk__in=items).values_list("pk", "source_id"))
    names = {r.pk: r.name for r in scope.rounds}
    entries = []
    for r in shown:
        item_id = int(rows.item[r])
        gold_id, decided_at, gold_round = rows.gold_of[item_id]
        first, provenance = construals[(gold_id, 1)]
        second = construals.get((gold_id, 2), ({}, {}))[0]
        slots = []
        for s, name in enumerate(SLOT_NAMES):
            theirs, gold_code = int(rows.codes[r, s]), int(rows.gold[r, s])
            if theirs < 0 or gold_code < 0 or theirs == gold_code:
                continue
            mark = provenance.get(name, {})
            source = mark.get("source", "")
            why, who, at = _why(trails[gold_id], name, source) if source != "unanimous" else ("", "", None)
            convention = conventions.get((mark.get("convention"), mark.get("version")))
            if source == CONVENTION and not who:
                who = mark.get("by", "")
            other = second.get(name) if second else None
            slots.append(DigestSlot(
                name, SLOTS[s].values[theirs], first[name], other if other and other != first[name] else "",
                source, why, who, at, convention, convention.pk if convention else None,
            ))  # fmt: skip
        entries.append(DigestEntry(
            item_id, sources.get(item_id, ""), int(rows.round[r]), names.get(int(rows.round[r]), ""),
            int(rows.assignment[r]), gold_round, decided_at, tuple(slots),
        ))  # fmt: skip
    return Digest(tuple(entries), len(picks), page, pages)
