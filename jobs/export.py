"""The EmoExpl export job: the resolved gold corpus (or one round's) as JSONL, one record per item,
with per-line verification metadata, beside a manifest, a dataset card and the record's JSON
Schema, in one deterministic zip (SPEC section 8 step 7; layout in ``nsmcore.emoexpl``).

Gold items are read in batches by item id, so memory does not grow with the corpus. Lines whose
verification is cached (LineVerification) cost a lookup; the rest are verified on the way and
cached. The archive is renamed into place only when complete, and its history row is written
then; a worker killed mid-export leaves only a hidden temporary file that the re-run removes.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F, Max

import nsmcore
from adjudication.models import Convention, GoldChange, GoldConstrual, GoldItem
from adjudication.rulesets import active_rule_set
from annotator.models import Item, ItemSet, ItemSetMember, Round
from jobs.models import Export, Job, LineVerification
from jobs.services import JobError, _job_create, job_stopped
from nsmcore import emoexpl
from nsmcore.agreement import agreement
from nsmcore.render import render
from nsmcore.schema import SLOT_NAMES, Explication
from nsmcore.verifier import LineScore, Verifier, VerifierUnavailable, item_score, text_key

SCHEMA_NAME = "record.schema.json"


def export_start(
    *, user, round_: Round | None = None, model: str = "", verify: bool = True, enqueue: bool = True
) -> Job:
    """Create an export job for the whole gold corpus or one round's gold. With ``verify``, the
    NLI model is checked (its config) before the job exists; without it, lines carry no
    entailment judgement and the manifest says so."""
    from jobs.verification import verifier_check

    model = (model or settings.NSM_VERIFIER_MODEL) if verify else ""
    if verify:
        try:
            verifier_check(model)
        except VerifierUnavailable as error:
            raise JobError(f"{error} (or export without verification)") from None
    gold = GoldItem.objects.filter(status=GoldItem.Status.RESOLVED)
    if round_ is not None:
        gold = gold.filter(round=round_)
    if not gold.exists() and not _unsynced_rounds(round_):
        where = f"round {round_.name}" if round_ else "any round"
        raise JobError(f"{where} has no resolved gold item yet: nothing to export")
    return _job_create(
        Job.Kind.EXPORT, user=user, item_set=None, round_=round_, key=f"export|{model or '-'}",
        params={"model": model, "verify": verify}, enqueue=enqueue,
    )  # fmt: skip


def _rounds(round_: Round | None) -> list[Round]:
    return [round_] if round_ is not None else list(Round.objects.order_by("pk"))


def _unsynced_rounds(round_: Round | None) -> bool:
    """Whether some round in scope has submitted work that may open gold on sync."""
    from annotator.models import Assignment

    done = Assignment.objects.filter(status=Assignment.Status.DONE)
    return (done.filter(round=round_) if round_ else done).exists()


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


class Lines:
    """Rendered lines per explication, computed once per distinct explication."""

    def __init__(self) -> None:
        self.memo: dict[tuple, list[nsmcore.Line]] = {}

    def __call__(self, slots: dict[str, str]) -> list[nsmcore.Line]:
        key = tuple(slots.get(name) for name in SLOT_NAMES)
        if key not in self.memo:
            self.memo[key] = render(Explication.from_dict(slots))
        return self.memo[key]


def _scores(
    verifier: Verifier | None, batch: list[tuple[str, str, list[str]]]
) -> dict[tuple[str, str], LineScore]:
    """(text sha, line) -> judgement for every line of the batch: read from the cache, and the
    missing ones verified now (and cached). ``batch`` holds (sha, premise, lines)."""
    if verifier is None:
        return {}
    from jobs.verification import DbCache

    shas = list({sha for sha, _, _ in batch})
    found: dict[tuple[str, str], LineScore] = {}
    rows = LineVerification.objects.filter(model=verifier.cache_model, text_sha__in=shas).values_list(
        "text_sha", "line", "p_entailment", "p_neutral", "p_contradiction"
    )
    for sha, line, p_e, p_n, p_c in rows.iterator(chunk_size=20000):
        found[(sha, line)] = LineScore(p_e, p_n, p_c)
    missing = {}
    for sha, premise, lines in batch:
        for line in lines:
            if (sha, line) not in found:
                missing[(sha, line)] = premise
    if missing:
        keys = list(missing)
        fresh = verifier.score([(missing[k], k[1]) for k in keys], cache=DbCache())
        found.update(zip(keys, fresh, strict=True))
    return found


def _line_record(line: nsmcore.Line, score: LineScore | None, meta: dict[str, Any]) -> dict[str, Any]:
    p = emoexpl.probability
    return {
        "slot": line.slot,
        "value": line.value,
        "text": line.text,
        "p_entailment": p(score.p_entailment) if score else None,
        "p_neutral": p(score.p_neutral) if score else None,
        "p_contradiction": p(score.p_contradiction) if score else None,
        "entailed": score.entailed(meta["threshold"]) if score else None,
        **meta,
    }


def _records(
    golds: list[tuple], *, rounds: dict[int, Round], set_names: dict[int, tuple[str, str]],
    verifier: Verifier | None, lines_of: Lines, tally: Tally,
) -> list[str]:  # fmt: skip
    """The JSONL lines of one batch of gold items (gold id, item id, round id, pivotal slots)."""
    gold_ids = [g[0] for g in golds]
    items = {
        row[0]: row
        for row in Item.objects.filter(pk__in=[g[1] for g in golds]).values_list(
            "pk", "source", "source_id", "text", "masked_text", "reference_label"
        )
    }
    construals: dict[int, list[tuple]] = {}
    for row in (
        GoldConstrual.objects.filter(gold_id__in=gold_ids)
        .order_by("gold_id", "index")
        .values_list(
            "gold_id", "index", "slots", "provenance", "residue", "notes", "label", "rule", "fired",
            "abstention", "rule_set_version",
        )
    ):  # fmt: skip
        construals.setdefault(row[0], []).append(row)
    tiers: dict[int, list[dict[str, str]]] = {}
    for item_id, set_id in ItemSetMember.objects.filter(item_id__in=[g[1] for g in golds]).values_list(
        "item_id", "item_set_id"
    ):
        tier, name = set_names[set_id]
        tiers.setdefault(item_id, []).append({"tier": tier, "item_set": name})

    work = []  # (sha, premise, lines) per gold item, for the verifier
    for gold_id, item_id, round_id, _ in golds:
        premise = _premise(items[item_id], rounds[round_id])
        lines = [line.text for c in construals[gold_id] for line in lines_of(c[2])]
        work.append((text_key(premise), premise, lines))
    scores = _scores(verifier, work)
    meta: dict[str, Any] = {"verifier_model": None, "verifier_revision": None, "threshold": None}
    if verifier is not None:
        meta = {
            "verifier_model": verifier.model_id,
            "verifier_revision": verifier.revision,
            "threshold": verifier.threshold,
        }

    out = []
    for (gold_id, item_id, round_id, pivotal), (sha, _, _) in zip(golds, work, strict=True):
        _, source, source_id, text, masked, reference = items[item_id]
        round_ = rounds[round_id]
        record_construals = []
        all_scores: list[LineScore] = []
        for (
            _,
            index,
            slots,
            provenance,
            residue,
            notes,
            label,
            rule,
            fired,
            abstention,
            rs_version,
        ) in construals[gold_id]:
            lines = lines_of(slots)
            line_scores = [scores.get((sha, line.text)) for line in lines]
            known = [s for s in line_scores if s is not None]
            all_scores += known
            record_construals.append(
                {
                    "index": index,
                    "explication": {name: slots[name] for name in SLOT_NAMES},
                    "residue": residue,
                    "notes": notes,
                    "provenance": {name: provenance[name] for name in SLOT_NAMES if name in provenance},
                    "routing": {
                        "label": label,
                        "rule": rule,
                        "fired": fired,
                        "abstention": abstention or None,
                        "rule_set_version": rs_version,
                    },
                    "lines": [
                        _line_record(line, s, meta) for line, s in zip(lines, line_scores, strict=True)
                    ],
                    "item_score": item_score(known, verifier.threshold) if verifier and known else None,
                }
            )
            tally.construals += 1
            tally.lines += len(lines)
            tally.entailed += sum(1 for s in known if s.entailed(verifier.threshold)) if verifier else 0
            tally.rule_set_versions[rs_version] += 1
            if index == 1:
                tally.routed[label] += 1
                if abstention:
                    tally.abstentions[abstention] += 1
        score = item_score(all_scores, verifier.threshold) if verifier and all_scores else None
        if score is not None:
            tally.scores.append(score)
        item_tiers = sorted(tiers.get(item_id, []), key=lambda t: (t["tier"], t["item_set"]))
        tally.items += 1
        tally.two_construals += len(record_construals) == 2
        tally.reference[reference] += 1
        for t in item_tiers:
            tally.tiers[(t["tier"], t["item_set"])] += 1
        record = {
            "id": f"{source}:{source_id}",
            "source": source,
            "source_id": source_id,
            "text": text,
            "masked_text": masked,
            "premise_field": round_.text_field,
            "reference_label": reference,
            "tiers": item_tiers,
            "round": round_.name,
            "pivotal_slots": pivotal,
            "construals": record_construals,
            "item_score": score,
        }
        out.append(emoexpl.dumps(record))
    return out


def _premise(item_row: tuple, round_: Round) -> str:
    _, _, _, text, masked, _ = item_row
    return masked if round_.text_field == Round.TEXT_MASKED and masked else text


def _agreement(rounds: list[Round]) -> dict[str, Any]:
    """Alpha and raw agreement per slot of every round in scope with two or more annotators."""
    from adjudication.analytics import round_table

    out = {}
    for round_ in rounds:
        data = round_table(round_.pk)
        if data.coders < 2:
            continue
        report = agreement(data.table, bootstrap=0)
        out[round_.name] = {
            "coders": data.coders,
            "items": report.items,
            "alpha": {s.slot: _round(s.alpha) for s in report.slots},
            "raw": {s.slot: _round(s.raw) for s in report.slots},
        }
    return out


def _round(value: float | None) -> float | None:
    return None if value is None or np.isnan(value) else round(float(value), 6)


def _conventions(rounds: list[Round]) -> list[dict[str, Any]]:
    accepted = Convention.objects.filter(round__in=rounds, status=Convention.Status.ACCEPTED).order_by(
        "number", "version"
    )
    return [
        {
            "label": c.label, "number": c.number, "version": c.version, "slot": c.slot,
            "value_a": c.value_a, "value_b": c.value_b, "chosen": c.chosen, "rule": c.rule,
        }
        for c in accepted
    ]  # fmt: skip


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "round"


Progress = Callable[[int], None]


def export_write(
    *, round_: Round | None, verifier: Verifier | None, folder: Path, tag: str,
    progress: Progress = lambda n: None, stopped: Callable[[], bool] = lambda: False,
    total: Callable[[int], None] = lambda n: None,
) -> tuple[Path, dict[str, Any]] | None:  # fmt: skip
    """Write the archive into ``folder``; returns (path, manifest), or None when stopped. The
    same database (and verifier cache) always gives the same bytes."""
    from adjudication.gold import gold_sync

    rounds = _rounds(round_)
    for r in rounds:
        gold_sync(r)
    gold = GoldItem.objects.filter(status=GoldItem.Status.RESOLVED)
    if round_ is not None:
        gold = gold.filter(round=round_)
    total(gold.count())
    round_map = {r.pk: r for r in Round.objects.all()}
    set_names = {pk: (tier, name) for pk, tier, name in ItemSet.objects.values_list("pk", "tier", "name")}
    lines_of = Lines()
    tally = Tally()
    size = max(1, settings.NSM_EXPORT_BATCH_SIZE)
    rule_set = active_rule_set()
    emoexpl.remove_partials(folder, tag)
    with emoexpl.atomic_archive(folder, tag=tag) as pending:
        with pending.writer.stream(emoexpl.JSONL_NAME) as out:
            last = 0
            while True:
                if stopped():
                    return None
                golds = list(
                    gold.filter(item_id__gt=last)
                    .order_by("item_id")
                    .values_list("pk", "item_id", "round_id", "pivotal_slots")[:size]
                )
                if not golds:
                    break
                records = _records(
                    golds, rounds=round_map, set_names=set_names, verifier=verifier, lines_of=lines_of,
                    tally=tally,
                )  # fmt: skip
                out.write("\n".join(records))
                out.write("\n")
                last = golds[-1][1]
                progress(len(golds))
        jsonl = pending.writer.files[emoexpl.JSONL_NAME]
        as_of = GoldChange.objects.filter(gold__in=gold).aggregate(last=Max("at"))["last"]
        manifest = {
            "name": "EmoExpl",
            "format": emoexpl.FORMAT,
            "scope": f"round {round_.name}" if round_ else "whole gold corpus",
            "software_version": nsmcore.__version__,
            "gold_as_of": as_of.isoformat() if as_of else None,
            "counts": {
                "items": tally.items,
                "construals": tally.construals,
                "two_construals": tally.two_construals,
                "lines": tally.lines,
                "entailed_lines": tally.entailed if verifier else None,
                "mean_item_score": _round(sum(tally.scores) / len(tally.scores)) if tally.scores else None,
                "tiers": [
                    {"tier": t, "item_set": name, "items": n} for (t, name), n in sorted(tally.tiers.items())
                ],
                "labels": {
                    label: {"reference": tally.reference[label], "routed": tally.routed[label]}
                    for label in sorted(set(tally.reference) | set(tally.routed))
                },
                "abstentions": dict(sorted(tally.abstentions.items())),
                "rule_set_versions": dict(sorted(tally.rule_set_versions.items())),
            },
            "agreement": _agreement(rounds),
            "conventions": _conventions(rounds),
            "rule_set": {
                "version": rule_set.version,
                "hash": rule_set.content_hash,
                "rules": len(rule_set.rules),
            },
            "verifier": (
                {"model": verifier.model_id, "revision": verifier.revision, "threshold": verifier.threshold}
                if verifier
                else None
            ),
            "files": {emoexpl.JSONL_NAME: {**jsonl, "records": tally.items}},
            "citation": settings.NSM_EXPORT_CITATION,
        }
        pending.writer.add(emoexpl.MANIFEST_NAME, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        pending.writer.add(emoexpl.CARD_NAME, emoexpl.dataset_card(manifest))
        pending.writer.add(SCHEMA_NAME, json.dumps(emoexpl.record_schema(), indent=2) + "\n")
        scope = _slug(round_.name) if round_ else "all"
        pending.name = f"emoexpl-{scope}-{jsonl['sha256'][:12]}.zip"
    return pending.path, manifest


def run_export(job: Job) -> bool:
    """The worker's side of an export job."""
    from jobs.verification import verifier_build

    params = job.params
    verifier = verifier_build(params["model"]) if params.get("verify") else None
    if verifier is not None:
        Job.objects.filter(pk=job.pk).update(parser_name=verifier.model_id, parser_version=verifier.revision)
    Job.objects.filter(pk=job.pk).update(done=0)

    def progress(n: int) -> None:
        with transaction.atomic():
            Job.objects.filter(pk=job.pk).update(done=F("done") + n)

    written = export_write(
        round_=job.round, verifier=verifier, folder=Path(settings.NSM_EXPORT_DIR), tag=f"job{job.pk}",
        progress=progress, stopped=lambda: job_stopped(job.pk),
        total=lambda n: Job.objects.filter(pk=job.pk).update(total=n),
    )  # fmt: skip
    if written is None:
        return False
    path, manifest = written
    archive_sha = emoexpl.file_sha256(path)
    export = Export.objects.create(
        job=job, round=job.round, created_by=job.created_by, filename=path.name, bytes=path.stat().st_size,
        sha256=archive_sha, jsonl_sha256=manifest["files"][emoexpl.JSONL_NAME]["sha256"],
        records=manifest["counts"]["items"], lines=manifest["counts"]["lines"],
        verifier=f"{verifier.model_id}@{verifier.revision}" if verifier else "",
        rule_set_version=manifest["rule_set"]["version"], manifest=manifest,
    )  # fmt: skip
    Job.objects.filter(pk=job.pk).update(
        summary={"export": export.pk, "file": path.name, "records": export.records, "bytes": export.bytes}
    )
    return True
