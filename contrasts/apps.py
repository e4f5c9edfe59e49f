from django.apps import AppConfig


class ContrastsConfig(AppConfig):
    """Minimal pairs made in the tool (issue 26): an adjudicator rewrites an item's text so that
    named slots flip (or nothing should change), in versioned sets; each set is scored for every
    parser, exported as the corpus's contrast split, and listed in a rule revision's report."""

    name = "contrasts"
    verbose_name = "Minimal pairs"

    def ready(self) -> None:
        # a rule revision's report lists the pairs whose label it changes (rules knows no feature)
        from adjudication.training import register_source
        from contrasts.revision_check import pairs_changed_by
        from contrasts.training import PAIRS, pair_records
        from rules import revision_checks

        revision_checks.register("contrasts", pairs_changed_by)
        # a train job's passes may name the pairs: their rewrites, learnt with their intended slots
        register_source(PAIRS, pair_records)
