from django.apps import AppConfig


class ExportsConfig(AppConfig):
    """Exports: the EmoExpl gold archive and a round's raw annotations (their kinds, records,
    forms, pages, API, downloads and commands), and the history of every file written."""

    name = "exports"
    verbose_name = "Exports"

    def ready(self) -> None:
        from jobs.kinds import job_kind_module

        # the two export kinds; the export's Hugging Face datasets folder step comes with its kind
        job_kind_module("export", "exports.export", "exports.hf")
        job_kind_module("rawexport", "exports.raw_export")
