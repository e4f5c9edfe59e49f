"""Adjudicators' pages for gold: a round's gold list, opening records, one record with its
preview, and the training download. Everyone with the adjudicator or admin role reads them; only
adjudicators resolve."""

from __future__ import annotations

import io
import json
import zipfile

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRefresh

from adjudication.agreement.analysis import round_analysis, round_submissions
from adjudication.forms import form_problems, refused_query
from adjudication.gold.audit import gold_audit_trail
from adjudication.gold.filters import GoldFilter
from adjudication.gold.forms import GoldOpenForm, ResolveForm, TrainingQuery
from adjudication.gold.preview import gold_preview
from adjudication.gold.review_marks import gold_revised
from adjudication.gold.selectors import gold_awaiting, gold_next_open
from adjudication.gold.services import (
    AdjudicationError,
    StaleGold,
    gold_resolve,
    gold_sync,
    gold_version,
)
from adjudication.models import GoldConstrual, GoldItem
from adjudication.training import training_data, training_refusal
from annotator.models import Annotation, Round
from annotator.roles import ADJUDICATOR, ADMIN, has_role, require_role
from nsmcore.schema import SLOT_NAMES, SLOTS
from nsmcore.training_data import TrainingDataError, training_files

PAGE_SIZE = 50
#: the keys that take the first, second, ... annotator's value for the current slot (static/js/gold.js)
TAKE_KEYS = "abcdefgh"


@require_role(ADJUDICATOR, ADMIN)
def gold_list(request: HttpRequest, round_id: int) -> HttpResponse:
    """The round's gold records, filtered and paged in the database; a GET writes nothing (items
    waiting for a record are counted, and a button opens them)."""
    round_ = get_object_or_404(Round, pk=round_id)
    rows = GoldItem.objects.filter(round=round_)
    total = rows.count()
    resolved = rows.filter(status=GoldItem.Status.RESOLVED).count()
    filters = GoldFilter(request.GET, queryset=rows)
    valid = filters.is_valid()
    shown = filters.qs if valid else rows.none()
    shown = shown.select_related("item").prefetch_related("construals").order_by("item__source_id")
    page = Paginator(shown, PAGE_SIZE).get_page(request.GET.get("page"))
    records = []
    for gold in page.object_list:
        construals = list(gold.construals.all())
        sources = {p.get("source") for c in construals for p in c.provenance.values()}
        open_slots = [name for name in SLOT_NAMES if construals and construals[0].slots.get(name) is None]
        records.append({
            "gold": gold, "construals": construals, "sources": sorted(sources), "open_slots": open_slots,
            "text": gold.item.text_for(round_.text_field),
        })  # fmt: skip
    # ordered by label: the model's own ordering (index) would join the DISTINCT and repeat labels
    labels = list(
        GoldConstrual.objects.filter(gold__round=round_)
        .exclude(label="")
        .order_by("label")
        .values_list("label", flat=True)
        .distinct()
    )
    data = filters.form.cleaned_data if valid else {}
    awaiting = gold_awaiting(round_)
    revised = gold_revised(round_)
    context = {
        "round": round_,
        "page": page,
        "records": records,
        "total": total,
        "resolved": resolved,
        "percent": int(100 * resolved / total) if total else 0,
        "filters": filters,
        "status": data.get("status") or "",
        "label": data.get("label") or "",
        "source": data.get("source") or "",
        "q": data.get("q") or "",
        "labels": labels,
        "awaiting": awaiting,
        "revised": revised,
        # the queue opens what waits by itself: the page POSTs once loaded (a GET writes nothing)
        "open_on_load": bool(awaiting or revised),  # the page is for adjudicators and admins only
        "submissions": None if round_analysis(round_).data.coders else round_submissions(round_),
        "training_refused": training_refusal(round_) if resolved else "",
    }
    return render(request, "adjudication/gold_list.html", context, status=200 if valid else 400)


@require_POST
@require_role(ADJUDICATOR, ADMIN)
def gold_open(request: HttpRequest, round_id: int) -> HttpResponse:
    """Open gold records for the items whose annotations are all in, and mark for review those
    whose annotations were revised since (the button the gold pages show), then back to the page
    it was pressed on."""
    round_ = get_object_or_404(Round, pk=round_id)
    form = GoldOpenForm(request.POST)
    revised = gold_revised(round_)
    opened = gold_sync(round_)
    if request.htmx and not (opened or revised):
        # the gold list's own post on load found nothing to do: no message, and no reload (were the
        # list's count and the opening ever to disagree, a reload would post again, without end)
        return HttpResponse(status=204)
    if revised:
        message = ngettext(
            "%(opened)s; %(n)s marked for review (its annotations were revised).",
            "%(opened)s; %(n)s marked for review (their annotations were revised).",
            revised,
        ) % {
            "opened": ngettext("%(n)s gold record opened", "%(n)s gold records opened", opened)
            % {"n": opened},
            "n": revised,
        }
    else:
        message = ngettext("%(n)s gold record opened.", "%(n)s gold records opened.", opened) % {"n": opened}
    messages.success(request, message)
    if request.htmx:  # the gold list's own post on load: the page reloads with the records
        return HttpResponseClientRefresh()
    return redirect(form.next_url(round_))


