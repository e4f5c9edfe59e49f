"""Quality checks from the command line:

    manage.py quality controls --round NAME [--rate 0.05] [--from-round OTHER | --any-round]
    manage.py quality settings --round NAME [--threshold 0.7] [--measure slots|routed] [--min-answered 5]
                               [--hours 24] [--nudge | --no-nudge] [--nudge-seconds 20]
    manage.py quality sweep [--round NAME] [--hours T]
    manage.py quality report --round NAME [--json]

``controls`` saves the rate and source given and mixes in what is missing; ``sweep`` moves
abandoned assignments back to the pool (of one round, or of all); ``report`` prints each
annotator's accuracy on control items, the alerts, the moves and the nudges. Bad input: exit 2
with the line that says why, and nothing written."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotator.models import Round
from quality.abandoned import abandoned_sweep
from quality.models import QualitySettings
from quality.selectors import quality_report
from quality.services import QualityError, controls_add, quality_settings_set


def _bad(message: str) -> CommandError:
    return CommandError(message, returncode=2)


def _round(name: str) -> Round:
    found = Round.objects.select_related("item_set").filter(name=name).first()
    if found is None:
        known = ", ".join(Round.objects.order_by("name").values_list("name", flat=True)[:20]) or "none"
        raise _bad(f"no round named {name!r}; rounds: {known}")
    return found


class Command(BaseCommand):
    help = "Quality checks of a round: control items, abandoned work, nudges, and their report."

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        controls = sub.add_parser(
            "controls", help="mix control items (other rounds' resolved gold) into a round"
        )
        controls.add_argument("--round", required=True, dest="round_name", metavar="NAME")
        controls.add_argument(
            "--rate",
            type=float,
            default=None,
            help="controls per annotator as a share of their items (0 to 0.5)",
        )
        source = controls.add_mutually_exclusive_group()
        source.add_argument(
            "--from-round", default=None, metavar="OTHER", help="the round whose resolved gold is used"
        )
        source.add_argument("--any-round", action="store_true", help="resolved gold of any other round")
        controls.add_argument(
            "--seed", type=int, default=0, help="which eligible items are drawn (default 0)"
        )
        settings = sub.add_parser(
            "settings", help="change a round's alert, abandoned-work and nudge settings"
        )
        settings.add_argument("--round", required=True, dest="round_name", metavar="NAME")
        settings.add_argument(
            "--threshold", type=float, default=None, help="accuracy on controls below it alerts (0 to 1)"
        )
        settings.add_argument("--measure", choices=QualitySettings.Measure.values, default=None)
        settings.add_argument(
            "--min-answered", type=int, default=None, help="answered controls before an alert"
        )
        settings.add_argument(
            "--hours", type=int, default=None, help="abandoned after this many hours (0: never)"
        )
        nudge = settings.add_mutually_exclusive_group()
        nudge.add_argument(
            "--nudge", action="store_true", default=None, help="nudge a prefill kept whole too fast"
        )
        nudge.add_argument("--no-nudge", action="store_false", dest="nudge")
        settings.add_argument(
            "--nudge-seconds", type=int, default=None, help="too fast: under this many seconds"
        )
        sweep = sub.add_parser("sweep", help="move abandoned assignments back to the pool")
        sweep.add_argument(
            "--round", dest="round_name", default=None, metavar="NAME", help="default: every round"
        )
        sweep.add_argument("--hours", type=int, default=None, help="instead of each round's limit")
        report = sub.add_parser("report", help="a round's control accuracy, alerts, moves and nudges")
        report.add_argument("--round", required=True, dest="round_name", metavar="NAME")
        report.add_argument("--json", action="store_true", dest="as_json", help="as JSON")

    def handle(self, *args: Any, action: str, **o: Any) -> None:
        try:
            getattr(self, "_" + action)(**o)
        except QualityError as error:
            raise _bad(f"{error.field}: {error}" if error.field else str(error)) from None

    def _controls(
        self,
        round_name: str,
        rate: float | None,
        from_round: str | None,
        any_round: bool,
        seed: int,
        **o: Any,
    ) -> None:
        round_ = _round(round_name)
        changes: dict[str, Any] = {}
        if rate is not None:
            changes["control_rate"] = rate
        if from_round is not None:
            changes["control_source"] = _round(from_round)
        elif any_round:
            changes["control_source"] = None
        added = controls_add(round_=round_, seed=seed, **changes)
        self.stdout.write(f"{round_.name}: {added.summary()} ({added.candidates} eligible gold items)")

    def _settings(self, round_name: str, **o: Any) -> None:
        round_ = _round(round_name)
        names = {"threshold": "threshold", "measure": "measure", "min_answered": "min_answered",
                 "hours": "abandon_hours", "nudge": "nudge", "nudge_seconds": "nudge_seconds"}  # fmt: skip
        changes = {field: o[option] for option, field in names.items() if o.get(option) is not None}
        if not changes:
            raise _bad(
                "nothing to change: give --threshold, --measure, --min-answered, --hours, --nudge "
                "or --nudge-seconds"
            )
        settings = quality_settings_set(round_=round_, user=None, **changes)
        shown = ", ".join(f"{field}={getattr(settings, field)}" for field in changes)
        self.stdout.write(f"{round_.name}: {shown}")

    def _sweep(self, round_name: str | None, hours: int | None, **o: Any) -> None:
        round_ = _round(round_name) if round_name else None
        result = abandoned_sweep(round_=round_, hours=hours)
        self.stdout.write(result.summary())

    def _report(self, round_name: str, as_json: bool, **o: Any) -> None:
        report = quality_report(_round(round_name))
        if as_json:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        s, c = report["settings"], report["controls"]
        source = s["control_source"] or "any other round"
        nudge = f"under {s['nudge_seconds']} s" if s["nudge"] else "off"
        self.stdout.write(
            f"{report['round']}: control rate {s['control_rate']:g} from {source}; alert below "
            f"{s['threshold']:g} ({s['measure']}) from {s['min_answered']} answered; abandoned after "
            f"{s['abandon_hours']} h; nudge {nudge}"
        )
        self.stdout.write(f"controls: {c['done']} of {c['assigned']} done, {c['pending']} to do")
        for a in report["annotators"]:
            routed = a["routed"]
            shown = (
                f"{routed['value']:.2f} [{routed['low']:.2f}, {routed['high']:.2f}]" if routed["n"] else "-"
            )
            mean = f"{a['mean_slots']:.2f}" if a["mean_slots"] is not None else "-"
            flag = "  ALERT" if a["alert"] else ""
            self.stdout.write(
                f"  {a['annotator']:<20} {a['answered']:>4} answered  routed {shown}  "
                f"mean per-slot {mean}{flag}"
            )
        for m in report["moves"]:
            self.stdout.write(
                f"moved {m['item']}: {m['from']} -> {m['to']} at {m['at']} (idle since {m['idle_since']})"
            )
        for n in report["nudges"]:
            self.stdout.write(
                f"nudged {n['annotator']}: {n['nudges']} (fastest {n['fastest_ms'] / 1000:.1f} s)"
            )
