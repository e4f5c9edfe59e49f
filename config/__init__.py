"""Project configuration. The Celery app is loaded with Django so that tasks are registered."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
