"""The annotator's workspace: queue, annotation page, live preview, skip, history."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

import nsmcore
from annotator.annotation_form import KEYS, slot_groups
from annotator.forms import AnnotationValuesForm, DraftForm, SkippedQuery, SubmitForm
from annotator.models import FLAGS, SLOT_FIELDS, Annotation, Assignment
from annotator.selectors import (
    annotation_of,
    assignment_for_user,
    draft_to_restore,
    neighbours,
    next_assignment,
    prefill_of,
    queue_for_user,
    round_for_user,
    round_items_for_user,
    round_progress,
    round_status_counts,
)
from annotator.services import (
    TEXT_MAX_CHARS,
    AnnotationInvalid,
    StaleSave,
    annotation_submit,
    assignment_skip,
    assignment_unskip,
    draft_discard,
    draft_save,
)
from annotator.signals import annotation_submitted
from nsmcore.schema import SLOTS
from rules.rulesets import active_rule_set

DEFAULTS: dict[str, str] = {slot.name: slot.default for slot in SLOTS}
# what an annotator calls each status of their items
STATUS_NAMES: dict[str, str] = {
    "done": gettext_lazy("done"),
    "skipped": gettext_lazy("skipped"),
    "pending": gettext_lazy("to do"),
}


@login_required
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    return render(request, "annotator/queue.html", {"rows": queue_for_user(request.user)})


@login_required
@require_GET
def round_next(request: HttpRequest, round_id: int) -> HttpResponse:
    """Resume a round: the first pending item in the annotator's queue (404 for a round with no
    item of theirs, as its items page)."""
    round_for_user(request.user, round_id)
    assignment = next_assignment(request.user, round_id)
    if assignment is None:
        messages.success(request, _("Nothing left to annotate in that round."))
        return redirect("queue")
    return redirect("annotate", assignment_id=assignment.pk)


def _page(
    request: HttpRequest,
    assignment: Assignment,
    *,
    values: dict[str, Any] | None = None,
    errors: dict[str, Any] | None = None,
    saved: Annotation | None = None,
    base_version: int | None = None,
    skipped: Assignment | None = None,
    status: int = 200,
) -> HttpResponse:
    """The annotation page. ``saved`` is the newer version that refused a stale save: it is shown
    beside the annotator's values, and the form keeps ``base_version`` (the version it was loaded
    at) so that a plain submit stays refused until the annotator chooses to replace it.
    ``skipped`` is the item skipped just before, offered back."""
    round_ = assignment.round
    prefill = prefill_of(assignment)
    annotation = saved or annotation_of(assignment)
    draft = draft_to_restore(assignment, annotation) if values is None else None
    if draft is not None:  # what was chosen and not saved, restored (the page says so)
        values = {**draft.values, "flags": list(draft.values.get("flags", []))}
    if values is None:
        if annotation is not None:
            values = {**annotation.slots(), "residue": annotation.residue, "notes": annotation.notes}
            values["flags"] = annotation.flags
        else:
            # Prefilled rounds start at the parser's values, blind ones at the schema defaults.
            values = {**DEFAULTS, **(prefill or {}), "residue": "", "notes": "", "flags": []}
    done, assigned, place = round_progress(request.user, round_.pk, position=assignment.position)
    previous, following = neighbours(assignment)
    context = {
        "assignment": assignment,
        "round": round_,
        "text": assignment.item.text_for(round_.text_field),
        "groups": slot_groups(values, prefill),
        "values": values,
        "flags": [(f, f in values.get("flags", [])) for f in FLAGS],
        "prefilled": prefill is not None,
        "base_version": (annotation.version if annotation else 0) if base_version is None else base_version,
        "errors": errors or {},
        "text_max": TEXT_MAX_CHARS,
        "saved": saved,
        "current": annotation,  # the version on the server: a revisited done item says when it was saved
        "draft": draft,
        "skipped": skipped,
        "compare": _compare(saved, values) if saved else [],
        "keys": KEYS,
        "done": done,
        "assigned": assigned,
        "previous": previous,
        "following": following,
        "place": place,
        **_preview_context(round_, values),
    }
    return render(request, "annotator/annotate.html", context, status=status)


def _compare(saved: Annotation, values: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of (field, saved value, my value, differs) for every slot, the residue, the notes
    and the flags."""
    rows = [(name, getattr(saved, name), values.get(name, "")) for name in SLOT_FIELDS]
    rows += [(field, getattr(saved, field), values.get(field, "")) for field in ("residue", "notes")]
    mine_flags = [f for f in FLAGS if f in values.get("flags", [])]
    rows.append(("flags", ", ".join(f for f in FLAGS if f in saved.flags), ", ".join(mine_flags)))
    return [
        {"field": field, "saved": theirs, "mine": mine, "differs": theirs.strip() != mine.strip()}
        for field, theirs, mine in rows
    ]


def _preview_context(round_: Any, values: dict[str, Any]) -> dict[str, Any]:
    obj = {name: values[name] for name in SLOT_FIELDS if values.get(name)} | {
        "residue": values.get("residue", "")
    }
    explication, problems = nsmcore.check(obj)
    return {
        "lines": nsmcore.render(explication) if explication else [],
        "problems": problems,
        # Annotators see the label their slots route to only where the round allows it.
        "routing": nsmcore.route(obj, active_rule_set()) if round_.show_routed_label else None,
    }


