"""Minimal pairs' pages: the sets (and a form for a new one), a set with its pairs, the form that
adds one, freezing and the next version, the contrast split as JSONL, and the scores of every
parser (loaded into the set's page by htmx, or a page of their own without JavaScript).
Adjudicators and admins read and write."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from adjudication.forms import refused_query
from annotator.roles import ADJUDICATOR, ADMIN, require_role
from contrasts.forms import PairForm, PairSetForm, ScoresQuery
from contrasts.models import PairSet
from contrasts.scoring import parser_choices, score_set
from contrasts.selectors import NotFound, gold_values, item_lookup, newest_version, pair_sets, set_pairs
from contrasts.services import (
    ContrastError,
    pair_add,
    pair_set_create,
    pair_set_freeze,
    pair_set_new_version,
)
from contrasts.split import contrast_jsonl
from nsmcore.schema import SLOT_NAMES
from rules.rulesets import active_rule_set


@require_role(ADJUDICATOR, ADMIN)
def contrast_sets(request: HttpRequest) -> HttpResponse:
    """GET: every set, every version. POST: a new set (version 1), or 400 naming the problem."""
    form = PairSetForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                made = pair_set_create(user=request.user, **form.cleaned_data)
            except ContrastError as error:
                for field, message in error.problems.items():
                    form.add_error(field if field in form.fields else None, message)
            else:
                messages.success(request, _("Set %(set)s created: add its pairs.") % {"set": made.spec})
                return redirect("contrast_set", made.pk)
        status = 400
    return render(request, "contrasts/sets.html", {"sets": pair_sets(), "form": form}, status=status)


def _set_or_404(pk: int) -> PairSet:
    return get_object_or_404(PairSet.objects.select_related("created_by", "frozen_by"), pk=pk)


def _item_preview(reference: str) -> dict:
    """The item a pair would be written from, its gold, or why none is found."""
    if not reference.strip():
        return {}
    try:
        item = item_lookup(reference)
    except NotFound as error:
        return {"problem": str(error)}
    gold = gold_values([item.pk]).get(item.pk)
    return {"item": item, "gold": [(name, gold[name]) for name in SLOT_NAMES] if gold else None}


@require_role(ADJUDICATOR, ADMIN)
def contrast_set(
    request: HttpRequest, pk: int, *, form: PairForm | None = None, status: int = 200
) -> HttpResponse:
    """A set: its pairs, the add form while it is open, freeze / new version, the versions of its
    name, and its scores (loaded after the page). ``?item=`` fills the form's item and shows it."""
    pair_set = _set_or_404(pk)
    emotions = active_rule_set().emotions
    if form is None:  # a link's ?item= (and the field's htmx preview) fills the unbound form
        form = PairForm(initial=request.GET.dict(), emotions=emotions)
    reference = form["item"].value()
    context = {
        "set": pair_set,
        "pairs": set_pairs(pair_set),
        "form": form,
        "preview": _item_preview(reference or ""),
        "versions": PairSet.objects.filter(name=pair_set.name).order_by("-version"),
        "is_newest": newest_version(pair_set.name) == pair_set.version,
        "parsers": [c.key for c in parser_choices()],
    }
    if request.htmx and request.htmx.target == "item-preview":
        return render(request, "contrasts/_item_preview.html", context)
    return render(request, "contrasts/set.html", context, status=status)


@require_POST
@require_role(ADJUDICATOR, ADMIN)
def contrast_pair_add(request: HttpRequest, pk: int) -> HttpResponse:
    pair_set = _set_or_404(pk)
    emotions = active_rule_set().emotions
    if "show" in request.POST:  # "Show the item": the page again, what was typed kept, nothing saved
        typed = {
            name: value for name, value in request.POST.items() if name not in ("show", "csrfmiddlewaretoken")
        }
        return contrast_set(request, pk, form=PairForm(initial=typed, emotions=emotions))
    form = PairForm(request.POST, emotions=emotions)
    if form.is_valid():
        try:
            pair = pair_add(user=request.user, pair_set=pair_set, **form.values())
        except ContrastError as error:
            if error.api_status == 409:  # frozen since the page was opened: the set's page says so
                messages.error(request, str(error))
                return contrast_set(request, pk, form=form, status=409)
            form.add_problems(error)
        else:
            messages.success(
                request,
                _("Pair %(number)s added to %(set)s.")
                % {"number": pair_set.pairs.count(), "set": pair_set.spec},
            )
            return redirect(reverse("contrast_set", args=[pair_set.pk]) + f"#pair-{pair.pk}")
    return contrast_set(request, pk, form=form, status=400)


@require_POST
@require_role(ADJUDICATOR, ADMIN)
def contrast_set_freeze(request: HttpRequest, pk: int) -> HttpResponse:
    pair_set = _set_or_404(pk)
    try:
        pair_set_freeze(user=request.user, pair_set=pair_set)
    except ContrastError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("%(set)s is frozen.") % {"set": pair_set.spec})
    return redirect("contrast_set", pk)


@require_POST
@require_role(ADJUDICATOR, ADMIN)
def contrast_set_new_version(request: HttpRequest, pk: int) -> HttpResponse:
    pair_set = _set_or_404(pk)
    try:
        fresh = pair_set_new_version(user=request.user, pair_set=pair_set)
    except ContrastError as error:
        messages.error(request, str(error))
        return redirect("contrast_set", pk)
    messages.success(
        request,
        _("%(set)s is open, with the pairs of v%(version)s.")
        % {"set": fresh.spec, "version": pair_set.version},
    )
    return redirect("contrast_set", fresh.pk)


@require_role(ADJUDICATOR, ADMIN)
def contrast_scores(request: HttpRequest, pk: int) -> HttpResponse:
    """Every parser's scores on the set (``?parser=`` one of them): the fragment for htmx, the
    page without it. A parser that cannot run is listed with its reason."""
    pair_set = _set_or_404(pk)
    query = ScoresQuery(request.GET)
    if not query.is_valid():
        return refused_query(request, query, csv=bool(request.htmx))  # a fragment: one plain line
    chosen = query.cleaned_data["parser"]
    rule_set = active_rule_set()
    context = {
        "set": pair_set,
        "scores": score_set(pair_set, choices=[chosen] if chosen else None, rule_set=rule_set),
        "rule_set": rule_set,
    }
    template = "contrasts/_scores.html" if request.htmx else "contrasts/scores.html"
    return render(request, template, context)


@require_role(ADJUDICATOR, ADMIN)
def contrast_split(request: HttpRequest, pk: int) -> HttpResponse:
    """The set as the corpus's contrast split: JSONL in the counterfactual benchmark's format."""
    pair_set = _set_or_404(pk)
    response = HttpResponse(contrast_jsonl(pair_set), content_type="application/jsonl; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="contrast-{pair_set.name}-v{pair_set.version}.jsonl"'
    )
    return response
