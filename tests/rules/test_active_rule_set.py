"""Two processes agree on the active rule set: each reads it from the database through the shared
(file) cache, and activating in one deletes the key when its transaction commits."""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.rules.data import moved

ROOT = Path(__file__).resolve().parents[2]
READ = "from rules.rulesets import active_rule_set; print(active_rule_set().version)"


def manage(tmp_path, *argv: str) -> subprocess.CompletedProcess:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("NSM_", "DJANGO_", "DATABASE_"))}
    env = {
        **keep,
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "NSM_CACHE_URL": f"file://{tmp_path / 'cache'}",
        "NSM_BROKER_DIR": str(tmp_path / "broker"),
    }
    result = subprocess.run(
        [sys.executable, "manage.py", *argv], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result


def test_an_activation_in_one_process_is_what_the_next_reader_sees(tmp_path):
    manage(tmp_path, "migrate", "--verbosity", "0")
    assert (
        manage(tmp_path, "shell", "--no-imports", "-c", READ).stdout.strip() == "1"
    )  # now cached, without expiry
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(moved("no-emotion", 0)))
    manage(tmp_path, "rule_set", "propose", str(path))
    assert (
        manage(tmp_path, "shell", "--no-imports", "-c", READ).stdout.strip() == "1"
    )  # a proposal changes nothing
    manage(tmp_path, "rule_set", "activate", "2")
    assert manage(tmp_path, "shell", "--no-imports", "-c", READ).stdout.strip() == "2"
    manage(tmp_path, "rule_set", "rollback", "1")
    assert manage(tmp_path, "shell", "--no-imports", "-c", READ).stdout.strip() == "1"
