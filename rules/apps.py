from django.apps import AppConfig


class RulesConfig(AppConfig):
    """The mapper's rule set as the product uses it: which version is active, and its page. The
    lowest floor above nsmcore, so every app (annotation previews, gold, exports) reads it from
    below."""

    name = "rules"
    verbose_name = "Rule set"
