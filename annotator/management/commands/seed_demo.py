"""Create the demo users (two adjudicators, an admin and four annotators), the demo items with their
rounds, and print the credentials. Safe to run again: what exists is left as it is."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotator.imports import items_import
from annotator.model_output import predictions_import
from annotator.models import Assignment, Item, Round
from annotator.roles import ADJUDICATOR, ADMIN, ANNOTATOR
from annotator.sampling import item_set_from_items
from annotator.selectors import predicted_explication
from annotator.services import annotation_submit, round_create
from nsmcore.schema import SLOTS

FIXTURES = settings.BASE_DIR / "fixtures"
DEMO_SOURCE = "demo"
DEMO_PARSER = "demo-fixture"
PILOT_ITEMS = 20  # then 10 for the prefilled round and the last 10 for the blind one
PILOT = "Demo pilot (submitted)"
PILOT_CONTROL = "Demo pilot blind control (submitted)"
PREFILLED_ITEMS = 10

DEMO_USERS: tuple[tuple[str, str, str], ...] = (
    ("annotator1", "annotator1-demo", ANNOTATOR),
    ("annotator2", "annotator2-demo", ANNOTATOR),
    # the blind control arm of the pilot: other people over the same items, never shown a prefill
    ("annotator3", "annotator3-demo", ANNOTATOR),
    ("annotator4", "annotator4-demo", ANNOTATOR),
    ("adjudicator", "adjudicator-demo", ADJUDICATOR),
    # a second: a convention is decided by the votes of two adjudicators (NSM_CONVENTION_QUORUM)
    ("adjudicator2", "adjudicator2-demo", ADJUDICATOR),
    ("admin", "admin-demo", ADMIN),
)


class Command(BaseCommand):
    help = "Create demo users for a local instance (refused when DEBUG is off unless --force)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--force", action="store_true", help="allow with DEBUG off")

    @transaction.atomic
    def handle(self, *args: Any, force: bool = False, **options: Any) -> None:
        if not settings.DEBUG and not force:
            raise CommandError("demo users have known passwords; refusing with DEBUG off (use --force)")
        created = []
        for username, password, role in DEMO_USERS:
            group, _ = Group.objects.get_or_create(name=role)
            user, new = User.objects.get_or_create(username=username)
            if new:
                user.set_password(password)
                user.is_staff = role == ADMIN
                user.is_superuser = role == ADMIN
                user.save()
                created.append(username)
            user.groups.add(group)
        self._demo_rounds()
        self.stdout.write("Demo users (username / password / role):")
        for username, password, role in DEMO_USERS:
            self.stdout.write(f"  {username:12} {password:18} {role}")
        if created:
            self.stdout.write(f"Created: {', '.join(created)}")

    def _demo_rounds(self) -> None:
        report = items_import(
            data=(FIXTURES / "demo_items.jsonl").read_bytes(), fmt="jsonl", source=DEMO_SOURCE
        )
        predictions_import(
            data=(FIXTURES / "demo_predictions.jsonl").read_bytes(), parser=DEMO_PARSER, source=DEMO_SOURCE
        )
        if Round.objects.filter(name__in=["Demo prefilled", "Demo blind"]).exists():
            return
        # Three disjoint slices of the 40 items: the blind round is the control arm for anchoring,
        # so its annotators must not have seen its items prefilled in the other two.
        items = list(Item.objects.filter(source=DEMO_SOURCE).order_by("source_id"))
        self._demo_pilot(items[:PILOT_ITEMS])
        annotators = list(User.objects.filter(username__in=["annotator1", "annotator2"]).order_by("username"))
        prefilled = items[PILOT_ITEMS : PILOT_ITEMS + PREFILLED_ITEMS]
        round_create(
            name="Demo prefilled",
            item_set=item_set_from_items(name=f"demo-prefilled-{len(prefilled)}", items=prefilled),
            annotators=annotators,
            mode=Round.Mode.PREFILLED,
            prefill_parser=DEMO_PARSER,
        )
        blind = items[PILOT_ITEMS + PREFILLED_ITEMS :]
        round_create(
            name="Demo blind",
            item_set=item_set_from_items(name=f"demo-blind-{len(blind)}", items=blind),
            annotators=annotators,
            mode=Round.Mode.BLIND,
        )
        self.stdout.write(
            f"Demo data: {report.summary()}; rounds 'Demo prefilled' and 'Demo blind' (to annotate), "
            f"'{PILOT}' (both annotators' work done, for the agreement pages) and '{PILOT_CONTROL}' "
            "(its blind control arm, for the anchoring page)."
        )

    def _demo_pilot(self, items: list[Item]) -> None:
        """Two finished rounds over the first items, so that the agreement and anchoring pages have
        something to show: annotator1 and annotator2 start from the parser's prefill and change
        some slots (seeded), the first more often than the second; annotator3 and annotator4 label
        the same items blind (the control arm), simulated as independent readings that land on the
        parser's value less often."""
        import random

        item_set = item_set_from_items(name=f"demo-pilot-{len(items)}", items=items)
        rng = random.Random(52)
        arms = (
            (PILOT, Round.Mode.PREFILLED, ("annotator1", "annotator2"), (0.07, 0.04)),
            (PILOT_CONTROL, Round.Mode.BLIND, ("annotator3", "annotator4"), (0.2, 0.15)),
        )
        for name, mode, usernames, changes in arms:
            annotators = list(User.objects.filter(username__in=usernames).order_by("username"))
            round_ = round_create(
                name=name,
                item_set=item_set,
                annotators=annotators,
                mode=mode,
                prefill_parser=DEMO_PARSER if mode == Round.Mode.PREFILLED else "",
            )
            for user, change in zip(annotators, changes, strict=True):
                for assignment in Assignment.objects.filter(round=round_, annotator=user).select_related(
                    "item"
                ):
                    # the parser's reading stands in for a reader's (a blind round shows it to nobody)
                    values = dict(predicted_explication(DEMO_PARSER, assignment.item) or {})
                    for slot in SLOTS:
                        if not values or rng.random() < change:
                            values[slot.name] = rng.choice(slot.values) if values else slot.default
                    annotation_submit(
                        assignment=assignment, user=user, values=values, base_version=0, time_spent_ms=20_000
                    )
