"""The database part of bench_gold, run in a subprocess on a throwaway SQLite database:
python benchmarks/gold_db.py N_CONFLICTS. Prints one JSON line of timings."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402

from adjudication.gold.services import (  # noqa: E402  # noqa: E402
    convention_apply,
    convention_matches,
    convention_propose,
    convention_vote,
    gold_sync,
)
from annotator.models import Round  # noqa: E402
from benchmarks.bulk import finished_round  # noqa: E402

PRIDE = {
    "experiencer": "i", "trigger": "someone-did-something", "agency": "i", "realization": "happened",
    "time_direction": "before-now", "want": "want", "evaluation": "feel-good", "eval_target": "self",
    "knowledge": "none", "others_know": "none", "body": "no", "intensity": "plain",
}  # fmt: skip


def load(n: int) -> Round:
    """n items, two annotators who disagree only on agency (i against someone-else)."""
    return finished_round(n, lambda p, k: {**PRIDE, "agency": ("i", "someone-else")[k]})


def main() -> None:
    n = int(sys.argv[1])
    call_command("migrate", verbosity=0)
    round_ = load(n)
    adjudicators = [User.objects.create_user(f"adj{k}") for k in range(2)]
    start = time.perf_counter()
    opened = gold_sync(round_)
    synced = time.perf_counter() - start
    convention = convention_propose(
        user=adjudicators[0], round_=round_, slot="agency", value_a="i", value_b="someone-else", chosen="i",
        rule="The writer's own doing keeps agency=i.",
    )  # fmt: skip
    for user in adjudicators:
        convention = convention_vote(user=user, convention=convention, approve=True)
    start = time.perf_counter()
    matched = len(convention_matches(convention))
    preview = time.perf_counter() - start
    start = time.perf_counter()
    applied = convention_apply(user=adjudicators[0], convention=convention)
    apply_seconds = time.perf_counter() - start
    assert applied == n, (applied, n)
    doc = {"opened": opened, "sync": synced, "matched": matched, "preview": preview, "apply": apply_seconds}
    print(json.dumps(doc))


if __name__ == "__main__":
    main()
