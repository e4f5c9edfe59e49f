"""Rebuild a published EmoExpl archive from the database's history and prove it byte for byte:
`manage.py replay ARCHIVE [--out PATH] [--json]`.

Exit 0: the rebuilt archive is byte for byte the given one. Exit 1: something differs; every
difference is listed by item, slot and field (the first 200; all are counted). Exit 2: bad input
(a file that is not there, not a zip, not an EmoExpl archive, or one that cannot be dated), with
the reason. docs/export.md ("Replay") says what is read."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from exports.replay import ReplayInputError, replay_archive


class Command(BaseCommand):
    help = (
        "Rebuild an EmoExpl archive from the recorded history (annotation revisions, gold decisions, "
        "conventions and their votes, rule set versions) as of its recipe, and compare it with the given "
        "one record by record and by sha256. Exit 0: identical; 1: differences, listed by item and slot; "
        "2: bad input."
    )

    def add_arguments(self, parser):
        parser.add_argument("archive", type=Path, help="the EmoExpl archive (.zip) to rebuild and compare")
        parser.add_argument("--out", type=Path, help="also keep the rebuilt archive in this file or folder")
        parser.add_argument("--json", action="store_true", help="print the result as one JSON object")

    def handle(self, *args, **options):
        out = options["out"]
        if out is not None and not out.is_dir() and not out.parent.is_dir():
            raise CommandError(f"--out: no folder {out.parent} to write {out.name} in", returncode=2)
        try:
            result = replay_archive(options["archive"], keep=out)
        except ReplayInputError as error:
            raise CommandError(str(error), returncode=2) from None
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), ensure_ascii=False, indent=2))
        else:
            self._report(result)
        if not result.identical:
            raise CommandError(
                f"{result.differences.total} difference(s) in {result.differences.items} record(s) "
                f"and the archive's other parts",
                returncode=1,
            )

    def _report(self, result) -> None:
        w = self.stdout.write
        w(f"archive {result.archive}: {result.records} records, sha256 {result.archive_sha256}")
        w(f"replay: {result.replayed} records, sha256 {result.replay_sha256}")
        for note in result.notes:
            w(f"note: {note}")
        if result.identical:
            w("identical: the rebuilt archive is byte for byte the given one")
            return
        for d in result.differences.kept:
            w(f"differs: {d.text}")
        left = result.differences.total - len(result.differences.kept)
        if left:
            w(f"... and {left} more")
