from django.contrib import admin

from quality.models import Move, Nudge, Opening, QualitySettings


@admin.register(QualitySettings)
class QualitySettingsAdmin(admin.ModelAdmin):
    list_display = ["round", "control_rate", "control_source", "threshold", "abandon_hours", "nudge"]
    raw_id_fields = ["round", "control_source"]


@admin.register(Opening)
class OpeningAdmin(admin.ModelAdmin):
    list_display = ["assignment", "annotator", "opened_at", "active_at"]
    raw_id_fields = ["assignment"]


@admin.register(Move)
class MoveAdmin(admin.ModelAdmin):
    list_display = ["round", "item", "from_annotator", "to_annotator", "at", "hours"]
    raw_id_fields = ["assignment", "item"]


@admin.register(Nudge)
class NudgeAdmin(admin.ModelAdmin):
    list_display = ["round", "annotator", "assignment", "time_spent_ms", "at"]
    raw_id_fields = ["assignment"]
