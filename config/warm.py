"""What a web process does once when it starts, so that its first requests do not wait for it: the
import behind the Evaluation page's intervals, the legality of every context's lines and the
compilation of the heaviest templates (config/wsgi.py calls it; each gunicorn worker runs it as it
boots, before taking requests)."""

from __future__ import annotations

from django.template.loader import get_template
from django.urls import reverse

from nsmcore import legality
from nsmcore.evaluation_report import warm

#: the pages whose templates take longest to compile (each is compiled once per process)
TEMPLATES = (
    "adjudication/evaluation.html",
    "adjudication/dashboard.html",
    "adjudication/gold_item.html",
    "annotator/annotate.html",
)


def warm_web() -> None:
    # the URL patterns, and with them every view module: Django imports them on the first request
    reverse("home")
    warm()
    legality.warm()
    for name in TEMPLATES:
        get_template(name)
