"""`manage.py evaluate --round NAME --pass KEY`: the paper's evaluation figures of one pass of a
round against the items' reference labels (nsmcore's table), optionally beside a second pass. A
parser pass adds its figures against gold beside the baselines (``--heldout NAME``: on that item
set; adjudication.evaluation.parser)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from adjudication.evaluation.figures import (
    MAX_ORDERS,
    PARSER,
    EvaluationRequestError,
    PassEvaluation,
    compare_text,
    evaluation_passes,
    item_set_named,
    options_from,
    paired_split,
    pass_evaluation,
    split_text,
)
from adjudication.evaluation.parser import heldout_named, parser_text, parser_vs_gold
from adjudication.evaluation.parser_curve import registered_curve
from annotator.models import Round
from nsmcore.cli import _write_atomically
from nsmcore.evaluation_text import report_text
from rules.rulesets import active_rule_set


def _doc(evaluation: PassEvaluation) -> dict[str, Any]:
    return {
        "round": evaluation.round_name,
        "pass": evaluation.pass_.key,
        "item_set": {"name": evaluation.item_set, "size": evaluation.item_set_size},
        "report": evaluation.report.to_dict() if evaluation.report else None,
    }


def curve_text(curve: list) -> str:
    """The registered parsers on the held-out set, by training size, as a table."""
    lines = ["", "Registered parsers by training size (mean per-slot accuracy, routed accuracy):"]
    for p in curve:
        if p.refused or p.routed is None or p.routed.value is None:
            why = p.refused.split(";")[0] if p.refused else "no held-out item with gold and a prediction"
            lines.append(f"  {p.spec:<28} trained on {p.trained:>6}  not scored: {why}")
            continue
        selective = p.selective
        shown = "-" if selective is None or selective.value is None else (
            f"{selective.value:.3f} [{selective.low:.2f}, {selective.high:.2f}]"
        )  # fmt: skip
        lines.append(
            f"  {p.spec:<28} trained on {p.trained:>6}  slots {p.slot_accuracy:.3f}  routed "
            f"{p.routed.value:.3f} [{p.routed.low:.2f}, {p.routed.high:.2f}]  selective {shown}  n={p.scored}"
        )
    return "\n".join(lines)


class Command(BaseCommand):
    help = (
        "Accuracy, abstention, selective accuracy (exact 95% intervals), per-emotion figures, confusion, "
        "flows, multi-rule counts, flag rates, distributional scoring and priority-order sensitivity of "
        "one pass of a round (annotator:<username>, parser:<name> or gold)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--round", required=True, help="round name")
        parser.add_argument("--pass", dest="pass_key", help="pass key; omit to list the round's passes")
        parser.add_argument("--compare", default="", help="a second pass, shown beside the first")
        parser.add_argument(
            "--item-set", default="", help="score on this item set's items (default: the round's)"
        )
        parser.add_argument(
            "--orders", default="1000", help=f"random priority orders (default 1000, <= {MAX_ORDERS})"
        )
        parser.add_argument("--seed", default="0", help="seed of the random orders (default 0)")
        parser.add_argument(
            "--swap", action="append", help="a named swap a:b (repeatable; default guilt:shame)"
        )
        parser.add_argument(
            "--heldout",
            default="",
            help="a parser pass: score it against gold, beside the baselines, on this item set's items "
            "(default: the round's)",
        )
        parser.add_argument("--decay", default="0.5", help="priority-decay base in (0, 1] (default 0.5)")
        parser.add_argument(
            "--json", default=None, metavar="OUT", help="write the full report(s) as JSON to OUT"
        )

    def handle(self, *args, **o):
        round_ = Round.objects.filter(name=o["round"]).select_related("item_set").first()
        if round_ is None:
            names = ", ".join(Round.objects.order_by("name").values_list("name", flat=True)) or "none"
            raise CommandError(f"no round named {o['round']!r}; rounds: {names}", returncode=2)
        if not o["pass_key"]:
            passes = evaluation_passes(round_)
            for p in passes:
                self.stdout.write(f"{p.key:40}{p.label}")
            if not passes:
                self.stdout.write(f"round {round_.name} has no pass yet")
            return
        rule_set = active_rule_set()
        params = {"orders": o["orders"], "seed": o["seed"], "decay": o["decay"], "swap": o["swap"] or []}
        try:
            options = options_from(params, rule_set)
            item_set = item_set_named(o["item_set"])
            heldout = heldout_named(o["heldout"])
            if o["compare"] == o["pass_key"]:
                raise EvaluationRequestError(f"--compare is the same pass as --pass ({o['pass_key']})")
            found = [
                pass_evaluation(round_, o["pass_key"], options=options, item_set=item_set, rule_set=rule_set)
            ]
            if o["compare"]:
                found.append(
                    pass_evaluation(
                        round_, o["compare"], options=options, item_set=item_set, rule_set=rule_set
                    )
                )
            parser, curve = None, []
            if found[0].pass_.kind == PARSER:
                parser = parser_vs_gold(round_, o["pass_key"], heldout=heldout, rule_set=rule_set)
                curve = registered_curve(round_, heldout or round_.item_set, rule_set)
            elif heldout is not None:
                raise EvaluationRequestError(
                    f"--heldout {heldout.name}: parser-vs-gold is for a parser pass, not {o['pass_key']}"
                )
        except EvaluationRequestError as error:
            raise CommandError(str(error), returncode=2) from None
        if o["json"]:
            docs = [_doc(e) for e in found]
            if parser is not None:
                docs[0]["parser_vs_gold"] = parser.to_dict()
                docs[0]["registered_parsers"] = [p.to_dict() for p in curve]
            doc = docs[0] if len(docs) == 1 else {"a": docs[0], "b": docs[1]}
            if len(found) == 2:
                split = paired_split(found[0], found[1])
                doc["paired"] = split.to_dict() if split else None
            _write_atomically(o["json"], json.dumps(doc, indent=2) + "\n")
        for evaluation in found:
            if evaluation.report is None:
                self.stdout.write(
                    f"pass {evaluation.pass_.key} has no item in item set {evaluation.item_set}: "
                    "nothing to evaluate"
                )
            else:
                self.stdout.write(report_text(evaluation.report))
        if parser is not None:
            self.stdout.write(parser_text(parser))
            if curve:
                self.stdout.write(curve_text(curve))
        if len(found) == 2 and all(e.report for e in found):
            self.stdout.write(compare_text(found[0].report, found[1].report))
            split = paired_split(found[0], found[1])
            if split is not None:
                self.stdout.write(split_text(split))
