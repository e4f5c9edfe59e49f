"""Issue 24's memory goal: each process of `make run` and `serve` loads what it uses. Every library
below costs megabytes in every process that imports it, so the test names the process and what it
must not hold: the web process no statistics (scipy, until a page computes an interval) and no
single sign-on flow (jwt, requests' TLS stack through cryptography) while single sign-on is off;
the job worker none of the web's URL patterns, views or schema; the supervisor no Django at all;
and nsmcore, imported for one name, not the rest of the library. Each probe runs in a fresh
interpreter, as the process does."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: what no process holds until it needs it (the models and the statistics)
HEAVY = ["torch", "transformers", "sklearn", "scipy", "jwt", "cryptography", "mozilla_django_oidc.auth"]
#: what a job worker at rest does not hold: each kind's module loads with the first job of it, and
#: numpy with the first job that computes (14 MiB of the worker's 72 at start)
JOB_CODE = ["numpy", "training.train", "predictions.prefill", "verification.verify", "exports.export",
            "exports.hf", "exports.raw_export", "learning.jobs", "learning.auto"]  # fmt: skip


def held(probe: str, watched: list[str], **env: str) -> list[str]:
    """The modules of ``watched`` that a fresh interpreter holds after running ``probe``."""
    code = f"{probe}\nimport json, sys\nprint(json.dumps(sorted(set({watched!r}) & set(sys.modules))))"
    environ = {k: v for k, v in os.environ.items() if k != "CELERY_SKIP_CHECKS"}
    environ |= {"DJANGO_SETTINGS_MODULE": "config.settings.test", **env}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_web_process_holds_no_statistics_and_no_sign_on_flow():
    assert held("import config.wsgi", [*HEAVY, "config.urls"]) == ["config.urls"]


def test_a_sign_on_loads_the_flow_only_when_it_starts():
    probe = """
import django
django.setup()
from django.http import Http404
from django.test import RequestFactory
from annotator import sso
request = RequestFactory().get("/oidc/authenticate/", HTTP_HOST="127.0.0.1")
try:
    sso.authenticate(request)
except Http404:
    assert not sso.configured()
except Exception:
    assert sso.configured()  # the flow ran, and found no provider to reach
"""
    assert held(probe, ["annotator.sso_flow", "jwt"]) == []
    on = probe.replace("request =", "sso.configured = lambda: True\nrequest =")
    assert held(on, ["annotator.sso_flow", "jwt"]) == ["annotator.sso_flow", "jwt"]


def test_the_worker_started_by_serve_or_runapp_holds_none_of_the_web():
    """Celery's Django fixup runs the system checks as the worker starts, and the checks import the
    URL patterns with every view; serve and runapp have run them, so their worker skips them."""
    probe = """
from django.conf import settings
from config.celery import app
from celery.fixups.django import DjangoFixup
DjangoFixup(app).worker_fixup.validate_models()
app.loader.import_default_modules()
"""
    web = ["config.urls", "drf_spectacular.views", "adjudication.evaluation.views"]
    from server.supervisor import children_env

    env = children_env("config.settings.test")
    assert env["CELERY_SKIP_CHECKS"]
    assert held(probe, [*HEAVY, *web, *JOB_CODE], CELERY_SKIP_CHECKS=env["CELERY_SKIP_CHECKS"]) == []
    # a worker started on its own still checks, and with them loads the URL patterns
    assert "config.urls" in held(probe, web)


def test_the_supervising_process_holds_no_django():
    assert held("import server.children", ["django", "django.conf"]) == []


def test_nsmcore_loads_what_is_used():
    assert held("import nsmcore\nnsmcore.route, nsmcore.render", ["scipy", "nsmcore.evaluation"]) == []
    everything = "from nsmcore import *\nimport nsmcore\nassert set(nsmcore.__all__) <= set(dir(nsmcore))"
    assert held(everything, ["nsmcore.evaluation", "nsmcore.counterfactual"]) == [
        "nsmcore.counterfactual",
        "nsmcore.evaluation",
    ]


def test_a_name_that_is_also_a_module_stays_the_function_after_the_module_is_imported():
    probe = """
from nsmcore.render import Line
from nsmcore.counterfactual import CounterfactualPair
import nsmcore
assert nsmcore.render.__name__ == "render" and callable(nsmcore.render), nsmcore.render
assert nsmcore.counterfactual.__name__ == "counterfactual" and callable(nsmcore.counterfactual)
"""
    assert held(probe, ["scipy"]) == []


def test_on_sqlite_the_web_process_holds_no_postgresql_driver(tmp_path):
    """DRF imports django.contrib.postgres's fields whenever psycopg is installed, and with them
    psycopg and libpq: 9 MiB in every web process of the quick start, which runs on SQLite."""
    sqlite = {"DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    assert held("import config.wsgi", ["psycopg", "rest_framework.serializers"], **sqlite) == [
        "rest_framework.serializers"
    ]
    # on PostgreSQL the driver is the database's own, and DRF maps its fields as before
    postgres = {"DATABASE_URL": "postgres://nsm@127.0.0.1:5432/nsm"}
    probe = "import config.wsgi\nfrom rest_framework.compat import postgres_fields\nassert postgres_fields"
    assert held(probe, ["psycopg"], **postgres) == ["psycopg"]


def test_a_kind_is_imported_with_the_first_job_of_it():
    """The worker looks a job's kind up when it runs the job: the kind's modules load then, the
    export's Hugging Face step with its kind (even when another module imported the kind's own
    module first: a browser test's worker then wrote no datasets folder), and no kind it does not
    use."""
    probe = """
import django
django.setup()
import exports.export  # as another module may, before the worker asks for the kind
from jobs.kinds import job_kind
assert job_kind("export").name == "export"
"""
    loaded = held(probe, JOB_CODE)
    assert {"exports.export", "exports.hf", "numpy"} <= set(loaded)  # verify's too: the export reads it
    assert not {"training.train", "predictions.prefill", "learning.jobs"} & set(loaded)
