"""What a web process does once when it starts, so that its first requests do not wait for it: the
URL patterns with every view module, every job kind's module, the legality of every context's
lines and the compilation of the heaviest templates (config/wsgi.py calls it; each gunicorn worker
runs it as it boots, before taking requests). Not scipy.special, which the Evaluation page's exact
intervals need: a process that shows that page imports it then (about 0.2 s, once), and one that
never does saves its 15 MiB (issue 24's memory goal; benchmarks/bench_evaluation_view.py keeps the
first view under 0.5 s)."""

from __future__ import annotations

from django.template.loader import get_template
from django.urls import reverse

from jobs.kinds import kinds
from nsmcore import legality

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
    kinds()  # every job kind's module (the apps declare them; the Jobs page lists them)
    legality.warm()
    for name in TEMPLATES:
        get_template(name)
