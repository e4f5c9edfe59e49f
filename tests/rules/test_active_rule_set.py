"""Two processes agree on the active rule set: each reads it from the database through the shared
(file) cache, and activating in one deletes the key when its transaction commits. The reader is
one long-lived process, as a web or worker process is (and one process start, not four)."""

import json
import subprocess
import sys

from tests.integration.deployment import ROOT, Deployment, sqlite_row
from tests.rules.data import moved

# a line in, the active version out: what a long-lived process reads at each request
READER = (
    "import sys\n"
    "from rules.rulesets import active_rule_set\n"
    "for _ in sys.stdin:\n"
    "    print(active_rule_set().version, flush=True)\n"
)


def test_an_activation_in_one_process_is_what_the_next_reader_sees(tmp_path):
    db = tmp_path / "db.sqlite3"
    site = Deployment(tmp_path, {"DATABASE_URL": f"sqlite:///{db}"}, sqlite_row(db))
    site.migrate()  # the run's migrated template, copied
    reader = subprocess.Popen(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", READER],
        cwd=ROOT, env=site.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip

    def read() -> str:
        reader.stdin.write("\n")
        reader.stdin.flush()
        return reader.stdout.readline().strip()

    try:
        assert read() == "1"  # now cached, without expiry
        path = tmp_path / "v2.json"
        path.write_text(json.dumps(moved("no-emotion", 0)))
        site.manage("rule_set", "propose", str(path))
        assert read() == "1"  # a proposal changes nothing
        site.manage("rule_set", "activate", "2")
        assert read() == "2"
        site.manage("rule_set", "rollback", "1")
        assert read() == "1"
    finally:
        reader.stdin.close()
        assert reader.wait(timeout=30) == 0
