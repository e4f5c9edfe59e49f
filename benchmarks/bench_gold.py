"""Gold speed (issue 6): applying an accepted convention that matches 10,000 conflicts, on SQLite
(matching, setting the slot with provenance, routing every settled item, the audit rows, in one
transaction). Target: under 2 s. Also the preview (matching alone) and opening the 10,000 gold
records with their unanimous slots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import figure

ROOT = Path(__file__).resolve().parent.parent
N_CONFLICTS = 10_000


def run(quick: bool = False) -> list[dict]:
    n = 2_000 if quick else N_CONFLICTS
    with tempfile.TemporaryDirectory() as folder:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.dev",
            "DEBUG": "0",
            "DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3",
            "NSM_BROKER_DIR": f"{folder}/broker",
            "PYTHONPATH": str(ROOT),
        }
        out = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "gold_db.py"), str(n)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return [
        figure(f"apply a convention matching {r['matched']:,} conflicts (SQLite)", round(r["apply"], 3), "s",
               "< 2 s", r["apply"] < 2.0),
        figure("its preview (matching alone)", round(r["preview"], 3), "s"),
        figure(f"open {r['opened']:,} gold records with their unanimous slots", round(r["sync"], 3), "s"),
    ]  # fmt: skip
