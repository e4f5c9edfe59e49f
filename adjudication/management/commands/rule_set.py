"""Rule set versions from the command line: ``manage.py rule_set list|show V|propose FILE|activate
V|rollback V``, V a version's name or its hash as a report gives it (8 hex digits or more).
Activating here counts as an admin's activation. Bad input: exit 2 with the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from adjudication.rule_revisions.services import RevisionError, revision_activate, revision_propose
from nsmcore import jsonio
from nsmcore.mapper import RuleSetError
from rules.models import RuleSetActivation, RuleSetVersion
from rules.rulesets import ensure_initial_version, stored_version


def _bad(message: str) -> CommandError:
    return CommandError(message, returncode=2)


class Command(BaseCommand):
    help = "List, show, propose, activate or roll back rule set versions (activation counts as an admin's)."

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="every version, newest first, and the activation history")
        show = sub.add_parser("show", help="one version as a rule set file (JSON) and its regression report")
        show.add_argument("version", help="its name, or its hash as a report or manifest gives it")
        propose = sub.add_parser("propose", help="propose a rule set file (the v1.json format)")
        propose.add_argument("path", type=Path)
        propose.add_argument("--version", default="", dest="name", help="its name (default: the next number)")
        propose.add_argument("--note", default="", help="what it changes and why")
        propose.add_argument("--pilot", default="", help="the pilot item set (default NSM_PILOT_ITEM_SET)")
        for name, text in (
            ("activate", "activate a version"),
            ("rollback", "activate an earlier version again"),
        ):
            sub.add_parser(name, help=text).add_argument("version")

    def _version(self, name: str) -> RuleSetVersion:
        ensure_initial_version()
        version = stored_version(name)
        if version is None:
            known = ", ".join(RuleSetVersion.objects.order_by("created_at").values_list("version", flat=True))
            raise _bad(f"no rule set version {name!r}; stored: {known}")
        return version

    def handle(self, *args: Any, action: str, **o: Any) -> None:
        getattr(self, f"_{action}")(**o)

    def _list(self, **o: Any) -> None:
        ensure_initial_version()
        for v in RuleSetVersion.objects.order_by("created_at", "id"):
            suite = "passes" if v.suite_ok else "FAILS"
            self.stdout.write(f"v{v.version}\t{v.status}\tsuite {suite}\t{v.content_hash[:12]}\t{v.note}")
        self.stdout.write("history:")
        for a in RuleSetActivation.objects.select_related("version", "by").order_by("at", "id"):
            who = a.by.username if a.by else "-"
            self.stdout.write(
                f"  {a.at:%Y-%m-%d %H:%M:%S}\tv{a.version.version}\t{a.how}\t{who}\t"
                f"{a.rerouted} rerouted, {a.changed} changed label"
            )

    def _show(self, version: str, **o: Any) -> None:
        v = self._version(version)
        self.stdout.write(json.dumps({"status": v.status, **v.document, "report": v.report}, indent=2))

    def _propose(self, path: Path, name: str, note: str, pilot: str, **o: Any) -> None:
        try:
            document = jsonio.loads(path.read_text("utf-8"))
        except jsonio.JSONTooComplex as error:
            raise _bad(f"{path}: {error}") from None
        except FileNotFoundError:
            raise _bad(f"{path}: no such file") from None
        except (OSError, UnicodeDecodeError) as error:
            raise _bad(f"{path}: cannot read: {error}") from None
        except json.JSONDecodeError as error:
            raise _bad(f"{path}: not valid JSON ({error})") from None
        try:
            v = revision_propose(user=None, document=document, version=name, note=note, pilot_item_set=pilot)
        except (RuleSetError, RevisionError) as error:
            raise _bad(f"{path}: {error}; nothing was stored") from None
        verdict = "passes the regression suite" if v.suite_ok else "FAILS the regression suite"
        self.stdout.write(f"proposed v{v.version}: {verdict}")
        for section in v.report["suite"]["sections"]:
            for failure in section["failures"]:
                self.stdout.write(f"  {section['name']}: {failure}")

    def _activate(self, version: str, **o: Any) -> None:
        v = self._version(version)
        try:
            activation = revision_activate(user=None, version=v, how=RuleSetActivation.How.ADMIN)
        except RevisionError as error:
            raise _bad(str(error)) from None
        self.stdout.write(
            f"v{v.version} is active: {activation.rerouted} gold construals routed again, "
            f"{activation.changed} changed label"
        )

    def _rollback(self, version: str, **o: Any) -> None:
        v = self._version(version)
        if not v.activations.exists():
            raise _bad(f"v{v.version} was never active: activate it instead of rolling back to it")
        self._activate(version)
