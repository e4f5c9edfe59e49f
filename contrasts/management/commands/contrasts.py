"""Minimal pairs from the command line: ``manage.py contrasts list | show SET [--version N]
[--jsonl] | add SET FILE.jsonl | freeze SET | new-version SET | score SET [--parser NAME]
[--json]``. SET is a set's name (its newest version unless ``--version``). ``add`` creates the
set when no set has that name, and adds all of the file's pairs or none. Bad input: exit 2 with
the line that says why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from contrasts.models import PairSet
from contrasts.scoring import parser_choice, score_set, unknown_parser_message
from contrasts.selectors import NotFound, pair_set_named, pair_sets, set_pairs
from contrasts.services import (
    ContrastError,
    pair_set_create,
    pair_set_freeze,
    pair_set_new_version,
    pairs_add,
)
from contrasts.split import contrast_jsonl
from nsmcore import jsonio
from nsmcore.counterfactual import counterfactual_text

#: the keys of a line of ``add``'s file (docs/adjudicator.md, "Minimal pairs")
LINE_KEYS = {"item", "text", "targets", "from", "expected", "invariance", "family", "note"}


def _bad(message: str) -> CommandError:
    return CommandError(message, returncode=2)


class Command(BaseCommand):
    help = "List, show, fill, freeze, version and score sets of minimal pairs."

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="every set, every version")
        show = sub.add_parser("show", help="a set's pairs")
        show.add_argument("name", metavar="SET")
        show.add_argument("--jsonl", action="store_true", help="the contrast split: one JSON pair a line")
        add = sub.add_parser("add", help="add a JSONL file's pairs to an open set (made when new)")
        add.add_argument("name", metavar="SET")
        add.add_argument("path", type=Path)
        freeze = sub.add_parser("freeze", help="close an open set")
        freeze.add_argument("name", metavar="SET")
        new = sub.add_parser("new-version", help="open the next version of a frozen set, with its pairs")
        new.add_argument("name", metavar="SET")
        score = sub.add_parser("score", help="every parser's scores on a set")
        score.add_argument("name", metavar="SET")
        score.add_argument(
            "--parser", default="", help="lexical, NAME@VERSION or NAME (default: every parser)"
        )
        score.add_argument("--json", action="store_true", dest="as_json", help="the scores as JSON")
        for each in (show, add, freeze, new, score):
            each.add_argument(
                "--version", type=int, default=None, help="the set's version (default: its newest)"
            )

    def handle(self, *args: Any, action: str, **o: Any) -> None:
        getattr(self, "_" + action.replace("-", "_"))(**o)

    def _set(self, name: str, version: int | None) -> PairSet:
        try:
            return pair_set_named(name, version)
        except NotFound as error:
            raise _bad(str(error)) from None

    def _list(self, **o: Any) -> None:
        rows = list(pair_sets().order_by("name", "-version"))
        if not rows:
            self.stdout.write("no sets yet: manage.py contrasts add NAME FILE.jsonl makes one")
        for s in rows:
            state = "open" if s.is_open else f"frozen {s.frozen_at:%Y-%m-%d %H:%M}"
            self.stdout.write(f"{s.spec:<40} {state:<24} {s.pair_count:>5} pairs  {s.note[:60]}")

    def _show(self, name: str, version: int | None, jsonl: bool, **o: Any) -> None:
        pair_set = self._set(name, version)
        if jsonl:
            self.stdout.write(contrast_jsonl(pair_set), ending="")
            return
        self.stdout.write(f"{pair_set.spec}  {'open' if pair_set.is_open else 'frozen'}  {pair_set.note}")
        for k, p in enumerate(set_pairs(pair_set), 1):
            flips = (
                "invariance"
                if p.invariance
                else ", ".join(f"{s} {a}->{b}" for s, (a, b) in p.targets.items())
            )
            self.stdout.write(
                f"{k:>4}  {p.item.source_id}  [{p.family}]  {flips}  expect {p.expected_label()}"
                f" (x: {p.item.reference_label})\n      x': {p.text}"
            )

    def _add(self, name: str, path: Path, version: int | None, **o: Any) -> None:
        rows, where = self._lines(path)
        with transaction.atomic():  # a set made here is kept only with its pairs
            try:
                pair_set = pair_set_named(name, version)
            except NotFound as error:
                if version is not None:
                    raise _bad(str(error)) from None
                try:
                    pair_set = pair_set_create(user=None, name=name)
                except ContrastError as problem:
                    raise _bad(f"{name}: {problem}") from None
            try:
                made = pairs_add(user=None, pair_set=pair_set, rows=rows, where=where)
            except ContrastError as error:
                raise _bad("\n".join(f"{k}: {m}" if k else m for k, m in error.problems.items())) from None
        self.stdout.write(f"{len(made)} pairs added to {pair_set.spec} ({pair_set.pairs.count()} in all)")

    def _lines(self, path: Path) -> tuple[list[dict[str, Any]], list[str]]:
        """Each line's pair (pair_check's keywords), with "FILE:LINE" to name it by."""
        try:
            text = path.read_text("utf-8")
        except FileNotFoundError:
            raise _bad(f"{path}: no such file") from None
        except (OSError, UnicodeDecodeError) as error:
            raise _bad(f"{path}: cannot read: {error}") from None
        rows: list[dict[str, Any]] = []
        where: list[str] = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = jsonio.loads(line)
            except ValueError as error:
                raise _bad(f"{path}:{n}: not JSON: {error}") from None
            if not isinstance(obj, dict):
                raise _bad(f"{path}:{n}: expected a JSON object")
            unknown = sorted(set(obj) - LINE_KEYS)
            if unknown:
                raise _bad(f"{path}:{n}: unknown key {unknown[0]!r}; keys: {', '.join(sorted(LINE_KEYS))}")
            if not isinstance(obj.get("invariance", False), bool):
                raise _bad(f"{path}:{n}: invariance: true or false")
            rows.append({
                "item": obj.get("item"), "text": obj.get("text"), "targets": obj.get("targets"),
                "from_values": obj.get("from"), "expected": obj.get("expected") or "",
                "invariance": obj.get("invariance", False), "family": obj.get("family") or "",
                "note": obj.get("note") or "",
            })  # fmt: skip
            where.append(f"{path}:{n}")
        if not rows:
            raise _bad(f"{path}: no pairs in it")
        return rows, where

    def _freeze(self, name: str, version: int | None, **o: Any) -> None:
        pair_set = self._set(name, version)
        try:
            pair_set_freeze(user=None, pair_set=pair_set)
        except ContrastError as error:
            raise _bad(str(error)) from None
        self.stdout.write(f"{pair_set.spec} frozen with {pair_set.pairs.count()} pairs")

    def _new_version(self, name: str, version: int | None, **o: Any) -> None:
        pair_set = self._set(name, version)
        try:
            fresh = pair_set_new_version(user=None, pair_set=pair_set)
        except ContrastError as error:
            raise _bad(str(error)) from None
        self.stdout.write(f"{fresh.spec} open with the {fresh.pairs.count()} pairs of v{pair_set.version}")

    def _score(self, name: str, version: int | None, parser: str, as_json: bool, **o: Any) -> None:
        pair_set = self._set(name, version)
        choices = None
        if parser:
            found = parser_choice(parser)
            if found is None:
                raise _bad(unknown_parser_message(parser))
            choices = [found]
        scores = score_set(pair_set, choices=choices)
        if not scores:
            raise _bad(f"{pair_set.spec} has no pairs: nothing to score")
        if as_json:
            self.stdout.write(
                json.dumps({"set": pair_set.spec, "parsers": [s.to_dict() for s in scores]}, indent=2)
            )
            return
        for s in scores:
            self.stdout.write(f"{s.parser}  ({s.name or s.backend} {s.version})".rstrip())
            if s.report is None:
                self.stdout.write(f"  not scored: {s.reason}")
                continue
            for line in counterfactual_text(s.report):
                self.stdout.write("  " + line)
            if s.unreadable:
                self.stdout.write(f"  {s.unreadable} outputs were no legal explication")
