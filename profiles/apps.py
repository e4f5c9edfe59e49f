from django.apps import AppConfig


class ProfilesConfig(AppConfig):
    """Annotator profiles (issue 27): per annotator and slot, agreement with gold, prefilled values
    kept against the blind control, flows against gold, time and throughput, and a digest of what
    adjudication decided where they disagreed."""

    name = "profiles"
    verbose_name = "Annotator profiles"
