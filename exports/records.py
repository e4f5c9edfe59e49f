"""The records of an EmoExpl export: resolved gold read in batches (one query per batch, keyset
paging, so memory does not grow with the corpus) and encoded as JSONL.

Records are assembled from JSON fragments rather than by encoding one dict per record: a corpus
repeats a few thousand explications, provenances and lines, so their encodings are made once
(an export's own Encodings) and only the per-item parts (text, probabilities) are encoded per item. The
result is byte for byte ``nsmcore.emoexpl.dumps`` of the record ``nsmcore.emoexpl.record`` builds,
which defines what a record holds (tests/jobs/test_export_record.py compares whole records).

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from operator import itemgetter
from typing import Any, NamedTuple

from django.db.models import FilteredRelation, Q, QuerySet

import nsmcore
from adjudication.models import GoldConstrual, GoldItem
from annotator.models import ItemSetMember, Round, text_in_field
from exports.models import VerifiedLines
from exports.queries import gold_batch_rows
from nsmcore import emoexpl
from nsmcore.render import render
from nsmcore.schema import SLOT_NAMES, Explication
from nsmcore.verifier import Verifier, text_key
from verification.models import LineVerification
from verification.verify import DbCache


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

    def manifest_counts(self, *, verified: bool) -> dict[str, Any]:
        """The manifest's ``counts`` (the export writes them, replay rebuilds them)."""
        return {
            "items": self.items,
            "construals": self.construals,
            "two_construals": self.two_construals,
            "lines": self.lines,
            "entailed_lines": self.entailed if verified else None,
            "mean_item_score": round(sum(self.scores) / len(self.scores), 6) if self.scores else None,
            "tiers": [
                {"tier": t, "item_set": name, "items": n} for (t, name), n in sorted(self.tiers.items())
            ],
            "labels": {
                label: {"reference": self.reference[label], "routed": self.routed[label]}
                for label in sorted(set(self.reference) | set(self.routed))
            },
            "abstentions": dict(sorted(self.abstentions.items())),
            "rule_set_versions": dict(sorted(self.rule_set_versions.items())),
        }


ENCODINGS_KEPT = 16384  # entries an export's Encodings keeps before it starts afresh


class Encodings:
    """The encoded fragments of one export (explications, provenances, lines, rounds), each made
    once: a corpus repeats a few thousand of them. It lives as long as the export that made it,
    so nothing outlives the export or differs between processes; it starts afresh after
    ENCODINGS_KEPT entries, so memory does not grow with the corpus."""

    def __init__(self) -> None:
        self.kept: dict[tuple, Any] = {}

    def get(self, make: Callable[..., Any], *args: Any) -> Any:
        key = (make, *args)
        found = self.kept.get(key, _NONE)
        if found is _NONE:
            if len(self.kept) >= ENCODINGS_KEPT:
                self.kept.clear()
            found = self.kept[key] = make(self, *args)
        return found


_NONE = object()


def _decode(_: Encodings, raw: str) -> Any:
    return json.loads(raw)


def _raw(value: Any) -> str:
    """A JSON column as text: SQLite gives text, some drivers give decoded values."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _lines_of(memo: Encodings, slots_raw: str) -> tuple[nsmcore.Line, ...]:
    return tuple(render(Explication.from_dict(memo.get(_decode, slots_raw))))


def _line_parts(line: nsmcore.Line, meta: str) -> tuple[str, str]:
    """The fixed fragments around a line's probabilities."""
    head = emoexpl.dumps({"slot": line.slot, "value": line.value, "text": line.text})[:-1]
    return head + ',"p_entailment":', "," + meta + "}"


