from django.apps import AppConfig


class VerificationConfig(AppConfig):
    """The verifier's judgements, kept for every app that reads them: verification jobs write them,
    the calibration report and the export read them. A floor below adjudication and jobs."""

    name = "verification"
    verbose_name = "NLI verification"
