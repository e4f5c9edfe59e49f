"""Command line: ``python -m nsmcore <command> [FILE]``, reading JSONL from FILE or stdin.

Exit codes: 0 success; 1 the input was read but something in it is illegal (check, render) or
the regression suite failed (selfcheck); 2 the input itself is unusable (a malformed JSON line,
a missing file, a bad rule set), named with its line number.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from typing import IO, Any

from nsmcore.cli_io import InputError, decode_line, input_rows, read_jsonl  # noqa: F401 (re-exported)
from nsmcore.cli_train import add_train_classifier, cmd_train_classifier
from nsmcore.counterfactual import counterfactual, counterfactual_text, read_pair
from nsmcore.emoexpl import record_schema
from nsmcore.evaluation import evaluate, route_items
from nsmcore.evaluation_report import EvaluationError
from nsmcore.evaluation_text import report_text
from nsmcore.legality import check
from nsmcore.mapper import RuleSetError, load_rule_set, route_batch
from nsmcore.parsers import BACKENDS, ParserUnavailable, make_parser
from nsmcore.parsers.lexical import CueListError
from nsmcore.regression import run_suite
from nsmcore.render import render
from nsmcore.space import regions
from nsmcore.tiny import build_tiny_causal_lm

DEFAULT_KEEP = "id,text_id"


def _split_kept(obj: Any, keep: list[str]) -> tuple[dict[str, Any], Any]:
    """Move record identifiers (``--keep``) out of the object so the schema sees only slots. A
    record written by ``parse`` (its explication under ``explication``) gives that explication,
    so ``parse | route`` needs no reshaping; None there (an unreadable reply) is illegal."""
    if not isinstance(obj, dict):
        return {}, obj
    kept = {k: obj[k] for k in keep if k in obj}
    if "explication" in obj and (obj["explication"] is None or isinstance(obj["explication"], dict)):
        return kept, obj["explication"]
    rest = {k: v for k, v in obj.items() if k not in kept}
    return kept, rest


def _records(args: argparse.Namespace) -> list[tuple[int, dict[str, Any], Any]]:
    keep = [k for k in args.keep.split(",") if k]
    if args.file == "-":
        # bytes, so that the line numbers of text that is not UTF-8 can be named
        rows = list(read_jsonl(getattr(sys.stdin, "buffer", sys.stdin), "<stdin>"))
    else:
        try:
            with open(args.file, "rb") as stream:
                rows = list(read_jsonl(stream, args.file))
        except OSError as error:
            raise InputError(f"{args.file}: cannot read: {error.strerror}") from None
    return [(number, *_split_kept(obj, keep)) for number, obj in rows]


def _emit(out: IO[str], obj: dict[str, Any]) -> None:
    out.write(json.dumps(obj, ensure_ascii=False) + "\n")


def cmd_route(args: argparse.Namespace, out: IO[str]) -> int:
    rule_set = load_rule_set(args.rule_set)
    records = _records(args)
    routings = route_batch([obj for _, _, obj in records], rule_set)
    for (_, kept, _), routing in zip(records, routings, strict=True):
        _emit(out, {**kept, **routing.as_dict()})
    return 0


def _report_illegal(number: int, problems: list[Any], err: IO[str]) -> None:
    for problem in problems:
        err.write(f"line {number}: {problem}\n")


def cmd_render(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    status = 0
    for number, kept, obj in _records(args):
        explication, problems = check(obj)
        if explication is None:
            _emit(out, {**kept, "line": number, "errors": [p.as_dict() for p in problems]})
            _report_illegal(number, problems, err)
            status = 1
            continue
        _emit(out, {**kept, "lines": [line.as_dict() for line in render(explication)]})
    return status


def cmd_check(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    status = 0
    for number, kept, obj in _records(args):
        _, problems = check(obj)
        _emit(out, {**kept, "line": number, "legal": not problems, "errors": [p.as_dict() for p in problems]})
        if problems:
            _report_illegal(number, problems, err)
            status = 1
    return status


def cmd_regions(args: argparse.Namespace, out: IO[str]) -> int:
    out.write(json.dumps(regions(load_rule_set(args.rule_set)), indent=2) + "\n")
    return 0


def cmd_selfcheck(args: argparse.Namespace, out: IO[str]) -> int:
    report = run_suite(load_rule_set(args.rule_set))
    if args.json:
        out.write(json.dumps(report.as_dict(), indent=2) + "\n")
    else:
        out.write(f"rule set v{report.rule_set_version} ({report.rule_set_hash[:12]})\n")
        for section in report.sections:
            mark = "ok" if section.ok else "FAIL"
            out.write(
                f"  {mark:4} {section.name}: {section.checked} checked, {len(section.failures)} failed\n"
            )
            for failure in section.failures:
                out.write(f"       - {failure}\n")
        out.write(f"  causal consistency rate: {report.causal_consistency_rate:.3f}\n")
        out.write("PASSED\n" if report.ok else "FAILED\n")
    return 0 if report.ok else 1


def cmd_parse(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    records = _records(args)
    texts = []
    for number, _, obj in records:
        text = obj.get(args.text_field) if isinstance(obj, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise InputError(
                f"line {number}: no text in field {args.text_field!r} (choose one with --text-field)"
            )
        texts.append(text)
    options = {"model": args.model, "device": args.device, "batch_size": args.batch_size}
    if args.backend == "lexical":
        options = {"cues": args.cues}
    elif args.backend == "openai":
        options = {"base_url": args.base_url, "model": args.model, "mode": args.mode, "api_key": args.api_key}
    elif args.backend == "classifier":
        options = {"model": args.model}
    parser = make_parser(args.backend, **options)
    illegal = 0
    for start in range(0, len(texts), 64):
        results = parser.parse(texts[start : start + 64])
        for (_, kept, _), result in zip(records[start : start + 64], results, strict=True):
            record = {**kept, "parser": parser.name, "parser_version": parser.version, **result.as_dict()}
            if not args.raw:
                record.pop("raw_output")
            _emit(out, record)
            illegal += not result.legal
    err.write(f"{len(texts)} parsed by {parser.name} {parser.version}: {len(texts) - illegal} legal\n")
    return 0


def cmd_tiny_model(args: argparse.Namespace, out: IO[str]) -> int:
    path = build_tiny_causal_lm(args.path, seed=args.seed)
    out.write(f"a tiny random causal LM (outputs are meaningless) is in {path}\n")
    return 0


ITEM_KEYS = ("id", "reference_label", "flags")

EVALUATE_HELP = """\
Evaluate explications against reference labels: accuracy, typed abstention and selective
accuracy with exact 95% intervals, per-emotion figures, the confusion matrix and its prominent
flows, multi-rule counts, flag and residue rates, distributional scoring, priority-order
sensitivity and causal consistency under single-slot edits. A readable table goes to stdout;
--json writes the full report.

