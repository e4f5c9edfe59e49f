"""The records of an EmoExpl export: resolved gold read in batches (one query per batch, keyset
paging, so memory does not grow with the corpus) and encoded as JSONL.

Records are assembled from JSON fragments rather than by encoding one dict per record: a corpus
repeats a few thousand explications, provenances and lines, so their encodings are made once
(bounded caches) and only the per-item parts (text, probabilities) are encoded per item. The
result is byte for byte what ``nsmcore.emoexpl.dumps`` gives for the same record (tested).

Each explication's encoded, verified lines are kept in VerifiedLines the first time they are
exported; until then they are built from the per-line cache (LineVerification), and lines never
judged are verified on the way and cached.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from json.encoder import encode_basestring
from typing import Any

from django.db import connection

import nsmcore
from adjudication.models import GoldConstrual, GoldItem
from annotator.models import Item, ItemSetMember, Round, text_in_field
from jobs.models import LineVerification, VerifiedLines
from nsmcore import emoexpl
from nsmcore.render import render
from nsmcore.schema import SLOT_NAMES, Explication
from nsmcore.verifier import Verifier, text_key


@dataclass
class Tally:
    items: int = 0
    construals: int = 0
    two_construals: int = 0
    lines: int = 0
    entailed: int = 0
    tiers: Counter = field(default_factory=Counter)
    reference: Counter = field(default_factory=Counter)
    routed: Counter = field(default_factory=Counter)
    abstentions: Counter = field(default_factory=Counter)
    rule_set_versions: Counter = field(default_factory=Counter)
    scores: list[float] = field(default_factory=list)


_MEMO = 16384


@lru_cache(maxsize=_MEMO)
def _decode(raw: str) -> Any:
    return json.loads(raw)


def _raw(value: Any) -> str:
    """A JSON column as text: SQLite gives text, some drivers give decoded values."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


@lru_cache(maxsize=_MEMO)
def _lines_of(slots_raw: str) -> tuple[nsmcore.Line, ...]:
    return tuple(render(Explication.from_dict(_decode(slots_raw))))


@lru_cache(maxsize=_MEMO)
def _line_parts(line: nsmcore.Line, meta: str) -> tuple[str, str]:
    """The fixed fragments around a line's probabilities."""
    head = emoexpl.dumps({"slot": line.slot, "value": line.value, "text": line.text})[:-1]
    return head + ',"p_entailment":', "," + meta + "}"


@lru_cache(maxsize=_MEMO)
def _construal_head(
    index: int, slots_raw: str, provenance_raw: str, residue: str, notes: str, label: str, rule: int | None,
    fired_raw: str, abstention: str, rule_set_version: str,
) -> str:  # fmt: skip
    slots, provenance = _decode(slots_raw), _decode(provenance_raw)
    head = {
        "index": index,
        "explication": {name: slots[name] for name in SLOT_NAMES},
        "residue": residue,
        "notes": notes,
        "provenance": {name: provenance[name] for name in SLOT_NAMES if name in provenance},
        "routing": {
            "label": label,
            "rule": rule,
            "fired": _decode(fired_raw),
            "abstention": abstention or None,
            "rule_set_version": rule_set_version,
        },
    }
    return emoexpl.dumps(head)[:-1] + ',"lines":'


NO_SCORE = '"p_neutral":null,"p_contradiction":null,"entailed":null'


def _number(value: float | None) -> str:
    return "null" if value is None else repr(value)


@dataclass
class GoldRow:
    gold_id: int
    item_id: int
    round_id: int
    pivotal: list[str]
    source: str
    source_id: str
    text: str
    masked: str
    reference: str
    construals: list[tuple] = field(default_factory=list)


