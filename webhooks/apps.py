from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    """Webhooks (issue 28): admins register URLs for the tool's events; deliveries are signed
    (HMAC-SHA256 with a per-hook secret and a timestamp), sent by the worker with retries and
    backoff, logged per delivery and can be sent again."""

    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from annotator.events import domain_event, interest_register
        from webhooks import tasks  # noqa: F401  (the worker's task and sweep)
        from webhooks.models import Webhook
        from webhooks.selectors import event_listened, events_forget
        from webhooks.services import deliveries_record

        def on_event(sender, *, name, payload, at, **kwargs) -> None:
            deliveries_record(name=name, payload=payload, at=at)

        domain_event.connect(on_event, weak=False, dispatch_uid="webhooks-deliveries")
        interest_register(event_listened)
        post_save.connect(events_forget, sender=Webhook, dispatch_uid="webhooks-events-forget")
        post_delete.connect(events_forget, sender=Webhook, dispatch_uid="webhooks-events-forget-delete")
