"""The database part of bench_rules, run in a subprocess on a throwaway SQLite database:
python benchmarks/rules_db.py N_CONSTRUALS. Prints one JSON line of timings."""

from __future__ import annotations

import copy
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402

from adjudication.gold.services import _routings  # noqa: E402
from adjudication.models import GoldConstrual, GoldItem  # noqa: E402
from adjudication.rule_revisions.services import revision_activate, revision_propose  # noqa: E402
from annotator.models import Item, ItemSet, Round  # noqa: E402
from nsmcore.schema import SLOTS  # noqa: E402
from rules.models import RuleSetVersion  # noqa: E402
from rules.rulesets import active_rule_set, rule_set_document  # noqa: E402


def load(n: int) -> None:
    """n resolved gold records, each with one construal drawn at random from the slot space
    (seeded), routed under the active version."""
    rng = random.Random(0)
    slots = [{s.name: rng.choice(s.values) for s in SLOTS} for _ in range(n)]
    routings = _routings(slots, active_rule_set())
    with transaction.atomic():
        Item.objects.bulk_create(
            [
                Item(source="bench", source_id=f"b{i}", text=f"text {i}", reference_label="joy")
                for i in range(n)
            ],
            batch_size=5000,
        )
        ids = list(Item.objects.filter(source="bench").order_by("id").values_list("id", flat=True))
        round_ = Round.objects.create(name="bench", item_set=ItemSet.objects.create(name="bench", size=n))
        GoldItem.objects.bulk_create(
            [GoldItem(item_id=i, round=round_, status="resolved") for i in ids], batch_size=5000
        )
        golds = dict(GoldItem.objects.values_list("item_id", "pk"))
        GoldConstrual.objects.bulk_create(
            [
                GoldConstrual(gold_id=golds[i], index=1, slots=s, provenance={}, **routing)
                for i, s, routing in zip(ids, slots, routings, strict=True)
            ],
            batch_size=5000,
        )


def main() -> None:
    n = int(sys.argv[1])
    call_command("migrate", verbosity=0)
    load(n)
    admin = User.objects.create_user("admin")
    document = copy.deepcopy(rule_set_document(active_rule_set()))
    rules = document["rules"]
    rules.insert(0, rules.pop(next(k for k, r in enumerate(rules) if r["emotion"] == "no-emotion")))
    start = time.perf_counter()
    v2 = revision_propose(user=admin, document=document)
    propose = time.perf_counter() - start
    start = time.perf_counter()
    forward = revision_activate(user=admin, version=v2)
    activate = time.perf_counter() - start
    start = time.perf_counter()
    back = revision_activate(user=admin, version=RuleSetVersion.objects.get(version="1"))
    rollback = time.perf_counter() - start
    assert GoldConstrual.objects.filter(rule_set_version="1").count() == n
    doc = {
        "construals": forward.rerouted, "changed": forward.changed, "changed_back": back.changed,
        "propose": propose, "activate": activate, "rollback": rollback,
    }  # fmt: skip
    print(json.dumps(doc))


if __name__ == "__main__":
    main()
