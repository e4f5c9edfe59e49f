"""Issue 26 on the Evaluation page, its CSV, the API and `manage.py evaluate`: set-valued accuracy
in the headline, top-k beside the paper's convention, the stated slot values by routed label, the
overrides with their abstentions, and two passes paired on their items with McNemar's exact test.
Hand figures from tests/adjudication/evaluation_fixture.py:

    item  reference  alice (routes)         bob (routes)
    e1    guilt      guilt       right      shame      wrong
    e2    shame      shame       right      shame      right
    e3    pride      pride       right      no-rule    wrong
    e4    anger      anger       right      anger      right
    e5    guilt      shame       wrong      guilt      right
    e6    shame      residue     wrong      guilt      wrong

so both right 2 (e2, e4), only alice 2 (e1, e3), only bob 1 (e5), both wrong 1 (e6); McNemar's
exact p over the 3 discordant items: 2 x P(X <= 1 | 3, 1/2) = 1."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from tests.adjudication.evaluation_fixture import csv_rows, make_evaluation_round
from tests.adjudication.evaluation_fixture import evaluation_csv_url as csv_url
from tests.adjudication.evaluation_fixture import evaluation_url as url

PAIR = "pass=annotator:alice&compare=annotator:bob&orders=10"


@pytest.fixture
def round_(annotator, other_annotator, adjudicator):
    return make_evaluation_round(annotator, other_annotator, adjudicator)


@pytest.fixture
def adjudicator_client(client, adjudicator):
    client.force_login(adjudicator)
    return client


def test_the_paired_split_on_the_page_the_api_and_the_command(adjudicator_client, round_):
    html = adjudicator_client.get(url(round_, PAIR)).content.decode()
    for cell, n in (("both-right", 2), ("only-a", 2), ("only-b", 1), ("both-wrong", 1)):
        assert f'id="{cell}">{n}</td>' in html
    assert "6 items; McNemar's exact test on the discordant cells: p = 1.0000." in html
    api = adjudicator_client.get(f"/api/rounds/{round_.pk}/evaluation/?{PAIR}").json()
    assert api["paired"] == {"n": 6, "both_right": 2, "only_a": 2, "only_b": 1, "both_wrong": 1,
                             "mcnemar_exact_p": 1.0}  # fmt: skip
    out = io.StringIO()
    call_command("evaluate", "--round", round_.name, "--pass", "annotator:alice", "--compare",
                 "annotator:bob", "--orders", "0", stdout=out)  # fmt: skip
    assert "both right 2, only A 2, only B 1, both wrong 1; McNemar's exact p = 1" in out.getvalue()


def test_set_valued_accuracy_and_both_top_k_conventions(adjudicator_client, round_):
    # alice: 4 right of 6; e5 (SHAME) fires shame and guilt, so guilt is in its set: 5 of 6 in the
    # set, 5 of the 5 routed; e6 abstains (residue), its fired guilt is no claim
    html = adjudicator_client.get(url(round_, "pass=annotator:alice&orders=10")).content.decode()
    assert '<tr data-figure="set-valued accuracy">' in html and "5/6" in html
    assert '<tr data-figure="set-valued selective accuracy">' in html and "5/5" in html
    rows = {
        r["figure"]: r
        for r in csv_rows(
            adjudicator_client.get(csv_url(round_, "headline", "pass=annotator:alice&orders=10"))
        )
    }
    assert (rows["set-valued selective accuracy"]["k"], rows["set-valued selective accuracy"]["n"]) == (
        "5",
        "5",
    )
    scoring = csv_rows(adjudicator_client.get(csv_url(round_, "scoring", "pass=annotator:alice&orders=10")))
    for row in scoring:  # an abstention is a miss: top-1 is accuracy; the paper's can only add to it
        assert float(row["top1"]) == pytest.approx(4 / 6, abs=1e-4)
        assert float(row["top1_uniform"]) >= float(row["top1"])
    assert 'class="num top1-uniform"' in html


def test_stated_slot_values_by_routed_label_and_overrides_with_abstentions(adjudicator_client, round_):
    html = adjudicator_client.get(url(round_, "pass=annotator:alice&orders=10")).content.decode()
    assert 'id="slot-label-table"' in html
    assert '<tr data-slot-value="others_know=can-know">' in html  # e2 and e5: SHAME
    assert '<tr data-slot-value="experiencer=i">' not in html  # a default states nothing
    assert "?q=e2" in html and "?q=e5" in html  # each cell opens its items
    overrides = csv_rows(
        adjudicator_client.get(csv_url(round_, "overrides", "pass=annotator:alice&orders=10"))
    )
    shame_guilt = next(r for r in overrides if (r["winner"], r["overruled"]) == ("shame", "guilt"))
    assert (shame_guilt["n"], shame_guilt["abstained"]) == ("2", "0")
    api = adjudicator_client.get(f"/api/rounds/{round_.pk}/evaluation/?pass=annotator:alice&orders=10").json()
    cells = json.dumps(api["slot_labels"])
    assert '"slot": "others_know", "value": "can-know"' in cells


def test_the_per_emotion_chart_offers_selective_accuracy_the_papers_figure(adjudicator_client, round_):
    # alice's shame items: e2 routed to shame, e6 abstained (residue): accuracy 1/2, selective 1/1
    html = adjudicator_client.get(url(round_, "pass=annotator:alice&orders=10")).content.decode()
    plain, selective = html.split('class="chart per-emotion-chart selective"')
    assert "<title>shame: 1/2</title>" in plain.split('class="chart per-emotion-chart"')[-1]
    assert "<title>shame: 1/1</title>" in selective.split("</svg>")[0]


def test_the_slot_value_table_and_the_paired_split_download_as_csv(adjudicator_client, round_):
    """docs/adjudicator.md: every table has a CSV link; these two had none (found by the new-user
    walkthrough)."""
    alice = "pass=annotator:alice&orders=10"
    html = adjudicator_client.get(url(round_, PAIR)).content.decode()
    assert csv_url(round_, "slot_labels", "").split("?")[0] in html
    assert csv_url(round_, "split", "").split("?")[0] in html
    rows = csv_rows(adjudicator_client.get(csv_url(round_, "slot_labels", alice)))
    can_know = next(r for r in rows if (r["slot"], r["value"]) == ("others_know", "can-know"))
    assert (can_know["n"], can_know["shame"], can_know["abstain"]) == ("2", "2", "0")  # e2, e5
    assert can_know["pass"] == "eval-round/annotator:alice"
    split = csv_rows(adjudicator_client.get(csv_url(round_, "split", PAIR)))
    assert split == [
        {"items": "6", "both_right": "2", "only_a": "2", "only_b": "1", "both_wrong": "1",
         "mcnemar_exact_p": "1", "a_pass": "eval-round/annotator:alice", "b_pass": "eval-round/annotator:bob",
         "rule_set_version": split[0]["rule_set_version"]}
    ]  # fmt: skip
    refused = adjudicator_client.get(csv_url(round_, "split", alice))
    assert refused.status_code == 400 and "needs a compare pass" in refused.content.decode()
