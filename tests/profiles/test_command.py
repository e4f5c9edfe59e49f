"""``manage.py profile``: the page's figures as text or as the API's JSON; bad input exits 2."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError


def run(*args: str) -> str:
    out = StringIO()
    call_command("profile", *args, stdout=out)
    return out.getvalue()


def test_text_names_the_scope_the_figures_the_flows_time_and_digest(team):
    text = run("alice")
    assert "alice: 8 items submitted (4 with gold, 4 shown a prefill)" in text
    assert "rounds counted: B (blind), P (prefilled)" in text
    assert "silver passes left out: S" in text
    assert "blind control: their own blind values of B against parser lex" in text
    agency = next(line for line in text.splitlines() if line.startswith("agency "))
    assert "0.750 [0.19, 0.99] 3/4" in agency and "0.500 [0.07, 0.93] 2/4" in agency and "-0.250" in agency
    assert "agency: someone-else -> i  1  0.500" in text
    assert "time per item: median 40.0 s, 90th percentile 70.0 s (7 timed)" in text
    assert "items submitted per day: 2026-03-02 2, 2026-03-03 0, 2026-03-04 6" in text
    assert "digest: 2 items differ from gold (page 1 of 1)" in text
    assert (
        "agency: someone-else -> gold i  (convention C1 v1: The writer's own doing keeps agency=i.)" in text
    )
    assert "intensity: very -> gold plain  (carol: a plain reading)" in text


def test_json_is_the_apis_document(team, client, adjudicator):
    doc = json.loads(run("alice", "--round", "P", "--format", "json"))
    client.force_login(adjudicator)
    assert doc == client.get("/api/profiles/alice/", {"round": team["P"].pk}).json()
    assert doc["submitted"] == 4


@pytest.mark.parametrize(
    "args, message",
    [
        (["nobody"], "no user named 'nobody'"),
        (["alice", "--round", "nope"], "round: there is no round 'nope'; rounds: B, P, S"),
        (
            ["alice", "--round", "S"],
            "round: S is a silver pass (a model annotator); profiles count human rounds only",
        ),
        (["alice", "--page", "9"], "page: there is no page 9; pages 1 to 1"),
    ],
)
def test_bad_input_exits_2_with_the_reason(team, args, message):
    with pytest.raises(CommandError) as refused:
        run(*args)
    assert refused.value.returncode == 2 and str(refused.value) == message


def test_help_says_what_it_shows(capsys):
    with pytest.raises(SystemExit):
        call_command("profile", "--help")
    assert "agreement with gold" in capsys.readouterr().out