@login_required
def annotate(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = assignment_for_user(request.user, assignment_id)
    if request.method == "GET":
        return _page(request, assignment, skipped=_skipped(request))
    if request.method != "POST":
        return HttpResponse(status=405)
    meta = SubmitForm(request.POST)
    values = meta.values()
    if not meta.is_valid():
        return _page(request, assignment, values=values, errors=meta.problems(), status=400)
    loaded_at = meta.cleaned_data["base_version"]
    replace = meta.cleaned_data["replace_version"]
    try:
        annotation = annotation_submit(
            assignment=assignment,
            user=request.user,
            values=values,
            # Only the explicit "Replace it with mine" overwrites the version it was shown.
            base_version=replace if replace is not None else loaded_at,
            time_spent_ms=meta.cleaned_data["time_spent_ms"] or 0,
        )
    except StaleSave as stale:
        if stale.current is None:  # a version that was never saved: nothing to compare with
            errors = {"base_version": {"message": str(stale)}}
            return _page(request, assignment, values=values, errors=errors, base_version=0, status=409)
        return _page(
            request, assignment, values=values, saved=stale.current, base_version=loaded_at, status=409
        )
    except AnnotationInvalid as invalid:
        errors = invalid.errors
        return _page(request, assignment, values=values, errors=errors, base_version=loaded_at, status=400)
    annotation_submitted.send(Annotation, assignment=assignment, annotation=annotation, request=request)
    if not annotation.changed:
        saved_at = timezone.localtime(annotation.updated_at)
        messages.info(
            request,
            _("No change: version %(version)s is kept (saved %(at)s).")
            % {"version": annotation.version, "at": f"{saved_at:%H:%M}"},
        )
    following = next_assignment(request.user, assignment.round_id, after=assignment.position)
    if following is None:
        messages.success(
            request, _("Round %(name)s: every item is done. Thank you!") % {"name": assignment.round.name}
        )
        return redirect("queue")
    return redirect("annotate", assignment_id=following.pk)


@login_required
@require_POST
def draft(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Keep the page's unsaved values (sent as the annotator works): 204, or 400 naming a bad one."""
    assignment = assignment_for_user(request.user, assignment_id)
    form = DraftForm(request.POST)
    if not form.is_valid():
        return HttpResponse("; ".join(f"{k}: {v}" for k, v in form.problems().items()), status=400)
    draft_save(
        assignment=assignment, user=request.user, values=form.values(),
        base_version=form.cleaned_data["base_version"],
    )  # fmt: skip
    return HttpResponse(status=204)


@login_required
@require_POST
def draft_discard_view(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Forget the unsaved draft and show the item as saved (or as it starts)."""
    assignment = assignment_for_user(request.user, assignment_id)
    draft_discard(assignment=assignment, user=request.user)
    messages.info(request, _("Draft discarded."))
    return redirect("annotate", assignment_id=assignment.pk)


@login_required
@require_POST
def preview(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = assignment_for_user(request.user, assignment_id)
    form = AnnotationValuesForm(request.POST)
    if not form.is_valid():
        return HttpResponse("; ".join(f"{k}: {v}" for k, v in form.problems().items()), status=400)
    context = _preview_context(assignment.round, form.values())
    return render(request, "annotator/_annotate_preview.html", context)


@login_required
@require_POST
def skip(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = assignment_for_user(request.user, assignment_id)
    assignment_skip(assignment=assignment, user=request.user)
    following = next_assignment(request.user, assignment.round_id, after=assignment.position)
    if following is None or following.pk == assignment.pk:
        messages.info(request, _("No other pending item in this round."))
        return redirect("queue")
    # the next page offers to take the skip back
    return redirect(f"{reverse('annotate', args=[following.pk])}?skipped={assignment.pk}")


@login_required
@require_POST
def unskip(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Take a skip back (from the notice after it) and open the item again."""
    assignment = assignment_for_user(request.user, assignment_id)
    if not assignment_unskip(assignment=assignment, user=request.user):
        messages.info(request, _("That item is not skipped (any more)."))
    return redirect("annotate", assignment_id=assignment.pk)


def _skipped(request: HttpRequest) -> Assignment | None:
    """The item just skipped (?skipped=ID, the user's own and still skipped), for the undo notice."""
    query = SkippedQuery(request.GET)
    if not query.is_valid() or query.cleaned_data["skipped"] is None:
        return None
    return (
        Assignment.objects.filter(
            pk=query.cleaned_data["skipped"], annotator=request.user, status=Assignment.Status.SKIPPED
        )
        .select_related("item")
        .first()
    )


@login_required
@require_GET
def history(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = assignment_for_user(request.user, assignment_id)
    annotation = annotation_of(assignment)
    revisions = list(annotation.revisions.all()) if annotation else []
    return render(request, "annotator/history.html", {"assignment": assignment, "revisions": revisions})


class ItemFilter(forms.Form):
    status = forms.ChoiceField(
        choices=[("", gettext_lazy("all")), *((s.value, STATUS_NAMES[s.value]) for s in Assignment.Status)],
        required=False,
    )


@login_required
@require_GET
def round_items(request: HttpRequest, round_id: int) -> HttpResponse:
    """The annotator's own items in a round (done, skipped, to do), filterable by status; htmx
    swaps the list alone when the filter changes."""
    round_ = round_for_user(request.user, round_id)
    filters = ItemFilter(request.GET)
    valid = filters.is_valid()
    status = filters.cleaned_data["status"] if valid else ""
    mine = round_items_for_user(request.user, round_, status=status) if valid else []
    rows = [(a, a.item.text_for(round_.text_field), STATUS_NAMES[a.status]) for a in mine]
    context = {
        "round": round_,
        "filters": filters,
        "rows": rows,
        "counts": round_status_counts(request.user, round_),
    }
    template = "annotator/_round_items.html" if request.htmx else "annotator/round_items.html"
    return render(request, template, context, status=200 if valid else 400)
