"""Agreement, conflicts, flows and anchoring of rounds, read from the database and computed by
``nsmcore.agreement``. A round's analysis is cached (Django's cache framework, alias "analysis")
under the round's version, a signature of its annotations (count and last change) kept in the
shared default cache, so the dashboard and every conflict page reuse it until someone submits,
and no two processes can return different analyses for one version."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db.models import Count, Max, Q
from django.utils.translation import gettext as _

from adjudication.models import AgreementSnapshot
from annotator.models import SLOT_FIELDS, Annotation, Assignment, Item, ItemSet, Round, text_in_field
from annotator.search import items_searched
from annotator.versions import round_version
from nsmcore.agreement import MISSING, AgreementReport, Conflicts, agreement, conflicts, flows, retention
from nsmcore.schema import SLOT_NAMES, SLOTS

LOOKUP = [{v: i for i, v in enumerate(slot.values)} for slot in SLOTS]
BOOTSTRAP = 1000
SEED = 20240917


@dataclass
class RoundTable:
    """A round's submitted annotations as arrays: ``table[item, coder, slot]`` value codes."""

    round_id: int
    item_ids: np.ndarray
    coder_ids: list[int]
    coder_names: list[str]
    table: np.ndarray

    @property
    def coders(self) -> int:
        return len(self.coder_ids)


@dataclass
class RoundAnalysis:
    data: RoundTable
    report: AgreementReport
    conflicts: Conflicts
    levels: dict[str, str]


ANALYSIS_CACHE = "analysis"  # the CACHES alias that holds round analyses (config/settings/base.py)


def _version(round_id: int) -> str:
    """A signature of the round's submitted annotations, kept in the cache until a write."""
    return round_version(round_id, round_signature)


def round_signature(round_id: int) -> str:
    agg = Annotation.objects.filter(
        assignment__round_id=round_id, assignment__status=Assignment.Status.DONE
    ).aggregate(n=Count("id"), last=Max("updated_at"))
    return f"{agg['n']}:{agg['last'].isoformat() if agg['last'] else '-'}"


def _encode(columns: list[tuple]) -> np.ndarray:
    out = np.empty((len(columns[0]) if columns else 0, len(SLOTS)), dtype=np.int16)
    for s in range(len(SLOTS)):
        # a column holds a handful of distinct strings: code those, then index
        distinct, inverse = np.unique(np.array(columns[s], dtype=object).astype(str), return_inverse=True)
        codes = np.array([LOOKUP[s].get(v, MISSING) for v in distinct], dtype=np.int16)
        out[:, s] = codes[inverse.ravel()] if len(distinct) else MISSING
    return out


def round_table(round_id: int) -> RoundTable:
    query = (
        Annotation.objects.filter(assignment__round_id=round_id, assignment__status=Assignment.Status.DONE)
        .filter(assignment__control=False)  # control items (quality app) are not the round's work
        .order_by()
        .values_list("assignment__item_id", "assignment__annotator_id", *SLOT_FIELDS)
    )
    rows = list(query)  # as fast as the same SQL read with a plain cursor (measured: 2.2 s cold both)
    if not rows:
        return RoundTable(
            round_id, np.zeros(0, dtype=np.int64), [], [], np.zeros((0, 0, len(SLOTS)), np.int16)
        )
    columns = list(zip(*rows, strict=True))
    item_ids, item_index = np.unique(np.array(columns[0], dtype=np.int64), return_inverse=True)
    coder_ids, coder_index = np.unique(np.array(columns[1], dtype=np.int64), return_inverse=True)
    codes = _encode(columns[2:])
    table = np.full((len(item_ids), len(coder_ids), len(SLOTS)), MISSING, dtype=np.int16)
    table[item_index, coder_index] = codes
    names = dict(get_user_model().objects.filter(pk__in=coder_ids.tolist()).values_list("pk", "username"))
    ids = [int(c) for c in coder_ids]
    return RoundTable(round_id, item_ids, ids, [names[c] for c in ids], table)


