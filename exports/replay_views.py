"""Admin pages of the replay: an export's page (its recipe, how it was made) and the button that
replays a stored export (exports.replay) and shows the result, identical or the differences by
item and slot. The button works with htmx (the result replaces its box) and without (a page)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_POST

from annotator.roles import ADMIN, require_role
from exports.models import Export
from exports.recipe import recipe_of
from exports.replay import ReplayInputError, replay_stored


@require_role(ADMIN)
def export_detail(request: HttpRequest, export_id: int) -> HttpResponse:
    """One export: what it holds, its recipe, and the replay button."""
    export = get_object_or_404(Export.objects.select_related("round", "created_by"), pk=export_id)
    context = {"export": export, "recipe": recipe_of(export), "manifest": export.manifest or {}}
    return render(request, "exports/export.html", context)


@require_POST
@require_role(ADMIN)
def export_replay(request: HttpRequest, export_id: int) -> HttpResponse:
    """Replay a stored export and show the result (400 with the reason for one that cannot be:
    raw annotations, a file no longer on the server, an archive that cannot be dated)."""
    export = get_object_or_404(Export, pk=export_id)
    result, error, status = None, "", 200
    try:
        result = replay_stored(export)
    except ReplayInputError as problem:
        error, status = str(problem), 400
    context = {"export": export, "result": result, "error": error}
    template = "exports/_replay_result.html" if request.htmx else "exports/replay.html"
    return render(request, template, context, status=status)
