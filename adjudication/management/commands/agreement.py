"""`manage.py agreement ROUND`: per-slot agreement of a round, as a table or JSON."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from adjudication.agreement.analysis import round_analysis
from annotator.models import Round


class Command(BaseCommand):
    help = "Per-slot raw agreement and Krippendorff's alpha (with 95% intervals) of a round."

    def add_arguments(self, parser):
        parser.add_argument("round", help="round name")
        parser.add_argument("--intensity", choices=["nominal", "ordinal"], default="nominal")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args, **options):
        try:
            round_ = Round.objects.get(name=options["round"])
        except Round.DoesNotExist:
            names = ", ".join(Round.objects.order_by("name").values_list("name", flat=True)) or "none"
            raise CommandError(f"no round named {options['round']!r}; rounds: {names}") from None
        levels = {"intensity": "ordinal"} if options["intensity"] == "ordinal" else {}
        analysis = round_analysis(round_, levels=levels)
        report, found = analysis.report, analysis.conflicts
        if options["json"]:
            doc = {
                "round": round_.name,
                **report.as_dict(),
                "coder_names": analysis.data.coder_names,
                "conflicts": {
                    "items": len(found.items),
                    "median_differing_slots": found.median_differing_slots,
                    "per_slot": found.per_slot,
                },
            }
            self.stdout.write(json.dumps(doc, indent=2))
            return
        self.stdout.write(f"{round_.name}: {report.items} items, {report.coders} annotators")
        self.stdout.write(f"{'slot':16}{'items':>7}{'raw':>8}{'alpha':>9}  95% interval")
        for s in report.slots:
            alpha = f"{s.alpha:9.3f}" if s.alpha is not None else f"{'undefined':>9}"
            raw = f"{s.raw:8.3f}" if s.raw is not None else f"{'-':>8}"
            interval = f"[{s.ci_low:.3f}, {s.ci_high:.3f}]" if s.ci_low is not None else s.undefined
            self.stdout.write(f"{s.slot:16}{s.items:>7}{raw}{alpha}  {interval}")

        def fmt(x):
            return "undefined" if x is None else f"{x:.3f}"

        without = fmt(report.mean_alpha_without_degenerate)
        dropped = ", ".join(report.degenerate_slots) or "none"
        self.stdout.write(
            f"mean alpha {fmt(report.mean_alpha)} (without the variance-degenerate slots, {dropped}:"
            f" {without}),"
            f" mean raw {fmt(report.mean_raw)}; {len(found.items)} items with conflicts"
        )
