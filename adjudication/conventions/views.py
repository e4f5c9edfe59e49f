"""Adjudicators' pages for conventions: the list, one convention with its votes, and the acts on
it (vote, apply, revise, withdraw). Everyone with the adjudicator or admin role reads them; only
adjudicators act."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from adjudication.agreement.analysis import item_texts
from adjudication.conventions.forms import ProposeForm, ReviseForm
from adjudication.forms import VoteForm, form_problems
from adjudication.gold.selectors import gold_awaiting
from adjudication.gold.services import (
    PREVIEW_SIZE,
    AdjudicationError,
    acceptance_rule,
    convention_apply,
    convention_matches,
    convention_propose,
    convention_revise,
    convention_vote,
    convention_withdraw,
)
from adjudication.models import Convention, Vote
from annotator.roles import ADJUDICATOR, ADMIN, has_role, require_role
from annotator.views import guideline_slots

PAGE_SIZE = 50


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
            return HttpResponse(_("only adjudicators propose conventions"), status=403)
        if form.is_valid():
            data = form.cleaned_data
            source = form.source()
            try:
                convention = convention_propose(
                    user=request.user, round_=data["round"], slot=data["slot"], value_a=data["value_a"],
                    value_b=data["value_b"], chosen=data["chosen"], rule=data["rule"], source=source,
                )  # fmt: skip
            except AdjudicationError as error:
                form.add_error(None, str(error))
                status = 400
            else:
                quorum = acceptance_rule()[0]
                messages.success(
                    request,
                    _(
                        "%(convention)s proposed; it is decided once %(quorum)s adjudicators have voted "
                        "(you may vote too)."
                    )
                    % {"convention": convention.label, "quorum": quorum},
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
    request: HttpRequest,
    convention: Convention,
    *,
    vote_error: str = "",
    revise_error: str = "",
    status: int = 200,
) -> HttpResponse:
    votes = Vote.objects.filter(convention=convention).select_related("adjudicator").order_by("created_at")
    live = convention.status in ("accepted", "proposed")
    # read only: records not yet opened are counted and offered as a button, not opened here
    matches = convention_matches(convention) if live else []
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
        "revise_error": revise_error,
        "round": convention.round,
        "awaiting": gold_awaiting(convention.round) if live else 0,
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
    form = VoteForm(request.POST)
    if not form.is_valid():
        convention = get_object_or_404(
            Convention.objects.select_related("proposer", "round"), pk=convention_id
        )
        return _convention_page(request, convention, vote_error=form_problems(form), status=400)

    def vote(convention: Convention) -> str:
        approve = form.cleaned_data["approve"] == "yes"
        after = convention_vote(
            user=request.user, convention=convention, approve=approve, comment=form.cleaned_data["comment"]
        )
        return _("Vote recorded; %(convention)s is %(status)s.") % {
            "convention": after.label,
            "status": _(after.status),
        }

    return _act(request, convention_id, vote)


@require_POST
@require_role(ADJUDICATOR)
def convention_apply_view(request: HttpRequest, convention_id: int) -> HttpResponse:
    def apply(convention: Convention) -> str:
        n = convention_apply(user=request.user, convention=convention)
        return ngettext(
            "%(convention)s applied: %(n)s item settled.", "%(convention)s applied: %(n)s items settled.", n
        ) % {"convention": convention.label, "n": n}

    return _act(request, convention_id, apply)


@require_POST
@require_role(ADJUDICATOR)
def convention_revise_view(request: HttpRequest, convention_id: int) -> HttpResponse:
    convention = get_object_or_404(Convention.objects.select_related("proposer", "round"), pk=convention_id)
    form = ReviseForm(request.POST, convention=convention)
    if not form.is_valid():
        return _convention_page(request, convention, revise_error=form_problems(form), status=400)
    try:
        revision = convention_revise(
            user=request.user, convention=convention, chosen=form.cleaned_data["chosen"],
            rule=form.cleaned_data["rule"],
        )  # fmt: skip
    except AdjudicationError as error:
        return _convention_page(request, convention, revise_error=str(error), status=400)
    messages.success(
        request,
        _("%(convention)s proposed; items settled by earlier versions are marked for review.")
        % {"convention": revision.label},
    )
    return redirect("convention", revision.pk)


@require_POST
@require_role(ADJUDICATOR)
def convention_withdraw_view(request: HttpRequest, convention_id: int) -> HttpResponse:
    def withdraw(convention: Convention) -> str:
        withdrawn = convention_withdraw(user=request.user, convention=convention)
        return _("%(convention)s withdrawn.") % {"convention": withdrawn.label}

    return _act(request, convention_id, withdraw)


@login_required
@require_GET
def guidelines(request: HttpRequest) -> HttpResponse:
    """The annotation guidelines, every role's page: each slot's help and values (annotator's), then
    the conventions adjudicators have accepted, which join them."""
    conventions = Convention.objects.filter(status=Convention.Status.ACCEPTED).order_by("number")
    return render(
        request, "annotator/guidelines.html", {"slots": guideline_slots(), "conventions": conventions}
    )
