"""Adjudicators mark gold lines entailed or not (one click per line, htmx); everyone who reads
the adjudication pages sees the verifier's calibration against those judgements."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from adjudication.forms import form_problems
from adjudication.gold.selectors import gold_awaiting
from adjudication.gold.services import AdjudicationError
from adjudication.models import GoldItem
from annotator.models import Item, Round
from annotator.roles import ADJUDICATOR, ADMIN, require_role
from nsmcore.charts import histogram_chart, roc_chart
from verification.calibration import (
    CalibrationReport,
    calibration_report,
    judgement_items,
    judgement_mark,
    judgement_progress,
    verifier_models,
)
from verification.forms import CalibrationQuery, JudgementMarkForm

ITEMS_PER_PAGE = 10


@require_GET
@require_role(ADJUDICATOR)
def judgements(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = get_object_or_404(Round, pk=round_id)
    ids = (
        GoldItem.objects.filter(round=round_, status=GoldItem.Status.RESOLVED)
        .order_by("item__source_id")
        .values_list("item_id", flat=True)
    )
    page = Paginator(ids, ITEMS_PER_PAGE).get_page(request.GET.get("page"))  # one page from the database
    done, total = judgement_progress(round_, user=request.user)
    context = {
        "round": round_,
        "page": page,
        "items": judgement_items(round_, user=request.user, item_ids=list(page.object_list)),
        "done": done,
        "total": total,
        "awaiting": gold_awaiting(round_),
    }
    return render(request, "adjudication/judgements.html", context)


@require_POST
@require_role(ADJUDICATOR)
def judgement_mark_view(request: HttpRequest, round_id: int, item_id: int) -> HttpResponse:
    """One line marked; answers the line's row with the page's counter (out of band, htmx) or
    goes back to the page."""
    round_ = get_object_or_404(Round, pk=round_id)
    item = get_object_or_404(Item, pk=item_id)
    form = JudgementMarkForm(request.POST)
    if not form.is_valid():
        return HttpResponse(form_problems(form), status=400)
    line = form.cleaned_data["line"]
    try:
        entailed = form.cleaned_data["entailed"] == "yes"
        judgement = judgement_mark(user=request.user, round_=round_, item=item, line=line, entailed=entailed)
    except AdjudicationError as error:
        return HttpResponse(str(error), status=400)
    page = form.cleaned_data["page"] or 1
    if not request.htmx:
        return redirect(f"{reverse('judgements', args=[round_.pk])}?page={page}")
    judged = judgement_items(round_, user=request.user, item_ids=[item.pk])[0]
    done, total = judgement_progress(round_, user=request.user)
    context = {
        "round": round_, "item": item, "line": judgement, "text": line, "mine": judgement.entailed,
        "construal": judged.construal_of(line), "page": {"number": page}, "done": done, "total": total,
        "oob": True,
    }  # fmt: skip
    return render(request, "adjudication/_judgement_line.html", context)


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def calibration_page(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = get_object_or_404(Round, pk=round_id)
    models = verifier_models(round_)
    query = CalibrationQuery(request.GET, models=models)
    if not query.is_valid():
        return render(
            request,
            "400.html",
            {"problem": _("bad query: %(problems)s") % {"problems": form_problems(query)}},
            status=400,
        )
    model = query.cleaned_data["model"]
    report = calibration_report(round_, model) if model else None
    context = {
        "round": round_,
        "models": models,
        "model": model,
        "report": report,
        "roc": _roc_chart(report) if report else None,
        "hist": _histogram_chart(report) if report else None,
    }
    return render(request, "adjudication/calibration.html", context)


def _roc_chart(report: CalibrationReport) -> dict[str, Any] | None:
    best = (report.best.fpr, report.best.tpr) if report.best else None
    return roc_chart([(p.fpr, p.tpr) for p in report.roc], best=best)


def _histogram_chart(report: CalibrationReport) -> dict[str, Any] | None:
    return histogram_chart(report.histogram) if report.item_scores else None
