from django.apps import AppConfig


class PredictionsConfig(AppConfig):
    """Parsers at work: the prefill job (its kind, form, API and command), building a parser from
    the registry or the settings, and the legality report of a parser run."""

    name = "predictions"
    verbose_name = "Parser predictions"

    def ready(self) -> None:
        from jobs.kinds import job_kind_module

        job_kind_module("prefill", "predictions.prefill")