--input: JSONL, one item a line, either the slots at the top level
  {"id": "s-1", "reference_label": "guilt", "flags": ["two-construals"],
   "experiencer": "i", ..., "intensity": "plain", "residue": "", "notes": ""}
or the explication under "explication" (null for an unreadable parser output):
  {"id": "s-1", "reference_label": "guilt", "explication": {...}}
reference_label is required (one of the rule set's emotions); id and flags (two-construals,
unrecoverable, out-of-scope) are optional. An illegal explication is data (it abstains as
illegal); a line that is not JSON, has no reference_label or an unknown one exits 2 naming it.

--counterfactual: JSONL, one pair a line:
  {"id": "cf-1", "family": "F1", "target_slots": ["others_know"],
   "target_values": {"others_know": ["none", "can-know"]},          (optional)
   "x": {"text": "...", "emotion": "guilt", "explication": {...}},
   "x_prime": {"text": "...", "emotion": "shame", "explication": {...}}}
A side without "explication" is parsed from its text with --parser.
See docs/evaluation.md.
"""


def _item(obj: Any, name: str, number: int) -> dict[str, Any]:
    """An evaluation item from one input line: slots at the top level or under "explication"."""
    if not isinstance(obj, dict):
        raise InputError(f"{name}:{number}: expected a JSON object, got {type(obj).__name__}")
    item = {k: obj[k] for k in ITEM_KEYS if k in obj}
    if "explication" in obj:
        item["explication"] = obj["explication"]
    else:
        item["explication"] = {k: v for k, v in obj.items() if k not in ITEM_KEYS}
    return item


def _pairs(path: str, rule_set: Any, backend: str) -> list[Any]:
    """Counterfactual pairs from a JSONL file; a side without an explication is parsed from its
    text with the ``backend`` parser (all such texts in one batch)."""
    rows = input_rows(path)
    missing = [
        (obj, side, number)
        for number, obj in rows
        if isinstance(obj, dict)
        for side in ("x", "x_prime")
        if isinstance(obj.get(side), dict) and "explication" not in obj[side]
    ]
    texts = []
    for obj, side, number in missing:
        text = obj[side].get("text")
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{path}:{number}: {side} has neither an explication nor a text to parse")
        texts.append(text)
    if texts:
        for (obj, side, _), result in zip(missing, make_parser(backend).parse(texts), strict=True):
            explication = result.explication.as_dict() if result.explication is not None else None
            obj[side] = {**obj[side], "explication": explication}
    return [read_pair(obj, f"{path}:{number}", rule_set) for number, obj in rows]


def _write_atomically(path: str, text: str) -> None:
    """Write the whole file or nothing: a temporary file beside it, renamed when complete."""
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".evaluate-", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def cmd_evaluate(args: argparse.Namespace, out: IO[str]) -> int:
    if args.file is not None:
        if args.input is not None:
            raise InputError(f"give the file once: {args.file} or --input {args.input}")
        args.input = args.file
    if args.input is None and args.counterfactual is None:
        raise InputError("nothing to evaluate: give --input FILE (and/or --counterfactual PAIRS)")
    rule_set = load_rule_set(args.rule_set)
    swaps = []
    for spec in args.swap or ["guilt:shame"]:
        a, sep, b = spec.partition(":")
        if not sep or not a or not b:
            raise InputError(f"--swap {spec!r}: expected two emotions as a:b, e.g. guilt:shame")
        swaps.append((a, b))
    if args.orders < 0:
        raise InputError(f"--orders must be >= 0, got {args.orders}")
    if not 0 < args.decay <= 1 or args.alpha < 0:
        raise InputError(f"--decay must be in (0, 1] and --alpha >= 0, got {args.decay} and {args.alpha}")
    report = None
    cf_report = None
    try:
        if args.input is not None:
            rows = input_rows(args.input)
            items = [_item(obj, args.input, number) for number, obj in rows]
            try:
                routed = route_items(items, rule_set)
            except EvaluationError as error:
                if error.position is None:
                    raise
                raise InputError(f"{args.input}:{rows[error.position][0]}: {error}") from None
            report = evaluate(
                routed,
                tier=args.tier,
                pass_name=args.pass_name,
                orders=args.orders,
                seed=args.seed,
                swaps=swaps,
                decay=args.decay,
                alpha=args.alpha,
                flows_top=args.flows,
            )
        if args.counterfactual is not None:
            pairs = _pairs(args.counterfactual, rule_set, args.parser)
            cf_report = counterfactual(pairs, rule_set, tier=args.tier, pass_name=args.pass_name)
    except EvaluationError as error:
        raise InputError(str(error)) from None
    if report is not None and cf_report is not None:
        report = dataclasses.replace(report, counterfactual=cf_report)
    doc = report.to_dict() if report is not None else {"counterfactual": cf_report.to_dict()}
    if args.json:
        _write_atomically(args.json, json.dumps(doc, indent=2) + "\n")
    if report is not None:
        out.write(report_text(report))
    else:
        out.write("\n".join(counterfactual_text(cf_report)) + "\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m nsmcore",
        description="NSM emotion explications: parse texts; route, render and check explications (JSONL).",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def with_input(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "file", nargs="?", default="-", help="JSONL file, one explication per line (default: stdin)"
        )
        p.add_argument(
            "--keep",
            default=DEFAULT_KEEP,
            help="comma-separated record fields copied to the output, not read as slots "
            f"(default: {DEFAULT_KEEP})",
        )

    def with_rule_set(p: argparse.ArgumentParser) -> None:
        p.add_argument("--rule-set", default=None, help="bundled version (e.g. 1) or a rule set JSON file")

    route_p = sub.add_parser("route", help="label, rule, fired set and abstention type per line")
    with_input(route_p)
    with_rule_set(route_p)
    with_input(sub.add_parser("render", help="the prime-language lines of each explication"))
    with_input(sub.add_parser("check", help="legality of each line; exit 1 if any is illegal"))
    with_rule_set(sub.add_parser("regions", help="label region sizes over the full space"))
    selfcheck_p = sub.add_parser("selfcheck", help="run the regression suite; exit 1 on failure")
    with_rule_set(selfcheck_p)
    selfcheck_p.add_argument("--json", action="store_true", help="print the report as JSON")
    parse_p = sub.add_parser("parse", help="parse texts (JSONL with a text field) into explications")
    with_input(parse_p)
    parse_p.add_argument("--text-field", default="text", help="the field holding the text (default: text)")
    parse_p.add_argument("--backend", default="lexical", choices=BACKENDS)
    parse_p.add_argument("--cues", default=None, help="lexical: bundled cue list version or a JSON file")
    parse_p.add_argument(
        "--model",
        default=None,
        help="transformers: name or local path; openai: model name; classifier: the model folder",
    )
    parse_p.add_argument("--device", default="auto", help="transformers: cpu, cuda, cuda:1 or auto")
    parse_p.add_argument("--batch-size", type=int, default=8, help="transformers: texts per batch")
    parse_p.add_argument("--base-url", default=None, help="openai: e.g. http://127.0.0.1:8001/v1")
    parse_p.add_argument("--api-key", default=None, help="openai: bearer token, if the server needs one")
    parse_p.add_argument("--mode", default="schema", choices=("schema", "free"), help="openai: decoding mode")
    parse_p.add_argument("--raw", action="store_true", help="include each raw model output")
    sub.add_parser("emoexpl-schema", help="print the JSON Schema of an EmoExpl export record")
    eval_p = sub.add_parser(
        "evaluate",
        help="accuracy, abstention, intervals, confusion, sensitivity, counterfactuals",
        description=EVALUATE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    eval_p.add_argument(
        "--input", default=None, help="JSONL of explications with reference labels ('-': stdin)"
    )
    eval_p.add_argument(
        "file", nargs="?", default=None, help="the same as --input, as the other commands take it"
    )
    with_rule_set(eval_p)
    eval_p.add_argument(
        "--tier", default="unspecified", help="evidence tier of the item set (P, A, S, H, gold, eval)"
    )
    eval_p.add_argument("--pass-name", default="unnamed", help="the pass the explications come from")
    eval_p.add_argument("--orders", type=int, default=200, help="random priority orders (default 200)")
    eval_p.add_argument("--seed", type=int, default=0, help="seed of the random orders (default 0)")
    eval_p.add_argument(
        "--swap", action="append", help="a named swap of two rules, a:b (repeatable; default guilt:shame)"
    )
    eval_p.add_argument("--decay", type=float, default=0.5, help="priority-decay base (default 0.5)")
    eval_p.add_argument("--alpha", type=float, default=0.05, help="Laplace smoothing (default 0.05)")
    eval_p.add_argument("--flows", type=int, default=10, help="prominent flows to list (default 10)")
    eval_p.add_argument("--json", default=None, metavar="OUT", help="write the full report as JSON to OUT")
    eval_p.add_argument(
        "--counterfactual", default=None, metavar="PAIRS", help="counterfactual benchmark JSONL"
    )
    eval_p.add_argument(
        "--parser", default="lexical", choices=BACKENDS, help="parses pair texts that have no explication"
    )
    add_train_classifier(sub)
    tiny_p = sub.add_parser("tiny-model", help="write a tiny random causal LM for smoke runs")
    tiny_p.add_argument("path")
    tiny_p.add_argument("--seed", type=int, default=0)
    return parser


def main(argv: list[str] | None = None, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        if args.command == "route":
            return cmd_route(args, out)
        if args.command == "render":
            return cmd_render(args, out, err)
        if args.command == "check":
            return cmd_check(args, out, err)
        if args.command == "regions":
            return cmd_regions(args, out)
        if args.command == "parse":
            return cmd_parse(args, out, err)
        if args.command == "evaluate":
            return cmd_evaluate(args, out)
        if args.command == "tiny-model":
            return cmd_tiny_model(args, out)
        if args.command == "train-classifier":
            return cmd_train_classifier(args, out)
        if args.command == "emoexpl-schema":
            out.write(json.dumps(record_schema(), indent=2) + "\n")
            return 0
        return cmd_selfcheck(args, out)
    except (InputError, RuleSetError, ParserUnavailable, CueListError) as error:
        err.write(f"error: {error}\n")
        return 2
    except BrokenPipeError:
        return 0
