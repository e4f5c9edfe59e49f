"""The registry's pages: the trained parsers by name, and one version's card."""

from __future__ import annotations

import json

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotator.roles import ADJUDICATOR, ADMIN, require_role
from registry.models import RegisteredParser
from registry.selectors import best_parser, parsers_list


@require_role(ADJUDICATOR, ADMIN)
def parser_list(request: HttpRequest) -> HttpResponse:
    parsers = parsers_list().select_related("created_by").defer("card", "trained_on")
    return render(request, "registry/parser_list.html", {"parsers": parsers, "best": best_parser()})


@require_role(ADJUDICATOR, ADMIN)
def parser_newest(request: HttpRequest, name: str) -> HttpResponse:
    """``/parsers/NAME/``: the newest version's card."""
    found = RegisteredParser.objects.filter(name=name).order_by("-version").first()
    if found is None:
        raise Http404(f"no registered parser {name}")
    return redirect("parser_detail", name=found.name, version=found.version)


@require_role(ADJUDICATOR, ADMIN)
def parser_detail(request: HttpRequest, name: str, version: int) -> HttpResponse:
    parser = RegisteredParser.objects.filter(name=name, version=version).select_related("created_by").first()
    if parser is None:
        raise Http404(f"no registered parser {name}@{version}")
    card = parser.card or {}
    labelled = (card.get("sources") or {}).get("labelled") or {}
    data = ((card.get("meta") or {}).get("data")) or {}
    labels_meta = (card.get("meta") or {}).get("labels") or {}
    context = {
        "parser": parser,
        "options": {k: json.dumps(v) for k, v in (card.get("options") or {}).items()},
        "labels_meta": labels_meta,
        "labelled": {k: v for k, v in labelled.items() if k != "ids"},
        "data": {k: v for k, v in data.items() if k != "item_ids"},
        "encoder": (card.get("sources") or {}).get("encoder", ""),
        "card_json": json.dumps(card, indent=2, ensure_ascii=False)[:200_000],
        "trained_count": parser.trained_count,
    }
    return render(request, "registry/parser_detail.html", context)
