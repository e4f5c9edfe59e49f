from django.apps import AppConfig


class VerificationConfig(AppConfig):
    """NLI verification: the verify job (its kind, form, API and command), the verifier's cached
    judgements, and the calibration of the verifier against the adjudicators' own judgements.
    A floor above adjudication (it verifies gold and reads the judgements) and below exports."""

    name = "verification"
    verbose_name = "NLI verification"

    def ready(self) -> None:
        from jobs.kinds import job_kind_module

        job_kind_module("verify", "verification.verify")
