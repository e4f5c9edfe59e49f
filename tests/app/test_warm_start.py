"""Issue 25: the first Evaluation view of each web process waited seconds for one-off work
(the URL patterns and their views, template compilation, scipy's import). The WSGI module does the
first two as the process starts (config.warm); scipy.special is left to the first view that needs
it (issue 24: 15 MiB in every web process); benchmarks/bench_evaluation_view.py times the result."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
WATCHED = {"scipy.special", "adjudication.evaluation.views"}
before = WATCHED & set(sys.modules)
import config.wsgi
from django.template import engines
loaders = engines["django"].engine.template_loaders
cached = sorted(name for loader in loaders for name in getattr(loader, "get_template_cache", {}))
after = WATCHED & set(sys.modules)
print(json.dumps({"before": sorted(before), "after": sorted(after), "templates": cached}))
"""


def test_a_web_process_does_its_one_off_work_when_it_starts():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "DEBUG": "0"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["before"] == []
    assert found["after"] == ["adjudication.evaluation.views"]
    assert "adjudication/evaluation.html" in found["templates"], found["templates"]
