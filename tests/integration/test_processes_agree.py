"""Two processes against one database and one shared cache read the same round analysis, versions,
agreement, gold and export, also after a third process writes: a long-lived process (as a worker
is) must not answer from what it kept in its own memory. The old failure: a worker's private
cache made an export miss items the web server had seen."""

import json
import subprocess
import sys

import pytest

from tests.integration.deployment import ROOT, Deployment, sqlite_row

pytestmark = pytest.mark.integration

SETUP = """
from annotator.models import Assignment
from annotator.sampling import item_set_from_items
from annotator.services import annotation_submit, round_create
from django.contrib.auth.models import User
from tests.factories import PRED, make_items

alice, bob = (User.objects.create_user(name, password="x") for name in ("alice", "bob"))
round_ = round_create(name="r", item_set=item_set_from_items(name="s", items=make_items()),
                      annotators=[alice, bob], mode="blind")
for user, diff in ((alice, {}), (bob, {0: {"agency": "someone-else"}})):
    for k, a in enumerate(Assignment.objects.filter(round=round_, annotator=user).order_by("item_id")):
        annotation_submit(assignment=a, user=user, values={**PRED, **diff.get(k, {})}, base_version=0)
"""

# bob changes his mind on the third item: one more conflict, one more item that is not unanimous
WRITE = """
from annotator.models import Annotation
from annotator.services import annotation_submit
from tests.factories import PRED

a = Annotation.objects.filter(assignment__round__name="r", assignment__annotator__username="bob")
third = a.order_by("assignment__item_id")[2]
annotation_submit(assignment=third.assignment, user=third.assignment.annotator,
                  values={**PRED, "intensity": "very" if PRED["intensity"] != "very" else "plain"},
                  base_version=third.version)
"""

# Answers one line of JSON for every line read: what this process sees of round "r".
READER = """
import hashlib, json, sys, tempfile
from pathlib import Path
import django
django.setup()
from adjudication.agreement.analysis import _version, agreement_summary, round_analysis
from adjudication.models import GoldItem
from annotator.models import Round
from exports.export import export_prepare, export_write

for _ in sys.stdin:
    round_ = Round.objects.get(name="r")
    analysis = round_analysis(round_)
    export_prepare(round_)
    with tempfile.TemporaryDirectory() as folder:
        _, manifest = export_write(round_=round_, verifier=None, folder=Path(folder), tag="t")
    print(json.dumps({
        "version": _version(round_.pk),
        "items": analysis.data.item_ids.tolist(),
        "table": hashlib.sha256(analysis.data.table.tobytes()).hexdigest(),
        "conflicts": analysis.conflicts.rows.tolist(),
        "agreement": agreement_summary(round_),
        "gold": sorted(GoldItem.objects.filter(round=round_).values_list("item__source_id", "status")),
        "exported": manifest["counts"]["items"],
        "jsonl": manifest["files"]["emoexpl.jsonl"]["sha256"],
    }), flush=True)
"""


class Reader:
    """A long-lived Django process that answers READER's question each time it is asked."""

    def __init__(self, deployment: Deployment):
        self.process = subprocess.Popen(
            [sys.executable, "-c", READER], cwd=ROOT, env=deployment.env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip

    def ask(self) -> dict:
        self.process.stdin.write("read\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, self.process.stderr.read()[-3000:]
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def test_a_long_lived_process_and_a_fresh_one_read_the_same_round(tmp_path):
    db = tmp_path / "app.sqlite3"
    deployment = Deployment(tmp_path, {"DATABASE_URL": f"sqlite:///{db}"}, sqlite_row(db))
    deployment.migrate()
    deployment.manage("shell", "-c", SETUP)
    worker = Reader(deployment)
    try:
        before = worker.ask()
        fresh = Reader(deployment)
        try:
            assert fresh.ask() == before
        finally:
            fresh.close()
        assert len(before["conflicts"]) == 1 and before["exported"] == 3, before

        deployment.manage("shell", "-c", WRITE)
        after = worker.ask()
        fresh = Reader(deployment)
        try:
            assert fresh.ask() == after, "the long-lived process answers from what it kept"
        finally:
            fresh.close()
    finally:
        worker.close()
    assert after["version"] != before["version"]
    assert len(after["conflicts"]) == 2 and after["table"] != before["table"]
    assert after["agreement"] != before["agreement"]
