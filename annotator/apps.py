from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _forget_cached_versions(**kwargs) -> None:
    """The cache outlives processes (a folder, or Redis), so a database created again or migrated
    may no longer be what it describes: start from nothing."""
    from django.core.cache import cache

    cache.clear()


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "Annotation"

    def ready(self) -> None:
        post_migrate.connect(_forget_cached_versions, sender=self, dispatch_uid="annotator-forget-cache")