def gold_batches(round_id: int | None, size: int) -> Iterator[list[GoldRow]]:
    """Resolved gold items in item order, ``size`` at a time, with their items and construals:
    one query per batch (keyset paging, so memory does not grow with the corpus)."""
    q = connection.ops.quote_name
    gold, item, construal = (m._meta.db_table for m in (GoldItem, Item, GoldConstrual))
    scope = "status = %s" + (" AND round_id = %s" if round_id is not None else "")
    sql = (
        "SELECT g.id, g.item_id, g.round_id, g.pivotal_slots, i.source, i.source_id, i.text, i.masked_text, "
        f"i.reference_label, c.{q('index')}, c.slots, c.provenance, c.residue, c.notes, c.label, c.rule, "
        "c.fired, c.abstention, c.rule_set_version "
        f"FROM {gold} g JOIN {item} i ON i.id = g.item_id JOIN {construal} c ON c.gold_id = g.id "
        f"WHERE g.id IN (SELECT id FROM {gold} WHERE {scope} AND item_id > %s ORDER BY item_id LIMIT %s) "
        f"ORDER BY g.item_id, c.{q('index')}"
    )  # fmt: skip
    params: list[Any] = [GoldItem.Status.RESOLVED] + ([round_id] if round_id is not None else [])
    last = 0
    while True:
        with connection.cursor() as cursor:
            cursor.execute(sql, [*params, last, size])
            rows = cursor.fetchall()
        if not rows:
            return
        batch: list[GoldRow] = []
        for row in rows:
            if not batch or batch[-1].gold_id != row[0]:
                pivotal = _decode(_raw(row[3]))
                batch.append(GoldRow(row[0], row[1], row[2], pivotal, *row[4:9]))
            index, slots, provenance, residue, notes, label, rule, fired, abstention, rsv = row[9:]
            batch[-1].construals.append(
                (
                    index,
                    _raw(slots),
                    _raw(provenance),
                    residue,
                    notes,
                    label,
                    rule,
                    _raw(fired),
                    abstention,
                    rsv,
                )
            )
        yield batch
        last = batch[-1].item_id


def _tiers(batch: list[GoldRow], set_names: dict[int, tuple[str, str]]) -> dict[int, str]:
    """Item id -> the encoded list of its item sets' tiers."""
    ids = {row.item_id for row in batch}
    members: dict[int, list[int]] = {}
    table = ItemSetMember._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT item_id, item_set_id FROM {table} WHERE item_id >= %s AND item_id <= %s",
            [batch[0].item_id, batch[-1].item_id],
        )
        for item_id, set_id in cursor.fetchall():
            if item_id in ids:
                members.setdefault(item_id, []).append(set_id)
    out = {}
    for item_id in ids:
        sets = tuple(sorted(members.get(item_id, [])))
        out[item_id] = _tier_list(sets, tuple(set_names[s] for s in sets))
    return out


Scores = dict[str, dict[str, tuple[float, float | None, float | None]]]
UNIT, RECORD = "\x1f", "\x1e"  # separators inside one text's aggregated judgements


def _judgement_sql(table: str, n: int) -> str:
    """Per text, its cached judgements in one string: 'line US p_e US p_n US p_c' joined by RS
    (one row per text instead of one per line: the rows, not the bytes, cost the time)."""
    if connection.vendor == "postgresql":
        us, text, null = "chr(31)", "{}::text", "coalesce({}::text, '')"
        agg = "string_agg({}, chr(30))"
    else:
        us, text, null = "char(31)", "{}", "ifnull({}, '')"
        agg = "group_concat({}, char(30))"
    parts = [text.format("p_entailment"), null.format("p_neutral"), null.format("p_contradiction")]
    cell = f" || {us} || ".join(["line", *parts])
    agg = agg.format(cell)
    marks = ", ".join(["%s"] * n)
    return f"SELECT text_sha, {agg} FROM {table} WHERE model = %s AND text_sha IN ({marks}) GROUP BY text_sha"


def _float(text: str) -> float | None:
    return float(text) if text else None


