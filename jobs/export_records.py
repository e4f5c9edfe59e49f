"""The records of an EmoExpl export: resolved gold read in batches (one query per batch, keyset
paging, so memory does not grow with the corpus) and encoded as JSONL.

Records are assembled from JSON fragments rather than by encoding one dict per record: a corpus
repeats a few thousand explications, provenances and lines, so their encodings are made once
(bounded caches) and only the per-item parts (text, probabilities) are encoded per item. The
result is byte for byte what ``nsmcore.emoexpl.dumps`` gives for the same record (tested).

Each gold construal's verified lines are kept in VerifiedLines the first time it is exported, as
the JSON of their probabilities only (the fixed parts of a line record come from the rendering),
and read back in the batch's own query; until then, or when the construal's text or explication
has changed since, they are built from the per-line cache (LineVerification), and lines never
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
from operator import itemgetter
from typing import Any, NamedTuple

from django.db import connection

import nsmcore
from adjudication.models import GoldConstrual, GoldItem
from annotator.models import Item, ItemSetMember, Round, text_in_field
from jobs.models import VerifiedLines
from nsmcore import emoexpl
from nsmcore.render import render
from nsmcore.schema import SLOT_NAMES, Explication
from nsmcore.verifier import Verifier, text_key
from verification.models import LineVerification


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


Head = tuple  # a construal's fields for _construal_head: index, slots, provenance, ... (JSON as text)
Cached = tuple[str, str, str, int, int]  # a VerifiedLines row: text_sha, slots_key, scores, scored, entailed


@dataclass(slots=True)
class GoldRow:
    gold_id: int
    item_id: int
    round_id: int
    pivotal: str  # JSON text
    sets: str  # the ids of the item's sets, comma-separated ('' for none)
    source: str
    source_id: str
    text: str
    masked: str
    reference: str
    # (construal id, head, the construal's cached verified lines or None), in index order
    construals: list[tuple[int, Head, Cached | None]] = field(default_factory=list)


_item_then_index = itemgetter(1, 10)


def gold_batches(
    round_id: int | None, size: int, verified_by: tuple[str, float] | None = None
) -> Iterator[list[GoldRow]]:
    """Resolved gold items in item order, ``size`` at a time, with their items, construals and,
    given ``verified_by`` (cache model, threshold), each construal's cached verified lines: one
    query per batch (keyset paging, so memory does not grow with the corpus)."""
    q = connection.ops.quote_name
    gold, item, construal, verified = (
        m._meta.db_table for m in (GoldItem, Item, GoldConstrual, VerifiedLines)
    )
    scope = "status = %s" + (" AND round_id = %s" if round_id is not None else "")
    if verified_by is None:
        cached, join, join_params = "NULL, NULL, NULL, NULL, NULL", "", []
    else:
        # the cache rows were written in construal order, so these lookups read the table in order
        cached = "v.text_sha, v.slots_key, v.scores, v.scored, v.entailed"
        join = f"LEFT JOIN {verified} v ON v.construal_id = c.id AND v.model = %s AND v.threshold = %s "
        join_params = list(verified_by)
    sql = (
        "SELECT g.id, g.item_id, g.round_id, g.pivotal_slots, i.source, i.source_id, i.text, "
        f"i.masked_text, i.reference_label, c.id, c.{q('index')}, c.slots, c.provenance, c.residue, c.notes, "
        f"c.label, c.rule, c.fired, c.abstention, c.rule_set_version, {cached} "
        f"FROM {gold} g JOIN {item} i ON i.id = g.item_id JOIN {construal} c ON c.gold_id = g.id {join}"
        f"WHERE g.id IN (SELECT id FROM {gold} WHERE {scope} AND item_id > %s ORDER BY item_id LIMIT %s)"
    )  # fmt: skip
    params: list[Any] = [*join_params, GoldItem.Status.RESOLVED] + (
        [round_id] if round_id is not None else []
    )
    raw = _raw if connection.vendor != "sqlite" else str  # SQLite gives JSON columns as text
    last = 0
    while True:
        with connection.cursor() as cursor:
            cursor.execute(sql, [*params, last, size])
            rows = cursor.fetchall()
        if not rows:
            return
        rows.sort(key=_item_then_index)  # here, not in SQL: the database took longer to sort wide rows
        batch: list[GoldRow] = []
        for row in rows:
            if not batch or batch[-1].gold_id != row[0]:
                batch.append(GoldRow(row[0], row[1], row[2], raw(row[3]), "", *row[4:9]))
            index, slots, provenance, residue, notes, label, rule, fired, abstention, rsv = row[10:20]
            head = (
                index,
                raw(slots),
                raw(provenance),
                residue,
                notes,
                label,
                rule,
                raw(fired),
                abstention,
                rsv,
            )
            batch[-1].construals.append((row[9], head, row[20:] if row[20] is not None else None))
        _item_sets(batch)
        yield batch
        last = batch[-1].item_id


def _item_sets(batch: list[GoldRow]) -> None:
    """Fill in each row's item sets (one query over the batch's range of item ids)."""
    table = ItemSetMember._meta.db_table
    if connection.vendor == "postgresql":
        ids = "string_agg(item_set_id::text, ',')"
    else:
        ids = "group_concat(item_set_id)"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT item_id, {ids} FROM {table} WHERE item_id >= %s AND item_id <= %s GROUP BY item_id",
            [batch[0].item_id, batch[-1].item_id],
        )
        sets = dict(cursor.fetchall())
    for row in batch:
        row.sets = sets.get(row.item_id) or ""


class TierLists:
    """An item's sets (the ids the query gives, comma-separated) -> the encoded list of their
    tiers and the (tier, set name) pairs, worked out once per distinct combination."""

    def __init__(self, set_names: dict[int, tuple[str, str]]):
        self.set_names = set_names
        self.known: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {}

    def __call__(self, ids: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        found = self.known.get(ids)
        if found is None:
            names = tuple(sorted(self.set_names[int(pk)] for pk in ids.split(",") if pk))
            found = self.known[ids] = (
                emoexpl.dumps([{"tier": t, "item_set": name} for t, name in names]),
                names,
            )
        return found


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


class Rendered(NamedTuple):
    """What the records need of one explication: its content key, and for each rendered line its
    text and the fixed fragments before and after its probabilities."""

    key: str
    lines: tuple[tuple[str, str, str], ...]
    template: str  # the JSON array of line records, with %s where each line's scores go


@lru_cache(maxsize=_MEMO)
def _rendered(slots_raw: str, meta: str) -> Rendered:
    """The key covers the slots and the rendered lines, so cached scores never meet lines that a
    changed renderer words differently."""
    slots, lines = _decode(slots_raw), _lines_of(slots_raw)
    content = emoexpl.dumps([[slots[name] for name in SLOT_NAMES], [line.text for line in lines]])
    key = hashlib.sha256(content.encode()).hexdigest()
    parts = tuple((line.text, *_line_parts(line, meta)) for line in lines)
    template = "[" + ",".join(f"{b.replace('%', '%%')}%s{a.replace('%', '%%')}" for _, b, a in parts) + "]"
    return Rendered(key, parts, template)


UNSCORED = f"null,{NO_SCORE}"


def _line_scores(
    lines: tuple[tuple[str, str, str], ...], by_line: dict[str, tuple], threshold: float
) -> tuple[str, int, int]:
    """Each line's probabilities as the JSON between its fixed fragments (joined by RECORD), with
    how many lines were scored and entailed."""
    p = emoexpl.probability
    encoded = []
    entailed = known = 0
    for text, _, _ in lines:
        score = by_line.get(text)
        if score is None:
            encoded.append(UNSCORED)
            continue
        p_e, p_n, p_c = score
        hit = p_e >= threshold
        known += 1
        entailed += hit
        encoded.append(
            f'{round(p_e, 6)!r},"p_neutral":{_number(p(p_n))},'
            f'"p_contradiction":{_number(p(p_c))},"entailed":{"true" if hit else "false"}'
        )
    return RECORD.join(encoded), known, entailed


def _line_records(rendered: Rendered, scores: str) -> str:
    """A construal's line records as a JSON array: each line's fixed fragments around its scores."""
    parts = tuple(scores.split(RECORD))
    if len(parts) != len(rendered.lines):
        raise ValueError(f"scores for {len(parts)} lines, but the explication renders {len(rendered.lines)}")
    return rendered.template % parts


@lru_cache(maxsize=_MEMO)
def _unverified(slots_raw: str, meta: str) -> str:
    rendered = _rendered(slots_raw, meta)
    return _line_records(rendered, RECORD.join([UNSCORED] * len(rendered.lines)))


def _verify_missing(
    verifier: Verifier, missing: list[tuple[int, str, str, Rendered]]
) -> dict[int, tuple[str, int, int]]:
    """Construal id -> (line scores, scored, entailed) for construals whose verified lines are not
    cached (or were cached for another text or explication): built from the per-line cache (and
    the model, for lines never verified) and stored for the next export. ``missing`` holds
    (construal id, text sha, premise, rendering)."""
    model, threshold = verifier.cache_model, verifier.threshold
    by_text: dict[str, tuple[str, list[str]]] = {}
    for _, sha, premise, r in missing:
        by_text.setdefault(sha, (premise, []))[1].extend(line[0] for line in r.lines)
    scores = _scores(verifier, [(sha, premise, lines) for sha, (premise, lines) in by_text.items()])
    fresh = {
        pk: (sha, r.key, *_line_scores(r.lines, scores.get(sha, {}), threshold)) for pk, sha, _, r in missing
    }
    VerifiedLines.objects.bulk_create(
        [
            VerifiedLines(construal_id=pk, model=model, threshold=threshold, text_sha=sha, slots_key=key,
                          scores=scores, scored=scored, entailed=entailed)
            for pk, (sha, key, scores, scored, entailed) in fresh.items()
        ],
        update_conflicts=True,
        unique_fields=["construal", "model", "threshold"],
        update_fields=["text_sha", "slots_key", "scores", "scored", "entailed"],
        batch_size=500,
    )  # fmt: skip
    return {pk: values[2:] for pk, values in fresh.items()}


enc = encode_basestring  # a JSON string, as json.dumps(ensure_ascii=False) writes it


@lru_cache(maxsize=_MEMO)
def _tail(round_name: str, pivotal_raw: str) -> str:
    return f'"round":{enc(round_name)},"pivotal_slots":{emoexpl.dumps(_decode(pivotal_raw))}'


def batch_records(
    batch: list[GoldRow], *, rounds: dict[int, Round], tiers: TierLists, verifier: Verifier | None,
    tally: Tally,
) -> list[str]:  # fmt: skip
    """The JSONL text of one batch of gold items, as fragments to be joined."""
    meta = emoexpl.dumps(
        {
            "verifier_model": verifier.model_id if verifier else None,
            "verifier_revision": verifier.revision if verifier else None,
            "threshold": verifier.threshold if verifier else None,
        }
    )[1:-1]
    prepared = []  # per item: (its construals' renderings, the verified lines of each)
    missing = []
    for row in batch:
        rendered = [_rendered(head[1], meta) for _, head, _ in row.construals]
        lines: list[tuple[str, int, int] | None] = [None] * len(rendered)
        if verifier is not None:
            premise = text_in_field(row.text, row.masked, rounds[row.round_id].text_field)
            sha = text_key(premise)
            for k, ((pk, _, cached), r) in enumerate(zip(row.construals, rendered, strict=True)):
                if cached is not None and cached[0] == sha and cached[1] == r.key:
                    lines[k] = cached[2:]
                else:  # never exported with this verifier, or the text or explication changed
                    missing.append((pk, sha, premise, r))
        prepared.append((rendered, lines))
    fresh = _verify_missing(verifier, missing) if missing else {}

    out: list[str] = []  # the batch's JSONL as fragments, joined once by the writer
    for row, (rendered, lines) in zip(batch, prepared, strict=True):
        round_ = rounds[row.round_id]
        tier_list, tier_keys = tiers(row.sets)
        out.append(
            f'{{"id":{enc(row.source + ":" + row.source_id)},"source":{enc(row.source)},'
            f'"source_id":{enc(row.source_id)},"text":{enc(row.text)},"masked_text":{enc(row.masked)},'
            f'"premise_field":{enc(round_.text_field)},"reference_label":{enc(row.reference)},'
            f'"tiers":{tier_list},{_tail(round_.name, row.pivotal)},"construals":['
        )
        item_lines = item_entailed = 0
        for k, ((pk, head, _), r, verified) in enumerate(zip(row.construals, rendered, lines, strict=True)):
            index, slots_raw, _, _, _, label, _, _, abstention, rsv = head
            if verifier is None:
                encoded, known, entailed = _unverified(slots_raw, meta), 0, 0
            else:
                scores, known, entailed = verified or fresh[pk]
                encoded = _line_records(r, scores)
            score_text = _number(entailed / known) if known else "null"
            out.extend(("," if k else "", _construal_head(*head), encoded, f',"item_score":{score_text}}}'))
            item_lines += known
            item_entailed += entailed
            tally.construals += 1
            tally.lines += len(r.lines)
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
        for key in tier_keys:
            tally.tiers[key] += 1
    return out


def forget_encodings() -> None:
    """Empty the bounded caches of encoded fragments (as a fresh worker process starts)."""
    for memo in (
        _decode,
        _lines_of,
        _line_parts,
        _construal_head,
        _rendered,
        _unverified,
        _tail,
    ):
        memo.cache_clear()
