"""Adjudicators mark gold lines entailed or not (one click per line, htmx); everyone who reads
the adjudication pages sees the verifier's calibration against those judgements."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from adjudication.calibration import (
    HISTOGRAM_BINS,
    CalibrationReport,
    calibration_report,
    judgement_items,
    judgement_mark,
    judgement_progress,
    verifier_models,
)
from adjudication.gold import AdjudicationError, gold_sync
from adjudication.models import GoldItem
from annotator.models import Item, Round
from annotator.roles import ADJUDICATOR, ADMIN, require_role

ITEMS_PER_PAGE = 10


@require_GET
@require_role(ADJUDICATOR)
def judgements(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = get_object_or_404(Round, pk=round_id)
    gold_sync(round_)
    ids = list(
        GoldItem.objects.filter(round=round_, status=GoldItem.Status.RESOLVED)
        .order_by("item__source_id")
        .values_list("item_id", flat=True)
    )
    page = Paginator(ids, ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    done, total = judgement_progress(round_, user=request.user)
    context = {
        "round": round_,
        "page": page,
        "items": judgement_items(round_, user=request.user, item_ids=list(page.object_list)),
        "done": done,
        "total": total,
    }
    return render(request, "adjudication/judgements.html", context)


@require_POST
@require_role(ADJUDICATOR)
def judgement_mark_view(request: HttpRequest, round_id: int, item_id: int) -> HttpResponse:
    """One line marked; answers the line's row with the page's counter (out of band, htmx) or
    goes back to the page."""
    round_ = get_object_or_404(Round, pk=round_id)
    item = get_object_or_404(Item, pk=item_id)
    line = request.POST.get("line", "")
    answer = request.POST.get("entailed", "")
    if answer not in ("yes", "no"):
        return HttpResponse("say entailed=yes or entailed=no", status=400)
    try:
        judgement = judgement_mark(
            user=request.user, round_=round_, item=item, line=line, entailed=answer == "yes"
        )
    except AdjudicationError as error:
        return HttpResponse(str(error), status=400)
    page = request.POST.get("page", "1")
    if not request.htmx:
        return redirect(f"{reverse('judgements', args=[round_.pk])}?page={page if page.isdigit() else 1}")
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
    model = request.GET.get("model") or (models[0] if models else "")
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


SIZE, PAD = 220.0, 30.0


def _roc_chart(report: CalibrationReport) -> dict[str, Any] | None:
    """A square ROC plot (SVG coordinates): the curve, the diagonal and the best threshold."""
    if not report.roc:
        return None

    def xy(fpr: float, tpr: float) -> tuple[float, float]:
        return PAD + fpr * SIZE, PAD + (1 - tpr) * SIZE

    points = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(p.fpr, p.tpr) for p in report.roc))
    chart: dict[str, Any] = {"points": points, "size": SIZE + 2 * PAD, "lo": PAD, "hi": PAD + SIZE}
    if report.best:
        chart["best_x"], chart["best_y"] = xy(report.best.fpr, report.best.tpr)
    return chart


def _histogram_chart(report: CalibrationReport) -> dict[str, Any] | None:
    """Bars of item scores over [0, 1] in HISTOGRAM_BINS bins, with the counts."""
    if not report.item_scores:
        return None
    width, height = 360.0, 140.0
    top = max(report.histogram) or 1
    bar = width / HISTOGRAM_BINS
    bars = []
    for k, n in enumerate(report.histogram):
        h = height * n / top
        bars.append(
            {"x": PAD + k * bar + 1, "y": PAD + height - h, "w": bar - 2, "h": h, "n": n,
             "label_y": PAD + height - h - 4, "label_x": PAD + k * bar + bar / 2,
             "range": f"{k / HISTOGRAM_BINS:.1f}-{(k + 1) / HISTOGRAM_BINS:.1f}"}
        )  # fmt: skip
    return {
        "bars": bars,
        "width": width + 2 * PAD,
        "height": height + 2 * PAD,
        "axis": PAD + height,
        "lo": PAD,
        "hi": PAD + width,
    }
