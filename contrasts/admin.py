from django.contrib import admin

from contrasts.models import MinimalPair, PairSet


class PairInline(admin.TabularInline):
    model = MinimalPair
    fields = ["item", "family", "text", "targets", "invariance", "expected", "created_by", "created_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:  # pairs are checked by the services
        return False


@admin.register(PairSet)
class PairSetAdmin(admin.ModelAdmin):
    """Read and delete only: a set is made, filled, frozen and versioned on its page (the
    services check every pair), never edited here."""

    list_display = ["name", "version", "frozen_at", "created_by", "created_at"]
    list_filter = ["name"]
    search_fields = ["name", "note"]
    readonly_fields = ["name", "version", "note", "created_by", "created_at", "frozen_at", "frozen_by"]
    inlines = [PairInline]

    def has_add_permission(self, request) -> bool:
        return False
