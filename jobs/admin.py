from django.contrib import admin

from jobs.models import Job


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    """Read-only: jobs are started from the Jobs page, the API or `manage.py prefill`."""

    list_display = ["id", "kind", "status", "item_set", "round", "engine", "done", "total", "created_at"]
    list_filter = ["kind", "status"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