@require_POST
@require_role(ADJUDICATOR)
def gold_preview_view(request: HttpRequest, round_id: int, item_id: int) -> HttpResponse:
    """The resolve form's construals rendered and routed as they stand, unsaved (htmx fragment)."""
    gold = get_object_or_404(GoldItem, round_id=round_id, item_id=item_id)
    stored = gold.construals.get(index=1)
    form = ResolveForm(request.POST)
    if not form.is_valid():
        return HttpResponse(form_problems(form), status=400)
    values, second = form.slots()
    first = {**stored.slots, **values}
    try:
        preview = gold_preview(
            first=first, second={**first, **second} if second is not None else None, residue=stored.residue
        )
    except AdjudicationError as error:
        return HttpResponse(str(error), status=400)
    return render(request, "adjudication/_gold_preview.html", {"preview": preview})


@require_role(ADJUDICATOR, ADMIN)
def gold_item(request: HttpRequest, round_id: int, item_id: int) -> HttpResponse:
    round_ = get_object_or_404(Round, pk=round_id)
    gold = get_object_or_404(GoldItem.objects.select_related("item"), round=round_, item_id=item_id)
    if request.method == "POST":
        if not has_role(request.user, ADJUDICATOR):
            return HttpResponse(_("only adjudicators resolve items"), status=403)
        form = ResolveForm(request.POST)
        if not form.is_valid():
            return _gold_page(request, round_, gold, error=form_problems(form), status=400)
        values, second = form.slots()
        try:
            data = form.cleaned_data
            gold_resolve(
                user=request.user, gold=gold, values=values, second=second, why=data["why"],
                base_version=data["base_version"],
            )  # fmt: skip
        except StaleGold as stale:
            # another adjudicator saved first: the page shows the record as it is now, to decide again
            return _gold_page(request, round_, gold, error=str(stale), status=409)
        except AdjudicationError as error:
            return _gold_page(request, round_, gold, error=str(error), status=400)
        messages.success(request, _("%(item)s resolved.") % {"item": gold.item.source_id})
        if request.POST.get("then") == "next":  # "save and next open record"
            following = gold_next_open(round_, after=gold.item.source_id)
            if following is not None:
                return redirect("gold_item", round_id, following)
            messages.info(request, _("No open record is left in this round."))
        return redirect("gold_list", round_id)
    return _gold_page(request, round_, gold)


def _gold_page(
    request: HttpRequest, round_: Round, gold: GoldItem, *, error: str = "", status: int = 200
) -> HttpResponse:
    item_id = gold.item_id
    annotations = list(
        Annotation.objects.filter(
            assignment__round=round_, assignment__item_id=item_id, assignment__status="done"
        )
        .select_related("assignment__annotator")
        .order_by("assignment__annotator__username")
    )
    construals = list(gold.construals.all())
    first = construals[0]
    second = construals[1] if len(construals) > 1 else None
    preview = gold_preview(first=first.slots, second=second.slots if second else None, residue=first.residue)
    # a refused save shows what was posted again, not the stored record: no choice is lost
    posted = request.POST if error and request.method == "POST" else None
    rows = []
    for slot in SLOTS:
        given = [getattr(a, slot.name) for a in annotations]
        stored_second = second.slots.get(slot.name) if second else None
        rows.append(
            {
                "slot": slot.name,
                "values": given,
                "takes": [
                    {"key": key, "value": value, "who": a.assignment.annotator.username}
                    for key, value, a in zip(TAKE_KEYS, given, annotations, strict=False)  # keys for eight
                    if value is not None
                ],
                "choices": slot.values,
                "current": first.slots.get(slot.name),
                "second": stored_second,
                "chosen": posted.get(slot.name, "") if posted else "",
                "chosen_second": (
                    posted.get(f"second_{slot.name}", "")
                    if posted
                    else (stored_second if stored_second != first.slots.get(slot.name) else "")
                ),
                "provenance": first.provenance.get(slot.name),
                "differs": len(set(given)) > 1,
            }
        )
    context = {
        "round": round_,
        "gold": gold,
        "item": gold.item,
        "text": gold.item.text_for(round_.text_field),
        "annotations": annotations,
        "annotators": list(zip(TAKE_KEYS, annotations, strict=False)),
        "rows": rows,
        "construals": construals,
        "changes": gold_audit_trail(gold),
        "preview": preview,
        "can_act": has_role(request.user, ADJUDICATOR),
        "version": gold_version(gold),  # what a save from this page was decided on
        "error": error,
        "why": request.POST.get("why", "") if error else "",  # the rejected form, shown again
        "two": bool(posted.get("two_construals")) if posted else len(construals) > 1,
    }
    return render(request, "adjudication/gold_item.html", context, status=status)


@require_role(ADJUDICATOR, ADMIN)
def gold_training_download(request: HttpRequest, round_id: int) -> HttpResponse:
    """The round's resolved gold as parser training data (docs/training.md): a zip of the JSONL,
    in the transformers backend's prompt format or the chat format, and its manifest. Held-out
    (eval tier) items refuse the download, naming them (400)."""
    round_ = get_object_or_404(Round, pk=round_id)
    query = TrainingQuery(request.GET)
    if not query.is_valid():
        return refused_query(request, query, csv=True)
    fmt = query.cleaned_data["format"]
    try:
        source = training_data(round_=round_)
    except TrainingDataError as error:
        return HttpResponse(str(error), status=400, content_type="text/plain; charset=utf-8")
    data, manifest = training_files(source.records, fmt, meta=source.meta)
    stem = f"training-{slugify(round_.name) or round_.pk}-{fmt}"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{stem}.jsonl", data)
        archive.writestr(f"{stem}.jsonl.manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
    response = HttpResponse(buffer.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=f"{stem}.zip")
    return response