def _construal_head(
    memo: Encodings, index: int, slots_raw: str, provenance_raw: str, residue: str, notes: str,
    label: str, rule: int | None, fired_raw: str, abstention: str, rule_set_version: str,
) -> str:  # fmt: skip
    slots, provenance = memo.get(_decode, slots_raw), memo.get(_decode, provenance_raw)
    head = {
        "index": index,
        "explication": {name: slots[name] for name in SLOT_NAMES},
        "residue": residue,
        "notes": notes,
        "provenance": {name: provenance[name] for name in SLOT_NAMES if name in provenance},
        "routing": {
            "label": label,
            "rule": rule,
            "fired": memo.get(_decode, fired_raw),
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


_COLUMNS = (
    "gold_id", "gold__item_id", "gold__round_id", "gold__pivotal_slots", "gold__item__source",
    "gold__item__source_id", "gold__item__text", "gold__item__masked_text", "gold__item__reference_label",
    "id", "index", "slots", "provenance", "residue", "notes", "label", "rule", "fired", "abstention",
    "rule_set_version",
)  # fmt: skip
_CACHED = ("v__text_sha", "v__slots_key", "v__scores", "v__scored", "v__entailed")


def gold_batch_query(
    round_id: int | None, after_item: int, size: int, verified_by: tuple[str, float] | None
) -> QuerySet:
    """The construals of the next ``size`` resolved gold items after ``after_item`` (item order),
    with their items and, given ``verified_by`` (cache model, threshold), each construal's cached
    verified lines: one query (keyset paging, so memory does not grow with the corpus)."""
    gold = GoldItem.objects.filter(status=GoldItem.Status.RESOLVED, item_id__gt=after_item)
    if round_id is not None:
        gold = gold.filter(round_id=round_id)
    page = gold.order_by("item_id").values("id")[:size]
    # unordered: the rows are sorted here, since the database took longer to sort wide rows
    construals = GoldConstrual.objects.filter(gold_id__in=page).order_by()
    if verified_by is None:
        return construals.values_list(*_COLUMNS)
    model, threshold = verified_by
    # the cache rows were written in construal order, so these lookups read the table in order
    construals = construals.annotate(
        v=FilteredRelation("verified_lines", condition=Q(verified_lines__model=model,
                                                         verified_lines__threshold=threshold))
    )  # fmt: skip
    return construals.values_list(*_COLUMNS, *_CACHED)


def gold_batches(
    round_id: int | None, size: int, verified_by: tuple[str, float] | None = None
) -> Iterator[list[GoldRow]]:
    """Resolved gold items in item order, ``size`` at a time, with their items, construals and,
    given ``verified_by`` (cache model, threshold), each construal's cached verified lines: one
    query per batch (``gold_batch_query``) and one for the batch's item sets."""
    last = 0
    while True:
        rows = gold_batch_rows(gold_batch_query(round_id, last, size, verified_by))
        if not rows:
            return
        rows.sort(key=_item_then_index)
        raw = _raw
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
            cached = row[20:] if len(row) > 20 and row[20] is not None else None
            batch[-1].construals.append((row[9], head, cached))
        _item_sets(batch)
        yield batch
        last = batch[-1].item_id


def _item_sets(batch: list[GoldRow]) -> None:
    """Fill in each row's item sets (one query over the batch's range of item ids), as the ids
    in ascending order, comma-separated."""
    members = ItemSetMember.objects.filter(
        item_id__gte=batch[0].item_id, item_id__lte=batch[-1].item_id
    ).order_by("item_id", "item_set_id")
    sets: dict[int, list[str]] = {}
    for item_id, set_id in members.values_list("item_id", "item_set_id"):
        sets.setdefault(item_id, []).append(str(set_id))
    for row in batch:
        row.sets = ",".join(sets.get(row.item_id, ()))


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
RECORD = "\x1e"  # between the lines' scores in a VerifiedLines row


def _scores(verifier: Verifier | None, work: list[tuple[str, str, list[str]]]) -> Scores:
    """text sha -> line -> (p_entailment, p_neutral, p_contradiction) for every line of the batch:
    read from the cache, and the missing ones verified now (and cached). ``work`` holds
    (sha, premise, lines)."""
    if verifier is None:
        return {}
    shas = sorted({sha for sha, _, _ in work})
    found: Scores = {}
    for start in range(0, len(shas), 900):  # under every database's parameter limit
        judged = LineVerification.objects.filter(
            model=verifier.cache_model, text_sha__in=shas[start : start + 900]
        ).values_list("text_sha", "line", "p_entailment", "p_neutral", "p_contradiction")
        for sha, line, p_e, p_n, p_c in judged:
            found.setdefault(sha, {})[line] = (p_e, p_n, p_c)
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


def _rendered(memo: Encodings, slots_raw: str, meta: str) -> Rendered:
    """The key covers the slots and the rendered lines, so cached scores never meet lines that a
    changed renderer words differently."""
    slots, lines = memo.get(_decode, slots_raw), memo.get(_lines_of, slots_raw)
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


def _unverified(memo: Encodings, slots_raw: str, meta: str) -> str:
    rendered = memo.get(_rendered, slots_raw, meta)
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


def _tail(memo: Encodings, round_name: str, pivotal_raw: str) -> str:
    return f'"round":{enc(round_name)},"pivotal_slots":{emoexpl.dumps(memo.get(_decode, pivotal_raw))}'


def batch_records(
    batch: list[GoldRow], *, rounds: dict[int, Round], tiers: TierLists, verifier: Verifier | None,
    tally: Tally, encodings: Encodings,
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
        rendered = [encodings.get(_rendered, head[1], meta) for _, head, _ in row.construals]
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
            f'"tiers":{tier_list},{encodings.get(_tail, round_.name, row.pivotal)},"construals":['
        )
        item_lines = item_entailed = 0
        for k, ((pk, head, _), r, verified) in enumerate(zip(row.construals, rendered, lines, strict=True)):
            index, slots_raw, _, _, _, label, _, _, abstention, rsv = head
            if verifier is None:
                encoded, known, entailed = encodings.get(_unverified, slots_raw, meta), 0, 0
            else:
                scores, known, entailed = verified or fresh[pk]
                encoded = _line_records(r, scores)
            score_text = _number(entailed / known) if known else "null"
            head_text = encodings.get(_construal_head, *head)
            out.extend(("," if k else "", head_text, encoded, f',"item_score":{score_text}}}'))
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
