from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    """Webhooks (issue 28): admins register URLs for the tool's events; deliveries are signed
    (HMAC-SHA256 with a per-hook secret and a timestamp), sent by the worker with retries and
    backoff, logged per delivery and can be sent again."""

    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from annotator.events import domain_event
        from webhooks import tasks  # noqa: F401  (the worker's task and sweep)
        from webhooks.services import deliveries_record

        def on_event(sender, *, name, payload, at, **kwargs) -> None:
            deliveries_record(name=name, payload=payload, at=at)

        domain_event.connect(on_event, weak=False, dispatch_uid="webhooks-deliveries")
