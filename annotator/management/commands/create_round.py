from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from annotator.models import ItemSet, Round
from annotator.services import RoundError, RoundOverlap, round_create


class Command(BaseCommand):
    help = "Create an annotation round over an item set and assign its items to the annotators."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name")
        parser.add_argument("--item-set", required=True)
        parser.add_argument(
            "--annotators",
            default="",
            help="comma-separated usernames (none for a silver round filled by passes)",
        )
        parser.add_argument("--mode", choices=Round.Mode.values, default=Round.Mode.BLIND)
        parser.add_argument(
            "--prefill-parser", default="", help="parser whose predictions prefill (prefilled mode)"
        )
        parser.add_argument(
            "--text", choices=[Round.TEXT_GENERATED, Round.TEXT_MASKED], default=Round.TEXT_MASKED
        )
        parser.add_argument("--per-item", type=int, default=2, help="annotators per item")
        parser.add_argument("--pass-kind", choices=Round.PassKind.values, default=Round.PassKind.HUMAN)
        parser.add_argument("--show-label", action="store_true", help="annotators see the routed label")
        parser.add_argument(
            "--allow-prefill-overlap",
            action="store_true",
            help="create a blind round even where its annotators saw some items prefilled",
        )

    def handle(self, *args: Any, **o: Any) -> None:
        item_set = ItemSet.objects.filter(name=o["item_set"]).first()
        if item_set is None:
            raise CommandError(f"no item set named {o['item_set']!r}")
        names = [n.strip() for n in o["annotators"].split(",") if n.strip()]
        users = {u.username: u for u in User.objects.filter(username__in=names)}
        missing = [n for n in names if n not in users]
        if missing:
            raise CommandError(f"no such users: {', '.join(missing)}")
        try:
            round_ = round_create(
                name=o["name"],
                item_set=item_set,
                annotators=[users[n] for n in names],
                mode=o["mode"],
                text_field=o["text"],
                annotators_per_item=o["per_item"],
                pass_kind=o["pass_kind"],
                show_routed_label=o["show_label"],
                prefill_parser=o["prefill_parser"],
                allow_prefill_overlap=o["allow_prefill_overlap"],
            )
        except RoundOverlap as error:
            raise CommandError(f"{error} (--allow-prefill-overlap)") from None
        except RoundError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"{round_.name}: {round_.assignments.count()} assignments")
