from django.apps import AppConfig


class TrainingConfig(AppConfig):
    """Training parsers: the train job (LoRA or the classifier; its kind, form, API and commands)
    and how a trained parser is registered."""

    name = "training"
    verbose_name = "Parser training"

    def ready(self) -> None:
        from jobs.kinds import job_kind_module

        job_kind_module("train", "training.train")  # imported when a train job is first asked for
