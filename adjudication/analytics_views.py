"""Adjudicators' pages: a round's agreement dashboard, conflicts, one item side by side, flows
between passes and anchoring. Every table downloads as CSV (``?format=csv``)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from adjudication.analytics import (
    Pass,
    anchoring,
    arms,
    blind_controls,
    conflict_rows,
    describe_rows,
    pass_compare,
    passes_for,
    round_analysis,
    round_submissions,
)
from adjudication.downloads import csv_response
from adjudication.gold_selectors import gold_awaiting
from adjudication.models import GoldItem
from annotator.models import Annotation, Assignment, Item, Round
from annotator.roles import ADJUDICATOR, ADMIN, require_role
from nsmcore.agreement import AgreementReport
from nsmcore.charts import Interval, interval_chart
from nsmcore.schema import SLOT_NAMES, SLOTS

PAGE_SIZE = 50
CONTROL_NEEDED = (
    "A blind control needs a blind round over the same items, annotated by other annotators "
    "(with no prefill shown)"
)


def _levels(request: HttpRequest) -> dict[str, str]:
    return {"intensity": "ordinal"} if request.GET.get("intensity") == "ordinal" else {}


def _fmt(x: float | None) -> str:
    return "" if x is None else f"{x:.4f}"


def _chart(report: AgreementReport) -> dict[str, Any]:
    """Alpha per slot with its interval, as the charts module lays it out."""
    return interval_chart(
        [Interval(s.slot, s.alpha, s.ci_low, s.ci_high, s.degenerate) for s in report.slots]
    )


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def rounds(request: HttpRequest) -> HttpResponse:
    done = Count("assignments", filter=Q(assignments__status=Assignment.Status.DONE))
    rows = [
        {"round": r, "done": r.done, "total": r.total}
        for r in Round.objects.select_related("item_set")
        .annotate(done=done, total=Count("assignments"))
        .order_by("name")
    ]
    return render(request, "adjudication/rounds.html", {"rows": rows})


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def dashboard(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = get_object_or_404(Round, pk=round_id)
    analysis = round_analysis(round_, levels=_levels(request))
    report = analysis.report
    if request.GET.get("format") == "csv":
        header = ["slot", "level", "items", "pairs", "raw_agreement", "alpha", "ci_low", "ci_high",
                  "undefined", "majority_value", "majority_share", "degenerate"]  # fmt: skip
        rows = [
            [s.slot, s.level, s.items, s.pairs, _fmt(s.raw), _fmt(s.alpha), _fmt(s.ci_low), _fmt(s.ci_high),
             s.undefined, s.majority_value, _fmt(s.majority_share), s.degenerate]
            for s in report.slots
        ]  # fmt: skip
        return csv_response(f"agreement-{round_.name}.csv", header, rows)
    context = {
        "round": round_,
        "analysis": analysis,
        "report": report,
        "chart": _chart(report),
        "coders": analysis.data.coder_names,
        "ordinal": bool(analysis.levels),
        "submissions": None if analysis.data.coders else round_submissions(round_),
    }
    return render(request, "adjudication/dashboard.html", context)


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def conflict_list(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = get_object_or_404(Round, pk=round_id)
    analysis = round_analysis(round_)
    slot = request.GET.get("slot", "")
    if slot and slot not in SLOT_NAMES:
        raise Http404(f"no slot {slot!r}")
    values = SLOTS[SLOT_NAMES.index(slot)].values if slot else ()
    a = request.GET.get("a", "") if request.GET.get("a", "") in values else ""
    b = request.GET.get("b", "") if request.GET.get("b", "") in values else ""
    # filtered in Python on purpose: conflicts are rows of the round's in-memory analysis (numpy
    # arrays), not a queryset, so there is no database query to move the filter into
    matching = conflict_rows(analysis, slot=slot, a=a, b=b)
    coders = analysis.data.coder_names
    if request.GET.get("format") == "csv":
        described = describe_rows(analysis, matching)
        rows = [[c.item_id, c.source_id, name, *c.values[name]] for c in described for name in c.slots]
        return csv_response(f"conflicts-{round_.name}.csv", ["item_id", "source_id", "slot", *coders], rows)
    page = Paginator(matching, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "round": round_,
        "analysis": analysis,
        "page": page,
        "rows": describe_rows(analysis, list(page.object_list), text_field=round_.text_field),
        "coders": coders,
        "slot": slot,
        "a": a,
        "b": b,
        "slots": SLOT_NAMES,
        "values": values,
        "matching": len(matching),
        "query": request.GET.urlencode(),
        "submissions": None if coders else round_submissions(round_),
    }
    template = "adjudication/_conflicts.html" if request.htmx else "adjudication/conflicts.html"
    return render(request, template, context)


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def item_view(request: HttpRequest, round_id: int, item_id: int) -> HttpResponse:
    round_ = get_object_or_404(Round, pk=round_id)
    item = get_object_or_404(Item.objects.filter(assignments__round=round_).distinct(), pk=item_id)
    annotations = list(
        Annotation.objects.filter(assignment__round=round_, assignment__item=item, assignment__status="done")
        .select_related("assignment__annotator")
        .order_by("assignment__annotator__username")
    )
    has_gold = GoldItem.objects.filter(round=round_, item=item).exists()
    rows = []
    for slot in SLOTS:
        given = [getattr(a, slot.name) for a in annotations]
        distinct = sorted(set(given), key=slot.values.index)
        rows.append(
            {
                "slot": slot.name,
                "values": given,
                "differs": len(distinct) > 1,
                "pair": distinct if len(distinct) == 2 else None,  # a directional conflict
            }
        )
    context = {
        "round": round_,
        "item": item,
        "annotations": annotations,
        "rows": rows,
        "text": item.text_for(round_.text_field),
        "differing": sum(r["differs"] for r in rows),
        "has_gold": has_gold,
        "awaiting": 0 if has_gold else gold_awaiting(round_),
    }
    return render(request, "adjudication/item.html", context)


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def flow_table(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = get_object_or_404(Round, pk=round_id)
    passes = passes_for(round_)
    by_key = {p.key: p for p in passes}
    names = dict(get_user_model().objects.values_list("pk", "username"))
    own = [p for p in passes if p.round_id == round_.pk]
    default_a = own[0].key if own else ""
    default_b = own[1].key if len(own) > 1 else ""
    a: Pass | None = by_key.get(request.GET.get("a", default_a))
    b: Pass | None = by_key.get(request.GET.get("b", default_b))
    same = a is not None and a == b
    compared = pass_compare(a, b) if a and b and not same else None
    if same:
        problem = f"pass A and pass B are the same pass ({a.label(names)}): choose two different passes"
        if request.GET.get("format") == "csv":
            return HttpResponse(problem, status=400, content_type="text/plain; charset=utf-8")
    shared, found = (compared.items, compared.flows) if compared else (0, [])
    if request.GET.get("format") == "csv" and request.GET.get("table") == "agreement":
        report = compared.report if compared else None
        rows = [[s.slot, s.items, _fmt(s.raw), _fmt(s.alpha), _fmt(s.ci_low), _fmt(s.ci_high), s.undefined]
                for s in (report.slots if report else [])]  # fmt: skip
        header = ["slot", "items", "raw_agreement", "alpha", "ci_low", "ci_high", "undefined"]
        return csv_response(f"passes-{round_.name}.csv", header, rows)
    if request.GET.get("format") == "csv":
        rows = [[f.slot, f.a, f.b, f.count, _fmt(f.share_of_a)] for f in found]
        return csv_response(
            f"flows-{round_.name}.csv", ["slot", "value_in_a", "value_in_b", "count", "share_of_a"], rows
        )
    submissions = round_submissions(round_)
    context = {
        "round": round_,
        "submissions": submissions,
        "passes": [(p.key, p.label(names)) for p in passes],
        "a": a.key if a else "",
        "b": b.key if b else "",
        "a_label": a.label(names) if a else "",
        "b_label": b.label(names) if b else "",
        "shared": shared,
        "flows": found,
        "report": compared.report if compared else None,
        "problem": problem if same else "",
    }
    return render(request, "adjudication/flows.html", context, status=400 if same else 200)


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def anchoring_table(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = get_object_or_404(Round, pk=round_id)
    rows = anchoring(round_)
    analysis = round_analysis(round_)
    raw = {s.slot: s.raw for s in analysis.report.slots}
    controls = blind_controls(round_)
    control, problem = None, ""
    chosen = request.GET.get("control", "")
    if chosen:
        control = Round.objects.filter(pk=int(chosen)).first() if chosen.isdigit() else None
        if control is None:
            problem = f"there is no round {chosen!r} to compare with"
        elif not control.is_blind:
            problem = f"{control.name} is not a blind round: a control arm is annotated without prefill"
        elif not any(c.pk == control.pk for c, _ in controls):
            problem = f"{control.name} shares no submitted item with {round_.name}"
    if problem:
        if request.GET.get("format") == "csv":
            return HttpResponse(f"{problem}. {CONTROL_NEEDED}", status=400, content_type="text/plain")
        control = None
    arm = None
    if control is not None:
        shared, treated, blind = arms(round_, control)
        arm = {
            "control": control,
            "shared": shared,
            "rows": [
                (t.slot, t.alpha, c.alpha, t.undefined, c.undefined)
                for t, c in zip(treated.slots, blind.slots, strict=True)
            ],
            "treated_mean": treated.mean_alpha,
            "control_mean": blind.mean_alpha,
        }
    if request.GET.get("format") == "csv":
        header = ["annotator", "annotations_with_prefill", *SLOT_NAMES, "overall"]
        out = [
            [r.annotator, r.annotations, *[_fmt(r.kept[s]) for s in SLOT_NAMES], _fmt(r.overall)]
            for r in rows
        ]
        out.append(["raw agreement between annotators", "", *[_fmt(raw[s]) for s in SLOT_NAMES], ""])
        if arm:
            by_slot = {slot: (t, c) for slot, t, c, _, _ in arm["rows"]}
            out.append(
                [
                    f"alpha, prefilled ({round_.name})",
                    arm["shared"],
                    *[_fmt(by_slot[s][0]) for s in SLOT_NAMES],
                    "",
                ]
            )
            out.append(
                [
                    f"alpha, blind ({control.name})",
                    arm["shared"],
                    *[_fmt(by_slot[s][1]) for s in SLOT_NAMES],
                    "",
                ]
            )
        return csv_response(f"anchoring-{round_.name}.csv", header, out)
    context = {
        "round": round_,
        "rows": [(r, [r.kept[s] for s in SLOT_NAMES]) for r in rows],
        "raw": [raw[s] for s in SLOT_NAMES],
        "slots": SLOT_NAMES,
        "controls": controls,
        "arm": arm,
        "problem": problem,
        "control_needed": CONTROL_NEEDED,
        "submissions": None if analysis.data.coders else round_submissions(round_),
    }
    return render(request, "adjudication/anchoring.html", context, status=400 if problem else 200)
