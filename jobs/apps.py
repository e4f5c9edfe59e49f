from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Background jobs"

    def ready(self) -> None:
        # Each kind of job registers how it runs (jobs.services.RUNNERS), and the Celery task is
        # registered for every process that may send it: the web server, shells and the worker.
        from jobs import export, tasks, verification  # noqa: F401