def _scores(verifier: Verifier | None, work: list[tuple[str, str, list[str]]]) -> Scores:
    """text sha -> line -> (p_entailment, p_neutral, p_contradiction) for every line of the batch:
    read from the cache, and the missing ones verified now (and cached). ``work`` holds
    (sha, premise, lines)."""
    if verifier is None:
        return {}
    from jobs.verification import DbCache

    shas = sorted({sha for sha, _, _ in work})
    found: Scores = {}
    table = LineVerification._meta.db_table
    with connection.cursor() as cursor:
        for start in range(0, len(shas), 900):  # under every database's parameter limit
            chunk = shas[start : start + 900]
            cursor.execute(_judgement_sql(table, len(chunk)), [verifier.cache_model, *chunk])
            for sha, joined in cursor.fetchall():
                by_line = found[sha] = {}
                for cell in joined.split(RECORD):
                    line, p_e, p_n, p_c = cell.split(UNIT)
                    by_line[line] = (float(p_e), _float(p_n), _float(p_c))
    missing = {}
    for sha, premise, lines in work:
        have = found.get(sha, {})
        for line in lines:
            if line not in have:
                missing[(sha, line)] = premise
    if missing:
        keys = list(missing)
        fresh = verifier.score([(missing[k], k[1]) for k in keys], cache=DbCache())
        for (sha, line), score in zip(keys, fresh, strict=True):
            found.setdefault(sha, {})[line] = (score.p_entailment, score.p_neutral, score.p_contradiction)
    return found


@lru_cache(maxsize=_MEMO)
def _construal_lines(slots_raw: str, meta: str) -> tuple[tuple[str, str, str], ...]:
    """(line text, fragment before its probabilities, fragment after) for each rendered line."""
    return tuple((line.text, *_line_parts(line, meta)) for line in _lines_of(slots_raw))


def _encode_lines(
    lines: tuple[tuple[str, str, str], ...], by_line: dict[str, tuple], threshold: float | None
) -> tuple[str, int, int]:
    """A construal's line records as a JSON array, with how many lines were scored and entailed."""
    p = emoexpl.probability
    encoded = []
    entailed = known = 0
    for text, before, after in lines:
        score = by_line.get(text)
        if score is None:
            encoded.append(f"{before}null,{NO_SCORE}{after}")
            continue
        p_e, p_n, p_c = score
        hit = p_e >= threshold
        known += 1
        entailed += hit
        encoded.append(
            f'{before}{round(p_e, 6)!r},"p_neutral":{_number(p(p_n))},'
            f'"p_contradiction":{_number(p(p_c))},"entailed":{"true" if hit else "false"}{after}'
        )
    return f"[{','.join(encoded)}]", known, entailed


@lru_cache(maxsize=_MEMO)
def _slots_key(slots_raw: str) -> str:
    slots = _decode(slots_raw)
    return hashlib.sha256(emoexpl.dumps([slots[name] for name in SLOT_NAMES]).encode()).hexdigest()


Fragments = dict[tuple[str, str], tuple[str, int, int]]


def _fragments(verifier: Verifier, work: list[tuple[str, str, list[str]]], meta: str) -> Fragments:
    """(text sha, slots key) -> (line records JSON, scored, entailed) for every construal of the
    batch: one row each from VerifiedLines; those missing are built from the per-line cache (and
    the model, for lines never verified) and stored for the next export. ``work`` holds
    (sha, premise, slots of each construal)."""
    model, threshold = verifier.cache_model, verifier.threshold
    shas = sorted({sha for sha, _, _ in work})
    found: Fragments = {}
    table = VerifiedLines._meta.db_table
    with connection.cursor() as cursor:
        for start in range(0, len(shas), 900):
            chunk = shas[start : start + 900]
            cursor.execute(
                f"SELECT text_sha, slots_key, lines, scored, entailed FROM {table} "
                f"WHERE model = %s AND threshold = %s AND text_sha IN ({', '.join(['%s'] * len(chunk))})",
                [model, threshold, *chunk],
            )
            for sha, key, lines, scored, entailed in cursor.fetchall():
                found[(sha, key)] = (lines, scored, entailed)
    todo = [
        (sha, premise, [s for s in slots if (sha, _slots_key(s)) not in found])
        for sha, premise, slots in work
    ]
    todo = [(sha, premise, slots) for sha, premise, slots in todo if slots]
    if not todo:
        return found
    scores = _scores(
        verifier,
        [(sha, premise, [line.text for s in slots for line in _lines_of(s)]) for sha, premise, slots in todo],
    )
    fresh = {}
    for sha, _, slots in todo:
        for s in slots:
            fresh[(sha, _slots_key(s))] = _encode_lines(
                _construal_lines(s, meta), scores.get(sha, {}), threshold
            )
    VerifiedLines.objects.bulk_create(
        [
            VerifiedLines(model=model, threshold=threshold, text_sha=sha, slots_key=key, lines=lines,
                          scored=scored, entailed=entailed)
            for (sha, key), (lines, scored, entailed) in fresh.items()
        ],
        ignore_conflicts=True,
        batch_size=1000,
    )  # fmt: skip
    found.update(fresh)
    return found


