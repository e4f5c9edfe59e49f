"""manage.py parsers [NAME[@VERSION]]: the registered parsers, or one's card."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from registry.selectors import UnknownParser, best_parser, parser_get, parsers_list


class Command(BaseCommand):
    help = "List the registered parsers, or show one (NAME or NAME@VERSION) with its card."

    def add_arguments(self, parser):
        parser.add_argument("spec", nargs="?", default="", help="NAME or NAME@VERSION")
        parser.add_argument("--json", action="store_true", help="the card as JSON")

    def handle(self, *args, **options):
        if not options["spec"]:
            rows = list(parsers_list().defer("card", "trained_on"))
            if not rows:
                self.stdout.write(
                    "no registered parsers yet: train one (manage.py train_parser --method classifier)"
                )
                return
            best = best_parser()
            for p in rows:
                held = (
                    f"held-back accuracy {p.validation_accuracy:.3f} of {p.validation_texts}"
                    if p.validation_accuracy is not None
                    else "none held back"
                )
                self.stdout.write(
                    f"{p.spec:<32} {p.backend:<13} trained on {p.trained_count:>5} items  {held:<36} "
                    f"job #{p.job_id or '-'}  {p.created_at:%Y-%m-%d %H:%M}"
                    + ("  <- prefill default" if best and p.pk == best.pk else "")
                )
            return
        try:
            p = parser_get(options["spec"])
        except UnknownParser as error:
            raise CommandError(str(error), returncode=2) from None
        if options["json"]:
            self.stdout.write(json.dumps({"spec": p.spec, "backend": p.backend, "card": p.card}, indent=2))
            return
        card = p.card or {}
        self.stdout.write(f"{p.spec}  ({p.backend}; predictions named {p.parser_name})")
        self.stdout.write(f"  trained on {p.trained_count} items; job #{p.job_id or '-'}")
        if p.validation_accuracy is not None:
            self.stdout.write(
                f"  held-back accuracy {p.validation_accuracy:.3f} on {p.validation_texts} labelled texts"
            )
        self.stdout.write(f"  options: {json.dumps(card.get('options', {}), sort_keys=True)}")
        for source, info in (card.get("sources") or {}).items():
            shown = {k: v for k, v in info.items() if k != "ids"} if isinstance(info, dict) else info
            self.stdout.write(f"  source {source}: {json.dumps(shown, sort_keys=True)}")
