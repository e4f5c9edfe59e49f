from django.contrib import admin
from rest_framework.authtoken.models import TokenProxy

from annotator.models import Annotation, ApiToken, Assignment, Item, ItemSet, ParserPrediction, Round

# DRF's token admin listed keys in clear; its table is emptied by annotator migration 0006
if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Who has a token and since when; the key exists nowhere to show (only its digest)."""

    list_display = ["user", "created"]
    fields = ["user", "created"]
    readonly_fields = ["user", "created"]

    def has_add_permission(self, request) -> bool:  # a key is made by its owner, shown once to them
        return False


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["source_id", "source", "reference_label", "masked_text"]
    list_filter = ["source", "reference_label"]
    search_fields = ["source_id", "text"]


@admin.register(ItemSet)
class ItemSetAdmin(admin.ModelAdmin):
    list_display = ["name", "tier", "size", "seed", "per_stratum", "disjoint_from", "created_at"]
    readonly_fields = [
        "seed",
        "per_stratum",
        "stratify_by",
        "size",
        "disjoint_from",
        "source_filter",
        "created_by",
    ]


@admin.register(Round)
class RoundAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "item_set",
        "mode",
        "text_field",
        "annotators_per_item",
        "pass_kind",
        "show_routed_label",
    ]
    filter_horizontal = ["pool"]

    def has_add_permission(self, request) -> bool:
        # A round needs its assignments made with it: `manage.py create_round` does both.
        return False


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["round", "item", "annotator", "status", "position"]
    list_filter = ["round", "status"]
    raw_id_fields = ["item"]


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ["assignment", "evaluation", "version", "updated_at"]
    raw_id_fields = ["assignment"]


@admin.register(ParserPrediction)
class ParserPredictionAdmin(admin.ModelAdmin):
    list_display = ["item", "parser", "parser_version", "legal", "created_at"]
    list_filter = ["parser", "legal"]
    raw_id_fields = ["item"]
