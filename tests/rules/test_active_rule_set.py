"""Two processes agree on the active rule set: each reads it from the database through the shared
(file) cache, and activating in one deletes the key when its transaction commits."""

import json

from tests.integration.deployment import Deployment, sqlite_row
from tests.rules.data import moved

READ = "from rules.rulesets import active_rule_set; print(active_rule_set().version)"


def test_an_activation_in_one_process_is_what_the_next_reader_sees(tmp_path):
    db = tmp_path / "db.sqlite3"
    site = Deployment(tmp_path, {"DATABASE_URL": f"sqlite:///{db}"}, sqlite_row(db))
    site.migrate()  # the run's migrated template, copied

    def read() -> str:
        return site.manage("shell", "--no-imports", "-c", READ).strip()

    assert read() == "1"  # now cached, without expiry
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(moved("no-emotion", 0)))
    site.manage("rule_set", "propose", str(path))
    assert read() == "1"  # a proposal changes nothing
    site.manage("rule_set", "activate", "2")
    assert read() == "2"
    site.manage("rule_set", "rollback", "1")
    assert read() == "1"
