"""Reads for the predictions app: the legality report of a parser run."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.db.models import Count, Q

from annotator.models import ItemSetMember, ParserPrediction
from jobs.models import Job


@dataclass
class LegalityReport:
    parser: str
    version: str
    parsed: int
    legal: int
    # (slot, illegal value) -> count, most frequent first
    illegal_values: list[tuple[str, str, int]] = field(default_factory=list)
    # problems that are not a value of a slot: unreadable replies, missing slots...
    other_problems: list[tuple[str, str, int]] = field(default_factory=list)

    @property
    def share_legal(self) -> float | None:
        return self.legal / self.parsed if self.parsed else None


def legality_report(job: Job) -> LegalityReport | None:
    """Legality of this job's parser over the job's items (predictions from this run and earlier
    runs of the same parser and version): the share legal, and which slots got which illegal
    values."""
    if not job.engine:
        return None
    predictions = ParserPrediction.objects.filter(
        item_id__in=ItemSetMember.objects.filter(item_set_id=job.item_set_id).values("item_id"),
        parser=job.engine,
        parser_version=job.engine_version,
    )
    counts = predictions.aggregate(parsed=Count("id"), legal=Count("id", filter=Q(legal=True)))
    values: Counter[tuple[str, str]] = Counter()
    others: Counter[tuple[str, str]] = Counter()
    for errors in predictions.filter(legal=False).values_list("errors", flat=True).iterator():
        for problem in errors or []:
            slot = str(problem.get("slot", "?"))
            if "value" in problem and problem.get("allowed"):
                values[(slot, str(problem["value"]))] += 1
            else:
                message = str(problem.get("message", ""))
                others[(slot, message.split(";")[0][:120])] += 1
    return LegalityReport(
        parser=job.engine,
        version=job.engine_version,
        parsed=counts["parsed"],
        legal=counts["legal"],
        illegal_values=[(s, v, n) for (s, v), n in values.most_common()],
        other_problems=[(s, m, n) for (s, m), n in others.most_common()],
    )
