from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotator.models import ItemSet
from annotator.sampling import DrawError, item_set_draw


class Command(BaseCommand):
    help = "Draw an item set from a seed, stratified by reference label or of a plain size."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name")
        parser.add_argument("--seed", type=int, required=True)
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--per-label", type=int, dest="per_stratum", help="items per reference label")
        group.add_argument("--size", type=int, help="items overall")
        parser.add_argument("--tier", choices=ItemSet.Tier.values, default=ItemSet.Tier.OTHER)
        parser.add_argument("--disjoint-from", help="name of an item set to keep out (e.g. the held-out set)")
        parser.add_argument("--source", default="", help="only items of this corpus")

    def handle(self, *args: Any, **o: Any) -> None:
        held_out = None
        if o["disjoint_from"]:
            held_out = ItemSet.objects.filter(name=o["disjoint_from"]).first()
            if held_out is None:
                raise CommandError(f"no item set named {o['disjoint_from']!r}")
        try:
            item_set = item_set_draw(
                name=o["name"],
                seed=o["seed"],
                tier=o["tier"],
                per_stratum=o["per_stratum"],
                size=o["size"],
                disjoint_from=held_out,
                source=o["source"],
            )
        except DrawError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"{item_set.name}: {item_set.size} items (seed {item_set.seed})")
