"""A round's learning queue from the command line:

    manage.py learning_queue set ROUND --order mixed [--share 0.2] [--seed 0] [--parser NAME]
                                       [--retrain-every N]     (then computes it, here)
    manage.py learning_queue show ROUND [--top 20] [--json]
    manage.py learning_queue compute ROUND
    manage.py learning_queue retrain ROUND                     (train, prefill, compute, here)
    manage.py learning_queue simulate ROUND [--seeds 5] [--start 20] [--batch 10] [--json]
    manage.py learning_queue off ROUND

ROUND is a round's name or id. The work runs in this process, as a job of its kind (listed on the
Jobs page). Bad input: exit 2 with the line that says why, nothing written."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotator.filters import typed_id
from annotator.models import Round
from jobs.kinds import JobError
from jobs.models import Job
from jobs.services import job_run
from learning.jobs import job_queue_start, job_retrain_start, job_simulate_start
from learning.selectors import queue_entries, queue_policy
from learning.services import QueuePolicyError, queue_clear, queue_policy_set
from nsmcore.queue_orders import ORDERS


def _bad(message: str) -> CommandError:
    return CommandError(message, returncode=2)


class Command(BaseCommand):
    help = "Set, compute, show, retrain and simulate a round's learning queue."

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        set_ = sub.add_parser("set", help="set the round's order, then compute the queue")
        set_.add_argument("--order", required=True, choices=ORDERS)
        set_.add_argument("--share", type=float, default=None, help="the random share of a mixed order")
        set_.add_argument("--seed", type=int, default=None)
        set_.add_argument("--parser", default=None, help="whose posteriors rank the items")
        set_.add_argument("--retrain-every", type=int, default=None, help="new gold items (0: never)")
        show = sub.add_parser("show", help="the queue's settings and its first items")
        show.add_argument("--top", type=int, default=20)
        show.add_argument("--json", action="store_true", dest="as_json")
        sub.add_parser("compute", help="compute the queue again")
        sub.add_parser("retrain", help="train the CPU parser on the gold, prefill, compute")
        sim = sub.add_parser("simulate", help="simulate the three orders with the round's gold as oracle")
        sim.add_argument("--seeds", type=int, default=5)
        sim.add_argument("--start", type=int, default=20)
        sim.add_argument("--batch", type=int, default=10)
        sim.add_argument("--json", action="store_true", dest="as_json")
        sub.add_parser("off", help="remove the round's queue (its items keep their last order)")
        for each in (set_, show, sim, *[sub.choices[name] for name in ("compute", "retrain", "off")]):
            each.add_argument("round", metavar="ROUND", help="a round's name or id")

    def handle(self, *args: Any, **options: Any) -> None:
        round_ = self._round(options["round"])
        action = options["action"]
        try:
            if action == "set":
                with transaction.atomic():
                    queue_policy_set(
                        round_=round_,
                        user=None,
                        order=options["order"],
                        random_share=options["share"],
                        seed=options["seed"],
                        parser=options["parser"],
                        retrain_every=options["retrain_every"],
                    )
                self._run(job_queue_start(user=None, round_=round_, enqueue=False))
                self._show(round_, 10, False)
            elif action == "show":
                self._show(round_, options["top"], options["as_json"])
            elif action == "compute":
                self._run(job_queue_start(user=None, round_=round_, enqueue=False))
                self._show(round_, 10, False)
            elif action == "retrain":
                self._run(job_retrain_start(user=None, round_=round_, enqueue=False))
                self._show(round_, 10, False)
            elif action == "simulate":
                job = self._run(
                    job_simulate_start(
                        user=None,
                        round_=round_,
                        enqueue=False,
                        seeds=options["seeds"],
                        start=options["start"],
                        batch=options["batch"],
                    )
                )
                self._simulation(job.summary, options["as_json"])
            elif action == "off":
                queue_clear(round_=round_)
                self.stdout.write(f"round {round_.name}: no learning queue now")
        except (QueuePolicyError, JobError) as error:
            raise _bad(str(error)) from None

    def _round(self, reference: str) -> Round:
        found = Round.objects.select_related("item_set").filter(name=reference).first()
        if found is None and (pk := typed_id(reference)) is not None:
            found = Round.objects.select_related("item_set").filter(pk=pk).first()
        if found is None:
            raise _bad(f"no round named {reference!r}")
        return found

    def _run(self, job: Job) -> Job:
        job_run(job.pk)
        job.refresh_from_db()
        if job.status != Job.Status.DONE:
            raise CommandError(f"job #{job.pk} {job.status}: {job.error or '-'}", returncode=1)
        return job

    def _show(self, round_: Round, top: int, as_json: bool) -> None:
        policy = queue_policy(round_)
        if policy is None:
            raise _bad(f"round {round_.name} has no learning queue: set it first")
        entries = list(queue_entries(policy)[: max(0, top)])
        if as_json:
            self.stdout.write(
                json.dumps(
                    {
                        "round": round_.name,
                        "order": policy.order,
                        "random_share": policy.random_share,
                        "seed": policy.seed,
                        "parser": policy.computed_with,
                        "retrain_every": policy.retrain_every,
                        "computed_at": policy.computed_at.isoformat() if policy.computed_at else None,
                        "random_set": policy.random_set.name if policy.random_set else None,
                        "entries": [
                            {
                                "rank": e.rank,
                                "item": e.item_id,
                                "source_id": e.item.source_id,
                                "score": e.score,
                                "change": e.change,
                                "conflict": e.conflict,
                                "rejected": e.rejected,
                                "label": e.label,
                                "random": e.random,
                                "weight": e.weight,
                            }
                            for e in entries
                        ],
                    },
                    indent=2,
                )
            )
            return
        self.stdout.write(
            f"round {round_.name}: {policy.order}"
            + (
                f", random share {policy.random_share:g}, seed {policy.seed}"
                if policy.order == "mixed"
                else ""
            )
            + f"; computed from {policy.computed_with or '-'}"
        )
        self.stdout.write(
            f"{'rank':>5}  {'item':<20} {'score':>6} {'change':>6} {'confl.':>6} {'rej.':>5}  label"
        )
        for e in entries:
            share = " (random)" if e.random else ""
            self.stdout.write(
                f"{e.rank + 1:>5}  {e.item.source_id[:20]:<20} {e.score:6.3f} {e.change:6.3f} "
                f"{e.conflict:6.3f} {e.rejected:5.2f}  {e.label}{share}"
            )

    def _simulation(self, summary: dict[str, Any], as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        for order, rows in summary["curves"].items():
            line = ", ".join(f"{r['labelled']}: {r['routed']:.3f}" for r in rows)
            self.stdout.write(f"{order:>12}  routed accuracy by items labelled  {line}")
        target = summary.get("target") or {}
        for order, reach in summary.get("reach", {}).items():
            if reach["labelled"]:
                self.stdout.write(
                    f"{order} reaches random's final {target['routed']:.3f} with {reach['labelled']} items "
                    f"({reach['share_of_items']:.0%} of {target['labelled']})"
                )
            else:
                self.stdout.write(
                    f"{order} misses random's final {target['routed']:.3f} by {reach['final_shortfall']:.3f}"
                )
