from django.contrib import admin

from discussion.models import Comment, Notification


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin):
    """Read and delete only: comments are written on the pages, through the API or the command
    (the services check the text and tell whom a comment concerns)."""

    list_display = ["id", "item", "round", "author", "parent", "created_at", "edited_at"]
    list_filter = ["round", "by_staff"]
    search_fields = ["body", "author__username", "item__source_id"]
    readonly_fields = [
        "item", "round", "author", "parent", "body", "mentions", "by_staff", "created_at", "edited_at"
    ]  # fmt: skip

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ["id", "recipient", "kind", "comment", "created_at", "read_at"]
    list_filter = ["kind"]
    readonly_fields = ["recipient", "comment", "kind", "created_at", "read_at"]

    def has_add_permission(self, request) -> bool:
        return False
