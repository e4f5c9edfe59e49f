"""The rebuilt parts of an EmoExpl archive (exports.replay): records from gold as the history
gives it (exports.history), routed under the rule set active then, rendered, with the verifier's
recorded judgements; the tally the manifest counts; the contrast split as of then; the manifest,
key by key as exports.export writes it.

A record is ``nsmcore.emoexpl.record`` (the one definition of what a record holds, which the
export's fast assembly equals byte for byte: tests/exports/test_export_record.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import nsmcore
from annotator.models import ItemSet, Round, text_in_field
from contrasts.models import PairSet
from contrasts.split import contrast_records
from exports.history import GoldState
from exports.records import Tally
from nsmcore import emoexpl
from nsmcore.mapper import route_batch
from nsmcore.render import render
from nsmcore.schema import SLOT_NAMES, Explication
from nsmcore.verifier import text_key
from verification.models import LineVerification


@dataclass(frozen=True)
class VerifierMeta:
    """The verifier an archive names (model, revision, threshold): its judgements are read from
    the cache under ``model@revision``; the model itself is never loaded."""

    model: str
    revision: str
    threshold: float

    @property
    def cache_model(self) -> str:
        return f"{self.model}@{self.revision}"

    @classmethod
    def of(cls, manifest: dict[str, Any]) -> VerifierMeta | None:
        v = manifest.get("verifier")
        if not v:
            return None
        return cls(str(v["model"]), str(v["revision"]), float(v["threshold"]))


class SetNames:
    """Item set id -> (tier, name), read once."""

    def __init__(self) -> None:
        self.names = {
            pk: (tier, name) for pk, tier, name in ItemSet.objects.values_list("pk", "tier", "name")
        }

    def of(self, ids: list[int]) -> list[tuple[str, str]]:
        return sorted(self.names[pk] for pk in ids if pk in self.names)


def _scores(verifier: VerifierMeta, shas: set[str]) -> dict[tuple[str, str], tuple]:
    """(text sha, line) -> the recorded (p_entailment, p_neutral, p_contradiction)."""
    found = {}
    ordered = sorted(shas)
    for start in range(0, len(ordered), 900):  # under every database's parameter limit
        rows = LineVerification.objects.filter(
            model=verifier.cache_model, text_sha__in=ordered[start : start + 900]
        ).values_list("text_sha", "line", "p_entailment", "p_neutral", "p_contradiction")
        for sha, line, p_e, p_n, p_c in rows:
            found[(sha, line)] = (p_e, p_n, p_c)
    return found


def batch_records(
    states: list[GoldState], *, rounds: dict[int, Round], sets: SetNames, rule_set: nsmcore.RuleSet,
    verifier: VerifierMeta | None, tally: Tally,
) -> dict[int, str]:  # fmt: skip
    """Gold id -> the JSONL line of each record the history resolves by then."""
    resolved = [s for s in states if s.resolved]
    construals = [c for s in resolved for c in s.construals]
    complete = [c for c in construals if c.complete]
    routed = route_batch([{**c.slots, "residue": c.residue} for c in complete], rule_set) if complete else []
    routing = {id(c): r for c, r in zip(complete, routed, strict=True)}
    premises = {s.gold_id: text_in_field(s.text, s.masked, rounds[s.round_id].text_field) for s in resolved}
    shas = {gold_id: text_key(p) for gold_id, p in premises.items()}
    scores = _scores(verifier, set(shas.values())) if verifier else {}
    meta = emoexpl.VerifierMeta(verifier.model, verifier.revision, verifier.threshold) if verifier else None
    rendered: dict[tuple, tuple] = {}
    out = {}
    for s in resolved:
        data = []
        for c in s.construals:
            key = tuple(c.slots.get(name) for name in SLOT_NAMES)
            if key not in rendered:
                rendered[key] = tuple(render(Explication.from_dict(dict(zip(SLOT_NAMES, key, strict=True)))))
            r = routing.get(id(c))
            data.append(
                emoexpl.ConstrualData(
                    index=c.index, explication=dict(c.slots), residue=c.residue, notes=c.notes,
                    provenance=c.provenance, label=r.label if r else "", rule=r.rule_index if r else None,
                    fired=list(r.fired) if r else [], abstention=(r.abstention_type or "") if r else "",
                    rule_set_version=r.rule_set_version if r else "",
                    lines=[(line, scores.get((shas[s.gold_id], line.text))) for line in rendered[key]],
                )
            )  # fmt: skip
        round_ = rounds[s.round_id]
        tiers = sets.of(s.sets)
        record = emoexpl.record(
            source=s.source, source_id=s.source_id, text=s.text, masked_text=s.masked,
            premise_field=round_.text_field, reference_label=s.reference, tiers=tiers, round_name=round_.name,
            pivotal_slots=list(s.pivotal), construals=data, verifier=meta,
        )  # fmt: skip
        out[s.gold_id] = emoexpl.dumps(record) + "\n"
        _count(tally, record, tiers)
    return out


def _count(tally: Tally, record: dict[str, Any], tiers: list[tuple[str, str]]) -> None:
    """The manifest's counts, as exports.records.batch_records keeps them."""
    for c in record["construals"]:
        routing = c["routing"]
        tally.construals += 1
        tally.lines += len(c["lines"])
        tally.entailed += sum(1 for line in c["lines"] if line["entailed"])
        tally.rule_set_versions[routing["rule_set_version"]] += 1
        if c["index"] == 1:
            tally.routed[routing["label"]] += 1
            if routing["abstention"]:
                tally.abstentions[routing["abstention"]] += 1
    if record["item_score"] is not None:
        tally.scores.append(record["item_score"])
    tally.items += 1
    tally.two_construals += len(record["construals"]) == 2
    tally.reference[record["reference_label"]] += 1
    for key in tiers:
        tally.tiers[key] += 1


