"""Adjudicators' pages: a round's agreement dashboard, conflicts, one item side by side, flows
between passes and anchoring. Each page reads its query string through a form
(adjudication.agreement.forms: a bad value is a 400 naming it), and each table downloads as CSV
from a view of its own that reads the same form (``agreement.csv``, ``conflicts.csv``...)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from adjudication.agreement.analysis import (
    Pass,
    RoundAnalysis,
    anchoring,
    arms,
    blind_controls,
    conflicts_matching,
    describe_rows,
    pass_compare,
    passes_for,
    round_analysis,
    round_submissions,
)
from adjudication.agreement.forms import AgreementQuery, AnchoringQuery, ConflictQuery, FlowQuery
from adjudication.downloads import csv_response
from adjudication.forms import refused_query
from adjudication.gold.selectors import gold_awaiting
from adjudication.models import GoldItem
from annotator.csv_cells import fixed
from annotator.models import Annotation, Assignment, Item, Round
from annotator.roles import ADJUDICATOR, ADMIN, require_role
from nsmcore.agreement import MIN_MINORITY, AgreementReport
from nsmcore.charts import Interval, interval_chart
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES, SLOTS

PAGE_SIZE = 50
CONTROL_NEEDED = gettext_lazy(
    "A blind control needs a blind round over the same items, annotated by other annotators "
    "(with no prefill shown)"
)


def _fmt(x: float | None) -> Decimal | float | str:
    """A figure for a CSV: four places, and a number (a negative one is not quoted as text)."""
    return fixed(x, 4)


def _chart(report: AgreementReport) -> dict[str, Any]:
    """Alpha per slot with its interval, as the charts module lays it out."""
    return interval_chart(
        [Interval(s.slot, s.alpha, s.ci_low, s.ci_high, s.degenerate) for s in report.slots]
    )


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def rounds(request: HttpRequest) -> HttpResponse:
    done = Count(
        "assignments", filter=Q(assignments__status=Assignment.Status.DONE, assignments__control=False)
    )
    rows = [
        {"round": r, "done": r.done, "total": r.total}
        for r in Round.objects.select_related("item_set")
        .annotate(done=done, total=Count("assignments", filter=Q(assignments__control=False)))
        .order_by("name")
    ]
    return render(request, "adjudication/rounds.html", {"rows": rows})


def _agreement(request: HttpRequest, round_id: int) -> tuple[Round, AgreementQuery, RoundAnalysis | None]:
    round_ = get_object_or_404(Round, pk=round_id)
    query = AgreementQuery(request.GET)
    if not query.is_valid():
        return round_, query, None
    return (
        round_,
        query,
        round_analysis(round_, levels=query.levels(), item_set=query.cleaned_data["item_set"]),
    )


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def dashboard(request: HttpRequest, round_id: int) -> HttpResponse:
    round_, query, analysis = _agreement(request, round_id)
    if analysis is None:
        return refused_query(request, query)
    report = analysis.report
    context = {
        "round": round_,
        "analysis": analysis,
        "report": report,
        "min_minority": MIN_MINORITY,
        "chart": _chart(report),
        "coders": analysis.data.coder_names,
        "ordinal": bool(analysis.levels),
        "submissions": None if analysis.data.coders else round_submissions(round_),
        "subset": query.cleaned_data["item_set"],
    }
    return render(request, "adjudication/dashboard.html", context)


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def agreement_csv(request: HttpRequest, round_id: int) -> HttpResponse:
    round_, query, analysis = _agreement(request, round_id)
    if analysis is None:
        return refused_query(request, query, csv=True)
    header = ["slot", "level", "items", "pairs", "raw_agreement", "alpha", "ci_low", "ci_high",
              "undefined", "majority_value", "majority_share", "minority", "degenerate"]  # fmt: skip
    rows = [
        [s.slot, s.level, s.items, s.pairs, _fmt(s.raw), _fmt(s.alpha), _fmt(s.ci_low), _fmt(s.ci_high),
         s.undefined, s.majority_value, _fmt(s.majority_share), s.minority, s.degenerate]
        for s in analysis.report.slots
    ]  # fmt: skip
    return csv_response(f"agreement-{round_.name}.csv", header, rows)


def _conflicts(request: HttpRequest, round_id: int):
    """The round, its analysis, the query and the conflicts it selects (None when it is bad)."""
    round_ = get_object_or_404(Round, pk=round_id)
    query = ConflictQuery(request.GET)
    if not query.is_valid():
        return round_, None, query, None
    analysis = round_analysis(round_)
    q = query.cleaned_data
    # conflicts are rows of the round's in-memory analysis (numpy arrays), not a queryset: the slot
    # and values are filtered there, the search (q) in the database
    return round_, analysis, query, conflicts_matching(round_, analysis, q)


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def conflict_list(request: HttpRequest, round_id: int) -> HttpResponse:
    round_, analysis, query, matching = _conflicts(request, round_id)
    if matching is None:
        return refused_query(request, query)
    q = query.cleaned_data
    coders = analysis.data.coder_names
    page = Paginator(matching, PAGE_SIZE).get_page(q["page"])
    context = {
        "round": round_,
        "analysis": analysis,
        "page": page,
        "rows": describe_rows(analysis, list(page.object_list), text_field=round_.text_field),
        "coders": coders,
        "slot": q["slot"],
        "a": q["a"],
        "b": q["b"],
        "q": q["q"],
        "slots": SLOT_NAMES,
        "values": SLOT_BY_NAME[q["slot"]].values if q["slot"] else (),
        "matching": len(matching),
        "query": urlencode({k: v for k, v in q.items() if v and k != "page"}),
        "submissions": None if coders else round_submissions(round_),
    }
    template = "adjudication/_conflicts.html" if request.htmx else "adjudication/conflicts.html"
    return render(request, template, context)


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def conflicts_csv(request: HttpRequest, round_id: int) -> HttpResponse:
    round_, analysis, query, matching = _conflicts(request, round_id)
    if matching is None:
        return refused_query(request, query, csv=True)
    coders = analysis.data.coder_names
    described = describe_rows(analysis, matching)
    rows = [[c.item_id, c.source_id, name, *c.values[name]] for c in described for name in c.slots]
    return csv_response(f"conflicts-{round_.name}.csv", ["item_id", "source_id", "slot", *coders], rows)


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def item_view(request: HttpRequest, round_id: int, item_id: int) -> HttpResponse:
    round_ = get_object_or_404(Round, pk=round_id)
    item = get_object_or_404(
        Item.objects.filter(assignments__round=round_, assignments__control=False).distinct(), pk=item_id
    )
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


@dataclass
class _Flows:
    round: Round
    passes: list[tuple[str, str]]
    query: FlowQuery
    a: Pass | None = None
    b: Pass | None = None
    names: dict[int, str] | None = None
    problem: str = ""
    compared: Any = None


def _flows(request: HttpRequest, round_id: int) -> _Flows:
    round_ = get_object_or_404(Round, pk=round_id)
    passes = passes_for(round_)
    by_key = {p.key: p for p in passes}
    names = dict(get_user_model().objects.values_list("pk", "username"))
    own = [p.key for p in passes if p.round_id == round_.pk]
    defaults = (own[0] if own else "", own[1] if len(own) > 1 else "")
    query = FlowQuery(request.GET, passes=[(p.key, p.label(names)) for p in passes], defaults=defaults)
    out = _Flows(round_, [(p.key, p.label(names)) for p in passes], query, names=names)
    if not query.is_valid():
        return out
    out.a, out.b = by_key.get(query.cleaned_data["a"]), by_key.get(query.cleaned_data["b"])
    if out.a is not None and out.a == out.b:
        out.problem = _("pass A and pass B are the same pass (%(pass)s): choose two different passes") % {
            "pass": out.a.label(names)
        }
    elif out.a and out.b:
        out.compared = pass_compare(out.a, out.b)
    return out


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def flow_table(request: HttpRequest, round_id: int) -> HttpResponse:
    f = _flows(request, round_id)
    if f.query.errors:
        return refused_query(request, f.query)
    shared, found = (f.compared.items, f.compared.flows) if f.compared else (0, [])
    context = {
        "round": f.round,
        "submissions": round_submissions(f.round),
        "passes": f.passes,
        "a": f.a.key if f.a else "",
        "b": f.b.key if f.b else "",
        "a_label": f.a.label(f.names) if f.a else "",
        "b_label": f.b.label(f.names) if f.b else "",
        "shared": shared,
        "flows": found,
        "report": f.compared.report if f.compared else None,
        "problem": f.problem,
    }
    return render(request, "adjudication/flows.html", context, status=400 if f.problem else 200)


def _flows_for_csv(request: HttpRequest, round_id: int) -> _Flows | HttpResponse:
    f = _flows(request, round_id)
    if f.query.errors:
        return refused_query(request, f.query, csv=True)
    if f.problem:
        return HttpResponse(f.problem, status=400, content_type="text/plain; charset=utf-8")
    return f


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def flows_csv(request: HttpRequest, round_id: int) -> HttpResponse:
    f = _flows_for_csv(request, round_id)
    if isinstance(f, HttpResponse):
        return f
    rows = [[x.slot, x.a, x.b, x.count, _fmt(x.share_of_a)] for x in (f.compared.flows if f.compared else [])]
    header = ["slot", "value_in_a", "value_in_b", "count", "share_of_a"]
    return csv_response(f"flows-{f.round.name}.csv", header, rows)


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def passes_csv(request: HttpRequest, round_id: int) -> HttpResponse:
    """Agreement per slot between the two passes."""
    f = _flows_for_csv(request, round_id)
    if isinstance(f, HttpResponse):
        return f
    report = f.compared.report if f.compared else None
    rows = [[s.slot, s.items, _fmt(s.raw), _fmt(s.alpha), _fmt(s.ci_low), _fmt(s.ci_high), s.undefined]
            for s in (report.slots if report else [])]  # fmt: skip
    header = ["slot", "items", "raw_agreement", "alpha", "ci_low", "ci_high", "undefined"]
    return csv_response(f"passes-{f.round.name}.csv", header, rows)


def _anchoring(request: HttpRequest, round_id: int) -> tuple[Round, AnchoringQuery, dict[str, Any] | None]:
    """The anchoring table and, with ?control=, the blind arm beside it (``problem`` says why a
    control named cannot be one); None for a bad query."""
    round_ = get_object_or_404(Round, pk=round_id)
    query = AnchoringQuery(request.GET)
    if not query.is_valid():
        return round_, query, None
    analysis = round_analysis(round_)
    controls = blind_controls(round_)
    control, problem = None, ""
    chosen = query.cleaned_data["control"]
    if chosen is not None:
        control = Round.objects.filter(pk=chosen).first()
        if control is None:
            problem = _("there is no round %(round)s to compare with") % {"round": repr(chosen)}
        elif not control.is_blind:
            problem = _("%(round)s is not a blind round: a control arm is annotated without prefill") % {
                "round": control.name
            }
        elif not any(c.pk == control.pk for c, _shared in controls):
            problem = _("%(control)s shares no submitted item with %(round)s") % {
                "control": control.name,
                "round": round_.name,
            }
    if problem:
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
    raw = {s.slot: s.raw for s in analysis.report.slots}
    found = {"rows": anchoring(round_), "analysis": analysis, "raw": raw, "controls": controls,
             "problem": problem, "arm": arm}  # fmt: skip
    return round_, query, found


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def anchoring_table(request: HttpRequest, round_id: int) -> HttpResponse:
    round_, query, found = _anchoring(request, round_id)
    if found is None:
        return refused_query(request, query)
    raw, analysis = found["raw"], found["analysis"]
    context = {
        "round": round_,
        "rows": [(r, [r.kept[s] for s in SLOT_NAMES]) for r in found["rows"]],
        "raw": [raw[s] for s in SLOT_NAMES],
        "slots": SLOT_NAMES,
        "controls": found["controls"],
        "arm": found["arm"],
        "problem": found["problem"],
        "control_needed": CONTROL_NEEDED,
        "submissions": None if analysis.data.coders else round_submissions(round_),
    }
    return render(request, "adjudication/anchoring.html", context, status=400 if found["problem"] else 200)


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def anchoring_csv(request: HttpRequest, round_id: int) -> HttpResponse:
    round_, query, found = _anchoring(request, round_id)
    if found is None:
        return refused_query(request, query, csv=True)
    if found["problem"]:
        return HttpResponse(f"{found['problem']}. {CONTROL_NEEDED}", status=400, content_type="text/plain")
    raw, arm = found["raw"], found["arm"]
    header = ["annotator", "annotations_with_prefill", *SLOT_NAMES, "overall"]
    out = [
        [r.annotator, r.annotations, *[_fmt(r.kept[s]) for s in SLOT_NAMES], _fmt(r.overall)]
        for r in found["rows"]
    ]
    out.append(["raw agreement between annotators", "", *[_fmt(raw[s]) for s in SLOT_NAMES], ""])
    if arm:
        by_slot = {slot: (t, c) for slot, t, c, _, _ in arm["rows"]}
        for side, name in (
            (0, f"alpha, prefilled ({round_.name})"),
            (1, f"alpha, blind ({arm['control'].name})"),
        ):
            out.append([name, arm["shared"], *[_fmt(by_slot[s][side]) for s in SLOT_NAMES], ""])
    return csv_response(f"anchoring-{round_.name}.csv", header, out)