def round_analysis(
    round_: Round, *, levels: dict[str, str] | None = None, item_set: ItemSet | None = None
) -> RoundAnalysis:
    """The round's analysis, computed once per version of its annotations and kept in the
    "analysis" cache under that version (read from the shared default cache), so what any process
    returns is what a fresh computation of that version gives. With ``item_set``, only the round's
    items in that set count (a learning queue's random share: figures unbiased for the round)."""
    levels = levels or {}
    version = _version(round_.pk)
    levels_key = ",".join(f"{slot}={level}" for slot, level in sorted(levels.items())) or "-"
    members = None
    subset = "-"
    if item_set is not None:  # named by its members: a refilled set is another subset
        members = np.sort(np.fromiter(item_set.members.values_list("item_id", flat=True), dtype=np.int64))
        subset = hashlib.sha256(members.tobytes()).hexdigest()[:16]
    key = f"nsm:round-analysis:{round_.pk}:{version}:{levels_key}:{subset}"
    store = caches[ANALYSIS_CACHE]
    found = store.get(key)
    if found is not None:
        return found
    data = round_table(round_.pk)
    if members is not None:
        keep = np.isin(data.item_ids, members)
        data = RoundTable(
            data.round_id, data.item_ids[keep], data.coder_ids, data.coder_names, data.table[keep]
        )
    table = data.table if data.coders else np.zeros((0, 1, len(SLOTS)), np.int16)
    report = agreement(table, levels=levels, bootstrap=BOOTSTRAP if data.coders else 0, seed=SEED)
    analysis = RoundAnalysis(data, report, conflicts(table), levels)
    store.set(key, analysis, timeout=None)
    return analysis


def _summary(coders: int, report: AgreementReport) -> dict[str, Any]:
    def number(value: float | None) -> float | None:
        return None if value is None or np.isnan(value) else round(float(value), 6)

    return {
        "coders": coders,
        "items": report.items,
        "alpha": {s.slot: number(s.alpha) for s in report.slots},
        "raw": {s.slot: number(s.raw) for s in report.slots},
    }


def agreement_summary(round_: Round) -> dict[str, Any]:
    """Coders, items, alpha and raw agreement per slot (nominal) of the round as its annotations
    stand: the stored snapshot when it is of this version, else computed. Reads only."""
    version = _version(round_.pk)
    snapshot = AgreementSnapshot.objects.filter(round=round_, version=version).first()
    if snapshot is not None:
        # PostgreSQL's jsonb keeps no key order: give the slots back in schema order, as computed
        stored = snapshot.summary
        return {
            "coders": stored["coders"],
            "items": stored["items"],
            **{part: {s: stored[part].get(s) for s in SLOT_NAMES} for part in ("alpha", "raw")},
        }
    analysis = round_analysis(round_)
    return _summary(analysis.data.coders, analysis.report)


def agreement_snapshot_save(round_: Round) -> None:
    """Store the round's agreement summary as its annotations stand, unless the stored one is of
    this version already: a named step of the export job (exports.export.export_prepare), so that
    later exports (any process) read it instead of computing it. Pages never call it."""
    version = _version(round_.pk)
    if AgreementSnapshot.objects.filter(round=round_, version=version).exists():
        return
    analysis = round_analysis(round_)
    AgreementSnapshot.objects.update_or_create(
        round_id=round_.pk,
        defaults={"version": version, "summary": _summary(analysis.data.coders, analysis.report)},
    )


@dataclass(frozen=True)
class Submissions:
    """Who is assigned to a round and how much of it is in: what a page says before anyone submits."""

    annotators: list[str]  # assigned to the round, by name
    per_item: int  # the round's k
    done: int  # submitted assignments

    @property
    def empty(self) -> bool:
        return self.done == 0


def round_submissions(round_: Round) -> Submissions:
    """The round's assigned annotators and its submitted assignments (pages ask only when the
    analysis shows no submission, so the conflict pages of a large round never pay for it)."""
    assignments = Assignment.objects.filter(round=round_, control=False)
    names = sorted(
        assignments.order_by().values_list("annotator__username", flat=True).distinct(),
    )
    done = assignments.aggregate(n=Count("id", filter=Q(status=Assignment.Status.DONE)))["n"]
    return Submissions(names, round_.annotators_per_item, done)


@dataclass(frozen=True)
class ConflictRow:
    item_id: int
    source_id: str
    slots: tuple[str, ...]
    values: dict[str, list[str]]  # slot -> each coder's value ('' where missing)
    text: str = ""  # the text the round shows, when asked for

    @property
    def by_coder(self) -> list[list[tuple[str, str]]]:
        """For each coder, (slot, value) of the differing slots."""
        n = len(next(iter(self.values.values()), []))
        return [[(name, self.values[name][k]) for name in self.slots] for k in range(n)]


