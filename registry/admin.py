from django.contrib import admin

from registry.models import RegisteredParser


@admin.register(RegisteredParser)
class RegisteredParserAdmin(admin.ModelAdmin):
    list_display = ("name", "version", "backend", "job_id", "created_by", "created_at")
    list_filter = ("backend",)
    search_fields = ("name", "description")
    readonly_fields = ("card", "trained_on")
