from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Background jobs"

    def ready(self) -> None:
        # Each kind of job registers itself (jobs.kinds) from its own module: to add a kind, add its
        # import here. The Celery task is registered for every process that may send it: the web
        # server, shells and the worker.
        from jobs import export, prefill, raw_export, tasks, training, verification  # noqa: F401
