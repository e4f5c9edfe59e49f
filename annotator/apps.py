from django.apps import AppConfig
from django.db.models.signals import m2m_changed, post_delete, post_migrate, post_save
from django.urls import register_converter

from annotator.converters import IdConverter


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
        register_converter(IdConverter, "id")  # the URLconfs' <id:...>, read after the apps are ready
        post_migrate.connect(_forget_cached_versions, sender=self, dispatch_uid="annotator-forget-cache")
        from django.contrib.auth import get_user_model

        from annotator import sso  # noqa: F401  (registers its system checks)
        from annotator.auth import forget_regrouped_users, forget_saved_user

        user = get_user_model()
        post_save.connect(forget_saved_user, sender=user, dispatch_uid="annotator-forget-saved-user")
        post_delete.connect(forget_saved_user, sender=user, dispatch_uid="annotator-forget-deleted-user")
        m2m_changed.connect(
            forget_regrouped_users, sender=user.groups.through, dispatch_uid="annotator-regrouped"
        )