enc = encode_basestring  # a JSON string, as json.dumps(ensure_ascii=False) writes it


@lru_cache(maxsize=_MEMO)
def _tail(round_name: str, pivotal: str) -> str:
    return f'"round":{enc(round_name)},"pivotal_slots":{pivotal}'


@lru_cache(maxsize=_MEMO)
def _tier_list(set_ids: tuple[int, ...], names: tuple[tuple[str, str], ...]) -> str:
    return emoexpl.dumps([{"tier": t, "item_set": name} for t, name in sorted(names)])


def batch_records(
    batch: list[GoldRow], *, rounds: dict[int, Round], set_names: dict[int, tuple[str, str]],
    verifier: Verifier | None, tally: Tally,
) -> list[str]:  # fmt: skip
    """The JSONL text of one batch of gold items, as fragments to be joined."""
    meta = emoexpl.dumps(
        {
            "verifier_model": verifier.model_id if verifier else None,
            "verifier_revision": verifier.revision if verifier else None,
            "threshold": verifier.threshold if verifier else None,
        }
    )[1:-1]
    tiers = _tiers(batch, set_names)
    work = []
    for row in batch:
        premise = text_in_field(row.text, row.masked, rounds[row.round_id].text_field)
        work.append((text_key(premise), premise, [c[1] for c in row.construals]))
    fragments = _fragments(verifier, work, meta) if verifier else {}

    out: list[str] = []  # the batch's JSONL as fragments, joined once by the writer
    for row, (sha, _, _) in zip(batch, work, strict=True):
        round_ = rounds[row.round_id]
        out.append(
            f'{{"id":{enc(row.source + ":" + row.source_id)},"source":{enc(row.source)},'
            f'"source_id":{enc(row.source_id)},"text":{enc(row.text)},"masked_text":{enc(row.masked)},'
            f'"premise_field":{enc(round_.text_field)},"reference_label":{enc(row.reference)},'
            f'"tiers":{tiers[row.item_id]},{_tail(round_.name, emoexpl.dumps(row.pivotal))},"construals":['
        )
        item_lines = item_entailed = 0
        for k, construal in enumerate(row.construals):
            index, slots_raw, _, _, _, label, _, _, abstention, rsv = construal
            if verifier is None:
                lines, known, entailed = _encode_lines(_construal_lines(slots_raw, meta), {}, None)
            else:
                lines, known, entailed = fragments[(sha, _slots_key(slots_raw))]
            score_text = _number(entailed / known) if known else "null"
            out.extend(
                ("," if k else "", _construal_head(*construal), lines, f',"item_score":{score_text}}}')
            )
            item_lines += known
            item_entailed += entailed
            tally.construals += 1
            tally.lines += len(_lines_of(slots_raw))
            tally.entailed += entailed
            tally.rule_set_versions[rsv] += 1
            if index == 1:
                tally.routed[label] += 1
                if abstention:
                    tally.abstentions[abstention] += 1
        item_score = item_entailed / item_lines if item_lines else None
        out.append(f'],"item_score":{_number(item_score)}}}\n')
        if item_score is not None:
            tally.scores.append(item_score)
        tally.items += 1
        tally.two_construals += len(row.construals) == 2
        tally.reference[row.reference] += 1
        for tier in _decode(tiers[row.item_id]):
            tally.tiers[(tier["tier"], tier["item_set"])] += 1
    return out


def forget_encodings() -> None:
    """Empty the bounded caches of encoded fragments (as a fresh worker process starts)."""
    for memo in (
        _decode,
        _lines_of,
        _line_parts,
        _construal_head,
        _construal_lines,
        _slots_key,
        _tail,
        _tier_list,
    ):
        memo.cache_clear()
