"""Admin pages for rounds: the list with progress, a new round, one round's annotators."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotator.filters import typed_id
from annotator.forms import PoolForm, RoundForm
from annotator.models import ItemSet, Round
from annotator.roles import ADMIN, require_role
from annotator.round_selectors import annotator_choices, round_annotators, rounds_with_progress
from annotator.services import (
    RoundError,
    RoundOverlap,
    round_annotator_add,
    round_annotator_remove,
    round_create,
)


@require_role(ADMIN)
def rounds(request: HttpRequest) -> HttpResponse:
    return render(request, "annotator/manage_rounds.html", {"rows": rounds_with_progress()})


def _item_set(value: str | None) -> ItemSet | None:
    """The item set a form names, for its parser choices; the form's own field refuses a bad one."""
    pk = typed_id(value or "")
    return ItemSet.objects.filter(pk=pk).first() if pk else None


def _new_round_page(
    request: HttpRequest,
    form: RoundForm,
    *,
    overlap: dict[str, int] | None = None,
    overlap_mode: str = "",
    status: int = 200,
) -> HttpResponse:
    context = {"form": form, "overlap": overlap or {}, "overlap_mode": overlap_mode}
    # htmx asks for the form again when the item set changes: the parser choices follow it
    template = "annotator/_manage_round_form.html" if request.htmx else "annotator/manage_round_new.html"
    return render(request, template, context, status=status)


@require_role(ADMIN)
def round_new(request: HttpRequest) -> HttpResponse:
    """GET ?item_set=ID&text_field=F shows the form with the parsers that read that set in F;
    POST creates the round."""
    if request.method != "POST":
        # what was already filled in comes along (htmx sends the whole form when the set changes)
        item_set = _item_set(request.GET.get("item_set"))
        initial: dict[str, object] = {k: v for k, v in request.GET.items() if k in RoundForm.base_fields}
        initial["annotators"] = request.GET.getlist("annotators")
        initial["item_set"] = item_set
        field = request.GET.get("text_field") or Round.TEXT_MASKED
        return _new_round_page(request, RoundForm(initial=initial, item_set=item_set, text_field=field))
    form = RoundForm(
        request.POST,
        item_set=_item_set(request.POST.get("item_set")),
        text_field=request.POST.get("text_field") or Round.TEXT_MASKED,
    )
    if not form.is_valid():
        return _new_round_page(request, form, status=400)
    data = form.cleaned_data
    try:
        round_ = round_create(
            name=data["name"].strip(),
            item_set=data["item_set"],
            annotators=list(data["annotators"]),
            mode=data["mode"],
            text_field=data["text_field"],
            annotators_per_item=data["annotators_per_item"],
            show_routed_label=data["show_routed_label"],
            prefill_parser=data["prefill_parser"],
            allow_prefill_overlap=data["confirm_overlap"],
        )
    except RoundOverlap as error:
        # the warning box says it, with the counts and the checkbox: no second, red copy
        return _new_round_page(request, form, overlap=error.counts, overlap_mode=error.mode, status=400)
    except RoundError as error:
        form.add_error(error.field if error.field in form.fields else None, str(error))
        return _new_round_page(request, form, status=400)
    messages.success(
        request,
        _("Round %(name)s created: %(n)s assignments.")
        % {"name": round_.name, "n": round_.assignments.count()},
    )
    return redirect("manage_round", round_id=round_.pk)


def _round_page(
    request: HttpRequest, round_: Round, *, problem: tuple[str, str] | None = None, status: int = 200
) -> HttpResponse:
    pool = round_.pool.values_list("pk", flat=True)
    rows = round_annotators(round_)
    done = sum(row.progress.done for row in rows)
    total = sum(row.progress.done + row.progress.skipped + row.progress.pending for row in rows)
    context = {
        "round": round_,
        "rows": rows,
        "done": done,
        "total": total,
        "add_form": PoolForm(queryset=annotator_choices().exclude(pk__in=pool)),
        "problem": problem,
    }
    return render(request, "annotator/manage_round.html", context, status=status)


@require_role(ADMIN)
def round_detail(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = get_object_or_404(Round.objects.select_related("item_set"), pk=round_id)
    return _round_page(request, round_)


def _pool_change(request: HttpRequest, round_id: int, *, add: bool) -> HttpResponse:
    round_ = get_object_or_404(Round.objects.select_related("item_set"), pk=round_id)
    candidates = annotator_choices() if add else round_.pool.all()
    form = PoolForm(request.POST, queryset=candidates)
    if not form.is_valid():
        if add:
            problem = _("annotator: choose an active annotator outside the pool")
        else:
            problem = _("annotator: choose a member of the pool")
        return _round_page(request, round_, problem=("annotator", problem), status=400)
    annotator = form.cleaned_data["annotator"]
    try:
        change = (round_annotator_add if add else round_annotator_remove)(round_=round_, annotator=annotator)
    except RoundError as error:
        return _round_page(request, round_, problem=(error.field, str(error)), status=400)
    if add:
        done = _("%(user)s added to the pool: %(summary)s.")
    else:
        done = _("%(user)s removed from the pool: %(summary)s.")
    messages.success(request, done % {"user": annotator.username, "summary": change.summary()})
    return redirect("manage_round", round_id=round_.pk)


@require_role(ADMIN)
@require_POST
def round_pool_add(request: HttpRequest, round_id: int) -> HttpResponse:
    return _pool_change(request, round_id, add=True)


@require_role(ADMIN)
@require_POST
def round_pool_remove(request: HttpRequest, round_id: int) -> HttpResponse:
    return _pool_change(request, round_id, add=False)
