"""Read-only views of hooks and deliveries; the secret is never shown (it was, once, when the hook
was made: docs/webhooks.md). Hooks are made, changed and deleted on /webhooks/, the API or the
command, whose checks (an http or https URL, known events) the admin's forms would skip."""

from django.contrib import admin

from webhooks.models import Delivery, Webhook


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ["url", "events", "active", "created_by", "created_at"]
    list_filter = ["active"]
    search_fields = ["url"]
    fields = ["url", "events", "active", "created_by", "created_at"]  # not the secret
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["id", "webhook", "event", "state", "attempts", "status_code", "duration_ms", "created_at"]
    list_filter = ["state", "event"]
    fields = [
        "webhook", "event", "state", "attempts", "status_code", "duration_ms", "error", "response", "body",
        "created_at", "attempted_at", "next_attempt_at", "delivered_at", "redelivery_of",
    ]  # fmt: skip
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
