from django.apps import AppConfig


class TrainingConfig(AppConfig):
    """Training parsers: the train job (LoRA or the classifier; its kind, form, API and commands)
    and how a trained parser is registered."""

    name = "training"
    verbose_name = "Parser training"

    def ready(self) -> None:
        from training import train  # noqa: F401  (registers the train kind)
