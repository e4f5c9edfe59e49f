from django.apps import AppConfig


class ContrastsConfig(AppConfig):
    """Minimal pairs made in the tool (issue 26): an adjudicator rewrites an item's text so that
    named slots flip (or nothing should change), in versioned sets; each set is scored for every
    parser, exported as the corpus's contrast split, and listed in a rule revision's report."""

    name = "contrasts"
    verbose_name = "Minimal pairs"

    def ready(self) -> None:
        # a rule revision's report lists the pairs whose label it changes (rules knows no feature)
        from contrasts.revision_check import pairs_changed_by
        from rules import revision_checks

        revision_checks.register("contrasts", pairs_changed_by)
