from django.apps import AppConfig


class DiscussionConfig(AppConfig):
    """Threaded comments on an item (issue 27): annotators ask, adjudicators answer, mentions
    notify in the app; shown on the annotation, conflict and gold pages."""

    name = "discussion"
    verbose_name = "Discussion"
