from django.apps import AppConfig


class ExportsConfig(AppConfig):
    """Exports: the EmoExpl gold archive and a round's raw annotations (their kinds, records,
    forms, pages, API, downloads and commands), and the history of every file written."""

    name = "exports"
    verbose_name = "Exports"

    def ready(self) -> None:
        # register the two export kinds, and the export's Hugging Face datasets folder step
        from exports import export, hf, raw_export  # noqa: F401