def contrast_as_of(at: datetime | None, item_ids: set[int]) -> tuple[str, list[str], int]:
    """contrasts.split.export_split as of ``at``: the newest version of each pair set frozen by
    then (frozen sets never change), over the rebuilt records' items."""
    newest: dict[str, PairSet] = {}
    frozen = PairSet.objects.filter(frozen_at__isnull=False).order_by("name", "-version")
    for pair_set in frozen.filter(frozen_at__lte=at) if at else []:
        newest.setdefault(pair_set.name, pair_set)
    records, specs = [], []
    for pair_set in newest.values():
        chosen = contrast_records(pair_set, item_ids)
        if chosen:
            specs.append(pair_set.spec)
            records += chosen
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), specs, len(records)


def replay_manifest(
    *, published: dict[str, Any], round_: Round | None, tally: Tally, verifier: VerifierMeta | None,
    gold_as_of: datetime | None, agreement: dict[str, Any], conventions: list[Any], rule_set: nsmcore.RuleSet,
    files: dict[str, Any], contrast_sets: list[str], contrast_pairs: int, recipe: dict[str, Any] | None,
) -> dict[str, Any]:  # fmt: skip
    """The manifest exports.export.export_write writes, from the rebuilt parts. What the
    database does not hold is the published manifest's: the software version and the citation."""
    manifest = {
        "name": "EmoExpl",
        "format": emoexpl.FORMAT,
        "scope": f"round {round_.name}" if round_ else "whole gold corpus",
        "software_version": published.get("software_version", nsmcore.__version__),
        "renderer_version": nsmcore.RENDERER_VERSION,
        "gold_as_of": gold_as_of.isoformat() if gold_as_of else None,
        "counts": tally.manifest_counts(verified=verifier is not None),
        "agreement": agreement,
        "conventions": [
            {
                "label": c.label,
                "number": c.number,
                "version": c.version,
                "slot": c.slot,
                "value_a": c.value_a,
                "value_b": c.value_b,
                "chosen": c.chosen,
                "rule": c.rule,
            }
            for c in conventions
        ],
        "rule_set": {
            "version": rule_set.version,
            "hash": rule_set.content_hash,
            "rules": len(rule_set.rules),
        },
        "verifier": (
            {"model": verifier.model, "revision": verifier.revision, "threshold": verifier.threshold}
            if verifier
            else None
        ),
        "files": files,
        "contrast": {"sets": contrast_sets, "pairs": contrast_pairs},
        "citation": published.get("citation", ""),
    }
    if recipe is not None:
        manifest["recipe"] = recipe
    return manifest
