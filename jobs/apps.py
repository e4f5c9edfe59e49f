from django.apps import AppConfig


class JobsConfig(AppConfig):
    """The machinery of background jobs: the Job row, queueing, running, heartbeats, the pages and
    API that list, watch, cancel and resume jobs. It names no kind: each feature app registers its
    own (jobs.kinds) in its ``ready``."""

    name = "jobs"
    verbose_name = "Background jobs"

    def ready(self) -> None:
        # The Celery task is registered for every process that may send it: the web server, shells
        # and the worker.
        from jobs import tasks  # noqa: F401