def conflict_rows(
    analysis: RoundAnalysis, *, slot: str = "", a: str = "", b: str = "", items: list[int] | None = None
) -> np.ndarray:
    """Indices (into ``analysis.conflicts``) of the conflicts matching the filters: a slot, and
    optionally values on it (some coder gave a, some coder gave b); and of ``items`` only (ids, as
    a search found them) when given."""
    found = analysis.conflicts
    keep = np.ones(len(found), dtype=bool)
    if items is not None:
        keep &= np.isin(analysis.data.item_ids[found.rows], np.asarray(items, dtype=np.int64))
    if slot:
        s = SLOT_NAMES.index(slot)
        keep &= found.differs[:, s]
        values = analysis.data.table[found.rows, :, s] if len(found) else np.zeros((0, 1))
        for wanted in (a, b):
            code = LOOKUP[s].get(wanted) if wanted else None
            if code is not None:
                keep &= (values == code).any(axis=1)
    return np.nonzero(keep)[0]


def conflicts_matching(round_: Round, analysis: RoundAnalysis, query: dict[str, Any]) -> np.ndarray:
    """``conflict_rows`` for a ConflictQuery's cleaned data (the page, its CSV and the API alike):
    its ``q`` searched in the database, over the round's items only."""
    items = None
    if query.get("q"):
        assigned = Assignment.objects.filter(round=round_).values_list("item_id", flat=True).distinct()
        items = list(items_searched(assigned, query["q"], field="item_id"))
    return conflict_rows(analysis, slot=query["slot"], a=query["a"], b=query["b"], items=items)


def describe_rows(
    analysis: RoundAnalysis, picks: np.ndarray | list[int], *, text_field: str | None = None
) -> list[ConflictRow]:
    """The page's conflicts, with item ids, source ids and each coder's values, and the text the
    round shows when ``text_field`` is given: one query for the page's items only."""
    data, found = analysis.data, analysis.conflicts
    picks = [int(p) for p in picks]
    rows = [int(found.rows[p]) for p in picks]
    ids = [int(data.item_ids[r]) for r in rows]
    items = Item.objects.filter(pk__in=ids)
    if text_field is None:
        sources = dict(items.values_list("pk", "source_id"))
        texts: dict[int, str] = {}
    else:
        found_items = items.values_list("pk", "source_id", "text", "masked_text")
        sources, texts = {}, {}
        for pk, source_id, text, masked in found_items:
            sources[pk], texts[pk] = source_id, text_in_field(text, masked, text_field)
    names = np.array(SLOT_NAMES)
    out = []
    for p, r, item_id in zip(picks, rows, ids, strict=True):
        slots = tuple(names[found.differs[p]])
        values = {
            name: [SLOTS[k].values[c] if c >= 0 else "" for c in data.table[r, :, k]]
            for name in slots
            for k in [SLOT_NAMES.index(name)]
        }
        out.append(ConflictRow(item_id, sources.get(item_id, ""), slots, values, texts.get(item_id, "")))
    return out


def item_texts(*, item_ids: list[int], text_field: str) -> dict[int, str]:
    """item id -> the text a round shows in ``text_field``, for the given items, in one query."""
    rows = Item.objects.filter(pk__in=item_ids).values_list("pk", "text", "masked_text")
    return {pk: text_in_field(text, masked, text_field) for pk, text, masked in rows}


# Passes: one annotator's work in a round, or the parser's prefill shown in a round.
PARSER = "parser"


@dataclass(frozen=True)
class Pass:
    round_id: int
    round_name: str
    who: str  # an annotator's user id as text, or PARSER

    @property
    def key(self) -> str:
        return f"{self.round_id}:{self.who}"

    def label(self, names: dict[int, str]) -> str:
        who = _("parser prefill") if self.who == PARSER else names.get(int(self.who), self.who)
        return f"{self.round_name}: {who}"


def passes_for(round_: Round) -> list[Pass]:
    """The passes of this round and of every round sharing items with it."""
    rounds = Round.objects.filter(
        item_set__items__in=Item.objects.filter(item_sets=round_.item_set)
    ).distinct()
    rounds = [round_, *[r for r in rounds if r.pk != round_.pk]]
    out = []
    for r in rounds:
        annotators = (
            Assignment.objects.filter(round=r, status=Assignment.Status.DONE, control=False)
            .values_list("annotator_id", flat=True)
            .distinct()
            .order_by("annotator_id")
        )
        out += [Pass(r.pk, r.name, str(a)) for a in annotators]
        if not r.is_blind and r.prefill_parser:
            out.append(Pass(r.pk, r.name, PARSER))
    return out


