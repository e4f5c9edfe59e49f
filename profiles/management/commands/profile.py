"""``manage.py profile USERNAME [--round NAME] [--page N] [--format text|json]``: an annotator's
profile as the page and the API give it (JSON: the API's document). An unknown user, round or
page, or a silver pass: exit 2 with the line that says why."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from profiles.api import profile_document
from profiles.selectors import ProfileError, profile_digest, profile_of, profile_scope, round_for_profiles
from profiles.tables import number

TOP_FLOWS = 10


def _bad(message: str) -> CommandError:
    return CommandError(message, returncode=2)


def _share(p: Any) -> str:
    if p.value is None:
        return "-"
    return f"{p.value:.3f} [{p.low:.2f}, {p.high:.2f}] {p.k}/{p.n}"


class Command(BaseCommand):
    help = (
        "An annotator's profile: per slot, agreement with gold, prefilled values kept against the blind "
        "control (anchoring), kept values gold overturned; flows against gold, time per item, "
        "throughput, and the digest of what adjudication decided where they differed from gold."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("username", help="the annotator's user name")
        parser.add_argument(
            "--round", default="", metavar="NAME", help="one round (default: every human round)"
        )
        parser.add_argument("--page", type=int, default=1, help="the digest's page (default 1)")
        parser.add_argument(
            "--format", choices=["text", "json"], default="text", help="text (default) or json"
        )

    def handle(self, *args: Any, username: str, round: str, page: int, format: str, **o: Any) -> None:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise _bad(f"no user named {username!r}")
        try:
            chosen = round_for_profiles(round, by_name=True) if round else None
            scope = profile_scope(round_=chosen)
            digest = profile_digest(user=user, scope=scope, page=page)
        except ProfileError as error:
            raise _bad(error.named) from None
        profile = profile_of(user=user, scope=scope)
        if format == "json":
            self.stdout.write(json.dumps(profile_document(profile, digest), indent=2, default=str))
            return
        self._text(profile, digest)

    def _text(self, profile: Any, digest: Any) -> None:
        w = self.stdout.write
        scope = profile.scope
        counted = ", ".join(f"{r.name} ({r.mode})" for r in scope.rounds) or "none"
        w(f"{profile.username}: {profile.submitted} items submitted ({profile.with_gold} with gold, "
          f"{profile.with_prefill} shown a prefill)")  # fmt: skip
        w(f"rounds counted: {counted}")
        if scope.silver:
            w(f"silver passes left out: {', '.join(r.name for r in scope.silver)}")
        control = ", ".join(r.name for r in scope.control_rounds) or "none"
        source = {"own": "their own", "team": "the team's", "": "none"}[profile.control_source]
        w(f"blind control: {source} blind values of {control} against parser {scope.parser or '-'}")
        w("")
        w(f"{'slot':16}{'agreement with gold':32}{'kept':32}{'control':32}{'diff':>8}  overturned")
        for s in (*profile.slots, profile.overall):
            w(f"{s.slot or 'all slots':16}{_share(s.gold):32}{_share(s.kept):32}{_share(s.control):32}"
              f"{number(s.difference, 3) or '-':>8}  {_share(s.overturned)}")  # fmt: skip
        w("")
        w("flows against gold (submitted -> gold, n, share of the value submitted):")
        for f in profile.flows[:TOP_FLOWS]:
            w(f"  {f.slot}: {f.a} -> {f.b}  {f.count}  {f.share_of_a:.3f}")
        if not profile.flows:
            w("  none")
        t = profile.time
        median = "-" if t.median_s is None else f"{t.median_s:.1f} s"
        p90 = "-" if t.p90_s is None else f"{t.p90_s:.1f} s"
        w(f"time per item: median {median}, 90th percentile {p90} ({t.n} timed)")
        days = ", ".join(f"{p.start.isoformat()} {p.items}" for p in profile.throughput) or "none"
        unit = "week" if profile.throughput and profile.throughput[0].days == 7 else "day"
        w(f"items submitted per {unit}: {days}")
        w("")
        w(f"digest: {digest.total} items differ from gold (page {digest.page} of {digest.pages})")
        for e in digest.entries:
            w(f"  {e.source_id} ({e.round_name})")
            for s in e.slots:
                if s.convention is not None:
                    why = f"convention {s.convention.label}: {s.convention.rule}"
                elif s.source == "unanimous":
                    why = "unanimous in gold's round"
                else:
                    why = f"{s.who}: {s.why}" if s.who else s.why
                w(f"    {s.slot}: {s.theirs} -> gold {s.gold}  ({why})")
