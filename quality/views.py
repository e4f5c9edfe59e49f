"""The quality page of a round (rounds/<id>/quality/): its settings, each annotator's accuracy on
control items with the alerts, the control progress, the assignments moved back to the pool and
the nudges; and the fragment the round pages load (alerts, also as messages). Adjudicators and
admins read; admins change the settings, add controls and sweep."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotator.models import Round
from annotator.roles import ADJUDICATOR, ADMIN, require_role, user_roles
from annotator.selectors import assignment_for_user
from nsmcore.schema import SLOT_NAMES
from quality.abandoned import abandoned_sweep, opening_record
from quality.forms import QualitySettingsForm
from quality.models import QualitySettings
from quality.selectors import (
    ControlScore,
    control_alerts,
    control_progress,
    control_scores,
    nudge_counts,
    round_moves,
)
from quality.services import QualityError, controls_add, quality_settings, quality_settings_set


def _round(round_id: int) -> Round:
    return get_object_or_404(Round.objects.select_related("item_set"), pk=round_id)


def alert_text(score: ControlScore, settings: QualitySettings) -> str:
    return _(
        "%(annotator)s is below the threshold on control items: %(value)s over %(n)s answered (%(measure)s)"
    ) % {
        "annotator": score.annotator,
        "value": f"{score.measured:.2f}",
        "n": score.answered,
        "measure": settings.get_measure_display(),
    }


def _render(
    request: HttpRequest, round_: Round, *, form: QualitySettingsForm | None = None, problem: str = "",
    status: int = 200,
) -> HttpResponse:  # fmt: skip
    settings = quality_settings(round_)
    scores = control_scores(round_, settings)
    context = {
        "round": round_,
        "settings": settings,
        "form": form or QualitySettingsForm.of(settings),
        "is_admin": ADMIN in user_roles(request.user),
        "scores": scores,
        "alerts": [(s, alert_text(s, settings)) for s in control_alerts(scores)],
        "progress": control_progress(scores),
        "slot_rows": [(name, [s.slots[name] for s in scores]) for name in SLOT_NAMES],
        "moves": round_moves(round_),
        "nudges": nudge_counts(round_),
        "problem": problem,
    }
    return render(request, "quality/quality.html", context, status=status)


@require_role(ADJUDICATOR, ADMIN)
def quality_page(request: HttpRequest, round_id: int) -> HttpResponse:
    """GET: the page. POST (admins): new settings (400 naming the problem, nothing changed)."""
    round_ = _round(round_id)
    if request.method != "POST":
        return _render(request, round_)
    if ADMIN not in user_roles(request.user):
        return HttpResponse(_("Only admins change a round's quality settings."), status=403)
    form = QualitySettingsForm(request.POST, round_=round_)
    if form.is_valid():
        try:
            quality_settings_set(round_=round_, user=request.user, **form.cleaned_data)
        except QualityError as error:
            form.add_error(error.field if error.field in form.fields else None, str(error))
        else:
            messages.success(request, _("Quality settings saved."))
            return redirect("quality", round_.pk)
    return _render(request, round_, form=form, status=400)


@require_role(ADMIN)
@require_POST
def quality_controls(request: HttpRequest, round_id: int) -> HttpResponse:
    """Mix control items into the round at its rate (what is missing only)."""
    round_ = _round(round_id)
    try:
        added = controls_add(round_=round_, user=request.user)
    except QualityError as error:
        return _render(request, round_, problem=str(error), status=400)
    messages.success(request, added.summary() + ".")
    return redirect("quality", round_.pk)


@require_role(ADMIN)
@require_POST
def quality_sweep(request: HttpRequest, round_id: int) -> HttpResponse:
    """Move the round's abandoned assignments back to the pool now (the worker does it by itself
    every few minutes)."""
    round_ = _round(round_id)
    result = abandoned_sweep(round_=round_, user=request.user)
    messages.success(request, result.summary() + ".")
    return redirect("quality", round_.pk)


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def quality_alerts(request: HttpRequest, round_id: int) -> HttpResponse:
    """The fragment a round page loads: the control progress and a link to the quality page, and
    each alert as a message (shown here, at once, in the fragment's own message list)."""
    round_ = _round(round_id)
    settings = quality_settings(round_)
    scores = control_scores(round_, settings)
    for score in control_alerts(scores):
        messages.warning(request, alert_text(score, settings), extra_tags="quality-alert")
    context = {"round": round_, "progress": control_progress(scores), "moves": round_moves(round_, limit=1)}
    return render(request, "quality/_alerts.html", context)


@require_POST
def opening(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """The annotation page, once loaded, says it was opened (htmx, hx-trigger="load"): the first
    time starts the assignment's opening, a later one is activity (quality.abandoned). A POST, so
    that showing the page writes nothing; another annotator's assignment is a 404."""
    if not request.user.is_authenticated:
        return HttpResponse(status=401)
    opening_record(assignment=assignment_for_user(request.user, assignment_id), user=request.user)
    return HttpResponse(status=204)
