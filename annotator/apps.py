from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _forget_cached_versions(**kwargs) -> None:
    """The cache outlives processes (a folder, or Redis), so a database created again or migrated
    may no longer be what it describes: start from nothing. (Another process's own analysis cache
    is keyed by the versions emptied here, so it is never read for the new database.)"""
    from django.core.cache import caches

    for alias in caches:
        caches[alias].clear()


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "Annotation"

    def ready(self) -> None:
        post_migrate.connect(_forget_cached_versions, sender=self, dispatch_uid="annotator-forget-cache")
