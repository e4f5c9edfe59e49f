"""Adjudicators' pages for conventions and gold. Everyone with the adjudicator or admin role reads
them; only adjudicators propose, vote, apply and resolve."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from adjudication.analytics import item_texts, round_analysis, round_submissions
from adjudication.audit import gold_audit_trail
from adjudication.gold import (
    AdjudicationError,
    acceptance_rule,
    convention_apply,
    convention_matches,
    convention_propose,
    convention_revise,
    convention_vote,
    convention_withdraw,
    gold_resolve,
    gold_sync,
)
from adjudication.gold_preview import gold_preview
from adjudication.models import Convention, GoldConstrual, GoldItem, Vote
from annotator.models import Annotation, Round
from annotator.roles import ADJUDICATOR, ADMIN, has_role, require_role
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES, SLOTS

PAGE_SIZE = 50
PREVIEW_SIZE = 200  # matches a convention's page lists (the count covers them all)


class ProposeForm(forms.Form):
    """A convention's dispute, picked from lists: the twelve slots, and the values of the chosen
    slot (the page swaps those in with htmx when the slot changes). A value outside the slot's set
    is refused here, naming it and the allowed ones."""

    VALUE_FIELDS = ("value_a", "value_b", "chosen")

    round = forms.ModelChoiceField(Round.objects.order_by("name"))
    slot = forms.ChoiceField(choices=[("", "choose a slot…")] + [(s, s) for s in SLOT_NAMES])
    value_a = forms.ChoiceField(label="one value")
    value_b = forms.ChoiceField(label="the other value")
    chosen = forms.ChoiceField(
        label="the slot takes",
        help_text="one of the two values",
        error_messages={"required": "the slot takes: choose one of the two values"},
    )
    rule = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), help_text="the convention in words")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        slot = (self.data if self.is_bound else self.initial).get("slot", "")
        values = SLOT_BY_NAME[slot].values if slot in SLOT_BY_NAME else ()
        self.fields["slot"].widget.attrs.update(
            {"hx-get": reverse("conventions"), "hx-trigger": "change", "hx-target": "#convention-values",
             "hx-swap": "outerHTML"}
        )  # fmt: skip
        # no slot yet: every slot's values, grouped, so that the page works without JavaScript
        listed = [(v, v) for v in values] or [(s.name, [(v, v) for v in s.values]) for s in SLOTS]
        for name in self.VALUE_FIELDS:
            field = self.fields[name]
            field.choices = [("", "choose…"), *listed]
            if values:
                field.error_messages["invalid_choice"] = (
                    f"%(value)s is not a value of {slot}; allowed: {', '.join(values)}"
                )


@require_role(ADJUDICATOR, ADMIN)
def conventions(request: HttpRequest) -> HttpResponse:
    # a link fills in the dispute, never the answer: the adjudicator chooses the value the slot takes
    initial = {k: request.GET[k] for k in ("round", "slot", "value_a", "value_b") if k in request.GET}
    form = ProposeForm(request.POST or None, initial=initial)
    if request.method == "GET" and request.htmx and request.htmx.target == "convention-values":
        return render(request, "adjudication/_convention_values.html", {"form": form})
    status = 200
    if request.method == "POST":
        if not has_role(request.user, ADJUDICATOR):
            return HttpResponse("only adjudicators propose conventions", status=403)
        if form.is_valid():
            data = form.cleaned_data
            source = {k: request.POST[k] for k in ("from", "item") if request.POST.get(k)}
            try:
                convention = convention_propose(
                    user=request.user, round_=data["round"], slot=data["slot"], value_a=data["value_a"],
                    value_b=data["value_b"], chosen=data["chosen"], rule=data["rule"], source=source,
                )  # fmt: skip
            except AdjudicationError as error:
                form.add_error(None, str(error))
                status = 400
            else:
                messages.success(
                    request, f"{convention.label} proposed; it needs the votes of other adjudicators."
                )
                return redirect("convention", convention.pk)
        else:
            status = 400
    rows = Convention.objects.select_related("proposer", "round").prefetch_related("votes")
    quorum, majority = acceptance_rule()
    context = {
        "form": form,
        "conventions": rows,
        "quorum": quorum,
        "majority": majority,
        "source": request.GET,
    }
    return render(request, "adjudication/conventions.html", context, status=status)


@require_role(ADJUDICATOR, ADMIN)
def convention_detail(request: HttpRequest, convention_id: int) -> HttpResponse:
    convention = get_object_or_404(Convention.objects.select_related("proposer", "round"), pk=convention_id)
    return _convention_page(request, convention)


def _convention_page(
    request: HttpRequest, convention: Convention, *, vote_error: str = "", status: int = 200
) -> HttpResponse:
    votes = Vote.objects.filter(convention=convention).select_related("adjudicator").order_by("created_at")
    matches = convention_matches(convention) if convention.status in ("accepted", "proposed") else []
    shown = matches[:PREVIEW_SIZE]
    texts = item_texts(item_ids=[m.item_id for m in shown], text_field=convention.round.text_field)
    quorum, majority = acceptance_rule()
    context = {
        "convention": convention,
        "votes": votes,
        "voted": votes.filter(adjudicator=request.user).exists(),
        "can_act": has_role(request.user, ADJUDICATOR),
        "matches": [(m, texts.get(m.item_id, "")) for m in shown],
        "match_count": len(matches),
        "more": len(matches) - len(shown),
        "versions": Convention.objects.filter(number=convention.number).order_by("-version"),
        "quorum": quorum,
        "majority": majority,
        "vote_error": vote_error,
    }
    return render(request, "adjudication/convention.html", context, status=status)


def _act(request: HttpRequest, convention_id: int, action) -> HttpResponse:
    convention = get_object_or_404(Convention, pk=convention_id)
    try:
        message = action(convention)
    except AdjudicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, message)
    return redirect("convention", convention_id)


@require_POST
@require_role(ADJUDICATOR)
def convention_vote_view(request: HttpRequest, convention_id: int) -> HttpResponse:
    answer = request.POST.get("approve", "")
    if answer not in ("yes", "no"):
        convention = get_object_or_404(
            Convention.objects.select_related("proposer", "round"), pk=convention_id
        )
        return _convention_page(
            request, convention, vote_error="approve: choose approve or reject", status=400
        )

    def vote(convention: Convention) -> str:
        approve = answer == "yes"
        after = convention_vote(
            user=request.user, convention=convention, approve=approve, comment=request.POST.get("comment", "")
        )
        return f"Vote recorded; {after.label} is {after.status}."

    return _act(request, convention_id, vote)


@require_POST
@require_role(ADJUDICATOR)
def convention_apply_view(request: HttpRequest, convention_id: int) -> HttpResponse:
    def apply(convention: Convention) -> str:
        n = convention_apply(user=request.user, convention=convention)
        return f"{convention.label} applied: {n} item{'s' if n != 1 else ''} settled."

    return _act(request, convention_id, apply)


@require_POST
@require_role(ADJUDICATOR)
def convention_revise_view(request: HttpRequest, convention_id: int) -> HttpResponse:
    convention = get_object_or_404(Convention, pk=convention_id)
    try:
        revision = convention_revise(
            user=request.user, convention=convention, chosen=request.POST.get("chosen", ""),
            rule=request.POST.get("rule", ""),
        )  # fmt: skip
    except AdjudicationError as error:
        messages.error(request, str(error))
        return redirect("convention", convention_id)
    messages.success(
        request, f"{revision.label} proposed; items settled by earlier versions are marked for review."
    )
    return redirect("convention", revision.pk)


@require_POST
@require_role(ADJUDICATOR)
def convention_withdraw_view(request: HttpRequest, convention_id: int) -> HttpResponse:
    def withdraw(convention: Convention) -> str:
        return f"{convention_withdraw(user=request.user, convention=convention).label} withdrawn."

    return _act(request, convention_id, withdraw)


@require_role(ADJUDICATOR, ADMIN)
def gold_list(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = get_object_or_404(Round, pk=round_id)
    gold_sync(round_)
    rows = GoldItem.objects.filter(round=round_).select_related("item").prefetch_related("construals")
    status, label, source = (
        request.GET.get("status", ""),
        request.GET.get("label", ""),
        request.GET.get("source", ""),
    )
    total = rows.count()
    resolved = rows.filter(status=GoldItem.Status.RESOLVED).count()
    if status == "review":
        rows = rows.filter(needs_review=True)
    elif status in ("open", "resolved"):
        rows = rows.filter(status=status)
    if label:
        rows = rows.filter(construals__index=1, construals__label=label)
    records = []
    for gold in rows.order_by("item__source_id"):
        construals = list(gold.construals.all())
        sources = {p.get("source") for c in construals for p in c.provenance.values()}
        if source and source not in sources:
            continue
        records.append({"gold": gold, "construals": construals, "sources": sorted(sources)})
    page = Paginator(records, PAGE_SIZE).get_page(request.GET.get("page"))
    # ordered by label: the model's own ordering (index) would join the DISTINCT and repeat labels
    labels = list(
        GoldConstrual.objects.filter(gold__round=round_)
        .exclude(label="")
        .order_by("label")
        .values_list("label", flat=True)
        .distinct()
    )
    context = {
        "round": round_,
        "page": page,
        "total": total,
        "resolved": resolved,
        "percent": int(100 * resolved / total) if total else 0,
        "status": status,
        "label": label,
        "source": source,
        "labels": labels,
        "slots": SLOT_NAMES,
        "submissions": None if round_analysis(round_).data.coders else round_submissions(round_),
    }
    return render(request, "adjudication/gold_list.html", context)


def _posted_slots(request: HttpRequest) -> tuple[dict[str, str], dict[str, str] | None]:
    """The slots the resolve form sets (an empty choice keeps the current value) and, when two
    construals are kept, the second's (an empty choice: the same as the first)."""
    values = {name: request.POST[name] for name in SLOT_NAMES if request.POST.get(name)}
    if not request.POST.get("two_construals"):
        return values, None
    second = {
        name: request.POST[f"second_{name}"] for name in SLOT_NAMES if request.POST.get(f"second_{name}")
    }
    return values, second


