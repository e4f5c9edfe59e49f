"""manage.py contrasts: list, show (and the contrast split), add from JSONL, freeze, new-version,
score; bad input exits 2 with the line that says why, and writes nothing."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from contrasts.models import MinimalPair, PairSet
from nsmcore import cli as nsmcore_cli
from tests.contrasts.conftest import FLIP, INTENSITY, INVARIANT

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("contrasts", *args, stdout=out)
    return out.getvalue()


def refused(*args: str) -> str:
    with pytest.raises(CommandError) as raised:
        run(*args)
    assert raised.value.returncode == 2
    return str(raised.value)


def write(tmp_path, *rows, name="pairs.jsonl") -> str:
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return str(path)


def as_line(values: dict) -> dict:
    return {"from" if k == "from_values" else k: v for k, v in values.items()}


def test_add_makes_the_set_and_show_list_freeze_and_new_version_read_it(tmp_path, gold_round):
    path = write(tmp_path, as_line(FLIP), as_line(INVARIANT), as_line(INTENSITY))
    assert run("add", "pilot", path) == "3 pairs added to pilot@v1 (3 in all)\n"
    assert MinimalPair.objects.filter(pair_set__name="pilot").count() == 3
    listed = run("list")
    assert listed.startswith("pilot@v1") and "open" in listed and "3 pairs" in listed
    shown = run("show", "pilot")
    assert "t1-0  [F-agency]  agency i->someone-else  expect joy (x: pride)" in shown
    assert "invariance  expect joy (x: joy)" in shown
    assert run("freeze", "pilot") == "pilot@v1 frozen with 3 pairs\n"
    assert run("new-version", "pilot") == "pilot@v2 open with the 3 pairs of v1\n"
    assert PairSet.objects.get(name="pilot", version=2).is_open


def test_the_contrast_split_is_read_by_nsmcore_evaluate(tmp_path, pair_set, capsys):
    split = run("show", "pilot-pairs", "--jsonl")
    records = [json.loads(line) for line in split.splitlines()]
    assert [r["id"] for r in records] == ["pilot-pairs@v1#1", "pilot-pairs@v1#2", "pilot-pairs@v1#3"]
    assert records[0]["target_values"] == {"agency": ["i", "someone-else"]}
    assert records[1]["target_slots"] == [] and records[1]["x"]["emotion"] == records[1]["x_prime"]["emotion"]
    path = write(tmp_path, split.strip(), name="split.jsonl")
    capsys.readouterr()
    assert nsmcore_cli.main(["evaluate", "--counterfactual", path, "--parser", "lexical"]) == 0
    assert "invariance" in capsys.readouterr().out


def test_score_prints_each_parser_and_json(pair_set, tiny_parser):
    text = run("score", "pilot-pairs")
    assert text.startswith("lexical") and "tiny@1" in text and "counterfactual benchmark" in text
    doc = json.loads(run("score", "pilot-pairs", "--parser", "tiny@1", "--json"))
    assert doc["set"] == "pilot-pairs@v1" and [p["parser"] for p in doc["parsers"]] == ["tiny@1"]
    assert doc["parsers"][0]["report"]["overall"]["n"] == 3


def test_bad_input_exits_2_naming_the_line_and_writes_nothing(tmp_path, pair_set):
    before = (PairSet.objects.count(), MinimalPair.objects.count())
    bad_pair = write(tmp_path, as_line(FLIP), {**as_line(INTENSITY), "expected": "elation"})
    message = refused("add", "fresh", bad_pair)
    assert f"{bad_pair}:2: expected: 'elation' is not an emotion" in message
    assert not PairSet.objects.filter(name="fresh").exists()  # the set made for the file is gone too
    assert f"{tmp_path / 'none.jsonl'}: no such file" in refused("add", "fresh", str(tmp_path / "none.jsonl"))
    assert ":1: not JSON" in refused("add", "fresh", write(tmp_path, "{nope"))
    assert ":1: unknown key 'colour'" in refused(
        "add", "fresh", write(tmp_path, {**as_line(FLIP), "colour": 1})
    )
    not_a_flag = write(tmp_path, {**as_line(FLIP), "invariance": 1})
    assert ":1: invariance: true or false" in refused("add", "fresh", not_a_flag)
    assert "no pairs in it" in refused("add", "fresh", write(tmp_path, ""))
    assert "Bad Name: name: use 1-63" in refused("add", "Bad Name", write(tmp_path, as_line(FLIP)))
    assert "no set named 'nope'; sets: pilot-pairs" in refused("show", "nope")
    assert "set pilot-pairs has no version 7; versions: 1" in refused(
        "freeze", "pilot-pairs", "--version", "7"
    )
    assert "no parser 'nope'; parsers: lexical" in refused("score", "pilot-pairs", "--parser", "nope")
    assert "is open: freeze it first" in refused("new-version", "pilot-pairs")
    assert (PairSet.objects.count(), MinimalPair.objects.count()) == before
    run("freeze", "pilot-pairs")
    assert "already frozen" in refused("freeze", "pilot-pairs")
    frozen = refused(
        "add", "pilot-pairs", write(tmp_path, {**as_line(FLIP), "text": "I was glad my aunt won."})
    )
    assert "pilot-pairs@v1 is frozen" in frozen
    assert MinimalPair.objects.count() == before[1]


def test_an_empty_set_has_nothing_to_score(adjudicator):
    from contrasts.services import pair_set_create

    pair_set_create(user=adjudicator, name="empty")
    assert "empty@v1 has no pairs: nothing to score" in refused("score", "empty")
