"""Rule revision pages: propose (edit the active rules or upload a file), read a version's
regression report and its label changes on gold and on a pass, vote, activate, roll back.

Adjudicators and admins read and propose; adjudicators vote (and put an earlier version to the
vote again); admins activate at once."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from adjudication.forms import VoteForm, form_problems, refused_query
from adjudication.gold.services import acceptance_rule
from adjudication.rule_revisions.forms import RevisionQuery
from adjudication.rule_revisions.services import (
    CHANGES_SHOWN,
    RevisionError,
    blocker,
    pass_names,
    revision_activate,
    revision_comparison,
    revision_propose,
    revision_reopen,
    revision_vote,
    revision_withdraw,
)
from annotator.roles import ADJUDICATOR, ADMIN, has_role, require_role
from nsmcore.mapper import RuleSetError
from nsmcore.schema import SLOTS
from rules.forms import EditRulesForm, UploadRulesForm
from rules.models import RuleSetActivation, RuleSetVersion
from rules.rulesets import active_rule_set, rule_set_from_document


@require_role(ADJUDICATOR, ADMIN)
def rule_revision_new(request: HttpRequest) -> HttpResponse:
    """GET: the forms. POST ``which=edit`` or ``which=upload``: a proposal, or 400 naming the problem."""
    rule_set = active_rule_set()
    which = request.POST.get("which", "edit") if request.method == "POST" else ""
    posted = request.method == "POST"
    edit = EditRulesForm(request.POST if posted and which == "edit" else None, rule_set=rule_set)
    upload = UploadRulesForm(
        request.POST if posted and which == "upload" else None,
        request.FILES if posted and which == "upload" else None,
    )
    error, status = "", 200
    if posted:
        form = upload if which == "upload" else edit
        if not form.is_valid():
            error, status = form_problems(form), 400
        else:
            data = form.cleaned_data
            try:
                version = revision_propose(
                    user=request.user, document=form.document(), version=data["version"],
                    note=data["note"], pilot_item_set=data["pilot_item_set"],
                )  # fmt: skip
            except (RuleSetError, RevisionError) as problem:
                error, status = str(problem), 400
            else:
                if version.suite_ok:
                    done = _("v%(version)s proposed: it passes the regression suite.")
                else:
                    done = _("v%(version)s proposed: it fails the regression suite.")
                messages.success(request, done % {"version": version.version})
                return redirect("rule_revision", version.version)
    context = {
        "rule_set": rule_set,
        "edit": edit,
        "upload": upload,
        "which": which,
        "error": error,
        "slots": SLOTS,
        "pilot_default": settings.NSM_PILOT_ITEM_SET,
    }
    return render(request, "adjudication/rule_revision_new.html", context, status=status)


def _rule_rows(version: RuleSetVersion) -> list[dict]:
    active = {r.emotion: (k, r.as_dict()["conditions"]) for k, r in enumerate(active_rule_set().rules)}
    rows = []
    for k, rule in enumerate(rule_set_from_document(version.document).rules):
        conditions = rule.as_dict()["conditions"]
        before = active.get(rule.emotion)
        rows.append(
            {
                "index": k,
                "emotion": rule.emotion,
                "conditions": [(s.name, conditions[s.name]) for s in SLOTS if s.name in conditions],
                "moved": before is not None and before[0] != k,
                "was": before[0] if before else None,
                "edited": before is None or before[1] != conditions,
            }
        )
    return rows


@require_role(ADJUDICATOR, ADMIN)
def rule_revision(
    request: HttpRequest, version: str, *, vote_error: str = "", status: int = 200
) -> HttpResponse:
    """A version: its rules (marked where they differ from the active version), the regression
    report, accuracy on gold and on a chosen pass under both versions, the label changes, votes."""
    row = get_object_or_404(RuleSetVersion.objects.select_related("created_by", "parent"), version=version)
    passes = pass_names()
    query = RevisionQuery(request.GET, passes=passes)
    if not query.is_valid():
        return refused_query(request, query)
    chosen = query.cleaned_data["pass"]
    comparison = revision_comparison(version=row, parser=chosen)
    votes = row.votes.filter(ballot=row.ballot).select_related("adjudicator")
    quorum, majority = acceptance_rule()
    context = {
        "v": row,
        "rules": _rule_rows(row),
        "report": row.report,
        "checks": _check_tables(row.report.get("checks") or []),
        "comparison": comparison,
        "gold": comparison["gold"],
        "on_pass": comparison["pass"],
        "passes": passes,
        "chosen_pass": chosen,
        "shown": CHANGES_SHOWN,
        "blocker": blocker(row),
        "votes": votes,
        "voted": votes.filter(adjudicator=request.user).exists(),
        "is_adjudicator": has_role(request.user, ADJUDICATOR),
        "is_admin": has_role(request.user, ADMIN),
        "quorum": quorum,
        "majority": majority,
        "vote_error": vote_error,
        "activations": row.activations.select_related("by", "previous"),
    }
    return render(request, "adjudication/rule_revision.html", context, status=status)


def _version_or_404(version: str) -> RuleSetVersion:
    return get_object_or_404(RuleSetVersion, version=version)


@require_POST
@require_role(ADJUDICATOR)
def rule_revision_vote(request: HttpRequest, version: str) -> HttpResponse:
    row = _version_or_404(version)
    form = VoteForm(request.POST)
    if not form.is_valid():
        return rule_revision(request, version, vote_error=form_problems(form), status=400)
    try:
        row = revision_vote(
            user=request.user, version=row, approve=form.cleaned_data["approve"] == "yes",
            comment=form.cleaned_data["comment"],
        )  # fmt: skip
    except RevisionError as error:
        return rule_revision(request, version, vote_error=str(error), status=400)
    messages.success(
        request,
        _("Vote recorded: v%(version)s is %(status)s.") % {"version": row.version, "status": _(row.status)},
    )
    return redirect("rule_revision", version)


def _act(request: HttpRequest, version: str, action) -> HttpResponse:
    row = _version_or_404(version)
    try:
        message = action(row)
    except RevisionError as error:
        messages.error(request, str(error))
        return redirect("rule_revision", version)
    messages.success(request, message)
    return redirect("rule_revision", version)


@require_POST
@require_role(ADMIN)
def rule_revision_activate(request: HttpRequest, version: str) -> HttpResponse:
    """An admin activates at once (a retired version: a rollback)."""

    def activate(row: RuleSetVersion) -> str:
        a = revision_activate(user=request.user, version=row, how=RuleSetActivation.How.ADMIN)
        return _(
            "v%(version)s is active: %(rerouted)s gold construals routed again, %(changed)s changed label."
        ) % {
            "version": row.version,
            "rerouted": a.rerouted,
            "changed": a.changed,
        }

    return _act(request, version, activate)


@require_POST
@require_role(ADJUDICATOR)
def rule_revision_reopen(request: HttpRequest, version: str) -> HttpResponse:
    def reopen(row: RuleSetVersion) -> str:
        revision_reopen(user=request.user, version=row)
        return _("v%(version)s is put to the vote again.") % {"version": row.version}

    return _act(request, version, reopen)


@require_POST
@require_role(ADJUDICATOR, ADMIN)
def rule_revision_withdraw(request: HttpRequest, version: str) -> HttpResponse:
    def withdraw(row: RuleSetVersion) -> str:
        if row.created_by_id != request.user.pk and not has_role(request.user, ADMIN):
            raise RevisionError(_("only the proposer or an admin can withdraw a proposal"))
        revision_withdraw(user=request.user, version=row)
        return _("v%(version)s withdrawn.") % {"version": row.version}

    return _act(request, version, withdraw)


def _check_tables(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The report's registered checks (rules.revision_checks) as tables: each heading and title
    translated here (they are stored in English), each row's cells in its columns' order."""
    return [
        {
            "name": c.get("name", ""),
            "title": _(c.get("title", "")),
            "error": c.get("error", ""),
            "headings": [_(heading) for _key, heading in c.get("columns", [])],
            "rows": [
                {
                    "cells": [row.get(key, "") for key, _heading in c.get("columns", [])],
                    "url": row.get("url", ""),
                }
                for row in c.get("rows", [])
            ],
        }
        for c in checks
    ]