def pass_rows(p: Pass) -> dict[int, tuple]:
    """item id -> the pass's twelve values."""
    annotations = Annotation.objects.filter(
        assignment__round_id=p.round_id, assignment__status=Assignment.Status.DONE, assignment__control=False
    )
    if p.who == PARSER:
        rows = annotations.exclude(prefill=None).values_list("assignment__item_id", "prefill")
        out: dict[int, tuple] = {}
        for item_id, prefill in rows:
            out.setdefault(item_id, tuple(prefill.get(name, "") for name in SLOT_NAMES))
        return out
    rows = annotations.filter(assignment__annotator_id=int(p.who)).values_list(
        "assignment__item_id", *SLOT_FIELDS
    )
    return {row[0]: row[1:] for row in rows}


@dataclass(frozen=True)
class PassComparison:
    items: int
    flows: list[Any]
    report: AgreementReport | None  # raw agreement and alpha per slot between the two passes


def pass_flows(a: Pass, b: Pass) -> tuple[int, list[Any]]:
    """Items in both passes, and the directional flows from A to B."""
    compared = pass_compare(a, b)
    return compared.items, compared.flows


def pass_compare(a: Pass, b: Pass) -> PassComparison:
    """Two passes over the items both have: directional flows from A to B, and per-slot raw
    agreement and alpha between them (as if they were two annotators)."""
    rows_a, rows_b = pass_rows(a), pass_rows(b)
    shared = sorted(rows_a.keys() & rows_b.keys())
    if not shared:
        return PassComparison(0, [], None)
    codes_a = _encode(list(zip(*[rows_a[i] for i in shared], strict=True)))
    codes_b = _encode(list(zip(*[rows_b[i] for i in shared], strict=True)))
    report = agreement(np.stack([codes_a, codes_b], axis=1), bootstrap=BOOTSTRAP, seed=SEED)
    return PassComparison(len(shared), flows(codes_a, codes_b), report)


@dataclass(frozen=True)
class AnchoringRow:
    annotator: str
    annotations: int  # with a prefill
    kept: dict[str, float | None]
    overall: float | None


def anchoring(round_: Round) -> list[AnchoringRow]:
    """Per annotator and slot, the share of submitted values equal to the prefill shown."""
    rows = (
        Annotation.objects.filter(assignment__round=round_, assignment__status=Assignment.Status.DONE)
        .exclude(prefill=None)
        .filter(assignment__control=False)
        .values_list("assignment__annotator__username", "prefill", *SLOT_FIELDS)
        .order_by("assignment__annotator__username")
    )
    by_user: dict[str, tuple[list, list]] = {}
    for username, prefill, *slots in rows:
        shown, given = by_user.setdefault(username, ([], []))
        shown.append(tuple(prefill.get(name, "") for name in SLOT_NAMES))
        given.append(tuple(slots))
    out = []
    for username, (shown, given) in by_user.items():
        a = _encode(list(zip(*given, strict=True)))
        p = _encode(list(zip(*shown, strict=True)))
        kept = retention(a, p)
        valid = (p >= 0) & (a >= 0)
        overall = float((a[valid] == p[valid]).mean()) if valid.any() else None
        out.append(AnchoringRow(username, len(given), kept, overall))
    return out


def arms(
    treatment: Round, control: Round, *, levels: dict[str, str] | None = None
) -> tuple[int, AgreementReport, AgreementReport]:
    """Alpha per slot in a prefilled round and a blind round, over the items both have."""
    t, c = round_table(treatment.pk), round_table(control.pk)
    shared = np.intersect1d(t.item_ids, c.item_ids)
    pick_t = np.searchsorted(t.item_ids, shared)
    pick_c = np.searchsorted(c.item_ids, shared)
    empty = np.zeros((0, 1, len(SLOTS)), np.int16)
    table_t = t.table[pick_t] if t.coders else empty
    table_c = c.table[pick_c] if c.coders else empty
    return (
        int(shared.size),
        agreement(table_t, levels=levels, bootstrap=BOOTSTRAP, seed=SEED),
        agreement(table_c, levels=levels, bootstrap=BOOTSTRAP, seed=SEED),
    )


def blind_controls(round_: Round) -> list[tuple[Round, int]]:
    """The blind rounds that can be a control arm for ``round_``: those with submitted items in
    common with it, each with how many (in one query; ``arms`` compares the same items)."""
    done = Assignment.Status.DONE
    mine = Assignment.objects.filter(round=round_, status=done, control=False).values("item_id")
    counts = dict(
        Assignment.objects.filter(round__mode=Round.Mode.BLIND, status=done, item_id__in=mine, control=False)
        .exclude(round=round_)
        .values("round_id")
        .annotate(n=Count("item_id", distinct=True))
        .values_list("round_id", "n")
    )
    return [(r, counts[r.pk]) for r in Round.objects.filter(pk__in=counts).order_by("name")]
