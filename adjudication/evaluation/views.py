"""The Evaluation page of a round (adjudicators and admins): every classification figure of the
paper for a pass against the items' reference labels, a second pass beside it, and each table as
CSV (``evaluation/NAME.csv`` with the page's query string, read by the same form:
EvaluationQuery). Figures come from ``adjudication.evaluation.figures``; chart geometry from
``nsmcore.charts``. A parser pass also gets its "Parser against gold" section
(``adjudication.evaluation.parser``: per-slot accuracy and alpha, legality, the routed label
beside the baselines) on the round's items or a held-out item set (``?heldout=NAME``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from adjudication.downloads import csv_response
from adjudication.evaluation.figures import (
    PARSER,
    TABLES,
    EvaluationRequestError,
    Options,
    PassEvaluation,
    compare_rows,
    compare_table,
    confusion_chart,
    evaluation_passes,
    headline_rows,
    paired_split,
    pass_evaluation,
    per_emotion_chart,
    report_table,
    sensitivity_chart,
    split_table,
)
from adjudication.evaluation.forms import EvaluationQuery
from adjudication.evaluation.parser import (
    PARSER_TABLES,
    label_figures,
    parser_table,
    parser_vs_gold,
)
from adjudication.evaluation.parser_curve import curve_chart, registered_curve
from adjudication.forms import form_problems
from annotator.models import ItemSet, Round
from annotator.roles import ADJUDICATOR, ADMIN, require_role
from rules.rulesets import active_rule_set


def _bad(message: str) -> HttpResponse:
    return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")


def _query(
    key: str, options: Options, item_set: ItemSet | None, heldout: ItemSet | None = None, **extra: str
) -> str:
    q = QueryDict(mutable=True)
    q["pass"] = key
    for name, value in options.as_query().items():
        q.setlist(name, [str(v) for v in value] if isinstance(value, list) else [str(value)])
    if item_set is not None:
        q["item_set"] = item_set.name
    if heldout is not None:
        q["heldout"] = heldout.name
    for name, value in extra.items():
        q[name] = value
    return q.urlencode()


def _side(evaluation: PassEvaluation, options: Options, item_set: ItemSet | None) -> dict[str, Any]:
    """What the page draws for one pass."""
    report = evaluation.report
    side: dict[str, Any] = {"evaluation": evaluation, "report": report, "pass": evaluation.pass_}
    side["query"] = _query(evaluation.pass_.key, options, item_set)
    if report is not None:
        side |= {
            "evidence": report.evidence.label(),
            "headline": headline_rows(report),
            "bars": per_emotion_chart(report),
            "selective_bars": per_emotion_chart(report, selective=True),
            "heatmap": confusion_chart(report),
            "strip": sensitivity_chart(evaluation),
        }
    return side


def _query_form(request: HttpRequest, round_id: int):
    round_ = get_object_or_404(Round.objects.select_related("item_set"), pk=round_id)
    passes = evaluation_passes(round_)
    rule_set = active_rule_set()
    default = passes[0].key if passes else ""
    return round_, passes, rule_set, EvaluationQuery(request.GET, default_pass=default, rule_set=rule_set)


def _evaluate(
    round_: Round, q: dict[str, Any], rule_set
) -> tuple[PassEvaluation | None, PassEvaluation | None]:
    """The pass and the compare pass, evaluated; EvaluationRequestError for a pass that is not."""
    scored = {"options": q["options"], "item_set": q["item_set"], "rule_set": rule_set}
    main = pass_evaluation(round_, q["pass"], **scored) if q["pass"] else None
    other = pass_evaluation(round_, q["compare"], **scored) if q["compare"] else None
    return main, other


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def evaluation_page(request: HttpRequest, round_id: int) -> HttpResponse:
    round_, passes, rule_set, query = _query_form(request, round_id)
    context: dict[str, Any] = {
        "round": round_,
        "passes": passes,
        **query.shown(),  # the pass, compare pass and held-out set the page's form shows
        "rule_set": rule_set,
        "options": Options(),
        "tables": TABLES,
        "eval_sets": ItemSet.objects.filter(tier=ItemSet.Tier.EVAL)
        .order_by("name")
        .values_list("name", flat=True),
        "problem": "",
        "item_set": round_.item_set,
    }
    try:
        if not query.is_valid():
            raise EvaluationRequestError(form_problems(query))
        q = query.cleaned_data
        context["options"], context["item_set"] = q["options"], q["item_set"] or round_.item_set
        main, other = _evaluate(round_, q, rule_set)
        parser = (
            parser_vs_gold(round_, q["pass"], heldout=q["heldout"], rule_set=rule_set)
            if main is not None and main.pass_.kind == PARSER
            else None
        )
    except EvaluationRequestError as error:
        context["problem"] = str(error)
        return render(request, "adjudication/evaluation.html", context, status=400)
    options, item_set, key = q["options"], q["item_set"], q["pass"]
    context["sides"] = [_side(e, options, item_set) for e in (main, other) if e is not None]
    if parser is not None:
        heldout = q["heldout"]
        context["parser"] = parser
        context["curve"] = registered_curve(round_, heldout or round_.item_set, rule_set)
        context["curve_chart"] = curve_chart(context["curve"])
        context["parser_labels"] = label_figures(parser)
        context["parser_query"] = _query(key, options, item_set, heldout)
    if main and other and main.report and other.report:
        context["compared"] = compare_rows(main.report, other.report)
        context["split"] = paired_split(main, other)
        context["compare_query"] = _query(key, options, item_set, compare=q["compare"])
    return render(request, "adjudication/evaluation.html", context)


@require_GET
@require_role(ADJUDICATOR, ADMIN)
def evaluation_csv(request: HttpRequest, round_id: int, table: str) -> HttpResponse:
    """One table of the Evaluation page as CSV, for the page's own query string."""
    round_, _passes, rule_set, query = _query_form(request, round_id)
    try:
        if not query.is_valid():
            raise EvaluationRequestError(form_problems(query))
        q = query.cleaned_data
        key = q["pass"]
        slug = key.replace(":", "-").replace("/", "-")
        if table in PARSER_TABLES:
            main, _other = _evaluate(round_, {**q, "compare": ""}, rule_set)
            if main is None or main.pass_.kind != PARSER:
                raise EvaluationRequestError(
                    _("table %(table)s needs a parser pass, not %(pass)s")
                    % {"table": repr(table), "pass": key or _("(none)")}
                )
            parser = parser_vs_gold(round_, key, heldout=q["heldout"], rule_set=rule_set)
            header, rows = parser_table(parser, table)
            return csv_response(
                f"evaluation-{round_.name}-{slug}-{parser.held_out}-{table}.csv", header, rows
            )
        main, other = _evaluate(round_, q, rule_set)
        if main is None or main.report is None:
            raise EvaluationRequestError(
                _("pass %(pass)s has no items to tabulate") % {"pass": key or _("(none)")}
            )
        if table in ("compare", "split"):
            if other is None or other.report is None:
                raise EvaluationRequestError(
                    _("table %(table)s needs a compare pass with items") % {"table": repr(table)}
                )
            split = paired_split(main, other) if table == "split" else None
            if table == "split" and split is None:
                raise EvaluationRequestError(_("table 'split' needs items both passes score"))
            header, rows = (
                split_table(split, main.report, other.report)
                if split
                else compare_table(main.report, other.report)
            )
        else:
            header, rows = report_table(main.report, table)
    except EvaluationRequestError as error:
        return _bad(str(error))
    return csv_response(f"evaluation-{round_.name}-{slug}-{table}.csv", header, rows)