@require_POST
@require_role(ADJUDICATOR)
def gold_preview_view(request: HttpRequest, round_id: int, item_id: int) -> HttpResponse:
    """The resolve form's construals rendered and routed as they stand, unsaved (htmx fragment)."""
    gold = get_object_or_404(GoldItem, round_id=round_id, item_id=item_id)
    stored = gold.construals.get(index=1)
    values, second = _posted_slots(request)
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
    gold_sync(round_)
    gold = get_object_or_404(GoldItem.objects.select_related("item"), round=round_, item_id=item_id)
    if request.method == "POST":
        if not has_role(request.user, ADJUDICATOR):
            return HttpResponse("only adjudicators resolve items", status=403)
        values, second = _posted_slots(request)
        try:
            gold_resolve(
                user=request.user, gold=gold, values=values, second=second, why=request.POST.get("why", "")
            )
        except AdjudicationError as error:
            return _gold_page(request, round_, gold, error=str(error), status=400)
        messages.success(request, f"{gold.item.source_id} resolved.")
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
    rows = []
    for slot in SLOTS:
        given = [getattr(a, slot.name) for a in annotations]
        rows.append(
            {
                "slot": slot.name,
                "values": given,
                "choices": slot.values,
                "current": first.slots.get(slot.name),
                "second": second.slots.get(slot.name) if second else None,
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
        "rows": rows,
        "construals": construals,
        "changes": gold_audit_trail(gold),
        "preview": preview,
        "can_act": has_role(request.user, ADJUDICATOR),
        "error": error,
        "why": request.POST.get("why", "") if error else "",
    }
    return render(request, "adjudication/gold_item.html", context, status=status)
