"""Command line: ``python -m nsmcore <command> [FILE]``, reading JSONL from FILE or stdin.

Exit codes: 0 success; 1 the input was read but something in it is illegal (check, render) or
the regression suite failed (selfcheck); 2 the input itself is unusable (a malformed JSON line,
a missing file, a bad rule set), named with its line number.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import IO, Any

from nsmcore.legality import check
from nsmcore.mapper import RuleSetError, load_rule_set, route_batch
from nsmcore.regression import run_suite
from nsmcore.render import render
from nsmcore.space import regions

DEFAULT_KEEP = "id,text_id"


class InputError(Exception):
    """The input cannot be read; reported on stderr with exit code 2."""


def read_jsonl(stream: IO[str], name: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed object) for every non-blank line."""
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"{name}:{number}: malformed JSON: {error.msg} (column {error.colno})") from None


def _split_kept(obj: Any, keep: list[str]) -> tuple[dict[str, Any], Any]:
    """Move record identifiers (``--keep``) out of the object so the schema sees only slots."""
    if not isinstance(obj, dict):
        return {}, obj
    kept = {k: obj[k] for k in keep if k in obj}
    rest = {k: v for k, v in obj.items() if k not in kept}
    return kept, rest


def _records(args: argparse.Namespace) -> list[tuple[int, dict[str, Any], Any]]:
    keep = [k for k in args.keep.split(",") if k]
    if args.file == "-":
        rows = list(read_jsonl(sys.stdin, "<stdin>"))
    else:
        try:
            with open(args.file, encoding="utf-8") as stream:
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m nsmcore",
        description="NSM emotion explications: route, render and check JSONL explications.",
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
        return cmd_selfcheck(args, out)
    except (InputError, RuleSetError) as error:
        err.write(f"error: {error}\n")
        return 2
    except BrokenPipeError:
        return 0
