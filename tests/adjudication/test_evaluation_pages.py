"""The Evaluation page, its CSV tables, the API and `manage.py evaluate`, on the fixture round."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from adjudication.models import GoldItem
from annotator.models import Annotation
from annotator.sampling import item_set_from_items
from tests.adjudication.evaluation_fixture import csv_rows, make_evaluation_round
from tests.adjudication.evaluation_fixture import evaluation_csv_url as csv_url
from tests.adjudication.evaluation_fixture import evaluation_url as url


@pytest.fixture
def round_(annotator, other_annotator, adjudicator):
    return make_evaluation_round(annotator, other_annotator, adjudicator)


@pytest.fixture
def adjudicator_client(client, adjudicator):
    client.force_login(adjudicator)
    return client


def test_the_page_shows_the_headline_with_intervals_and_its_evidence(adjudicator_client, round_):
    response = adjudicator_client.get(url(round_, "pass=annotator:alice&orders=30"))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-pass="annotator:alice"' in html
    assert "S, n=6, rule set v1, pass eval-round/annotator:alice" in html
    assert '<tr data-figure="accuracy"><td>accuracy</td><td class="num value">0.667</td>' in html
    assert "[0.22, 0.96]" in html and "4/6" in html  # accuracy's exact interval and k/n
    assert '<tr data-figure="selective accuracy">' in html and "4/5" in html
    assert '<tr data-figure="abstention: schema-residue">' in html
    assert "6 of the 6 items of eval-S6" in html


def test_the_heatmap_has_a_cell_per_label_and_routed_column_with_counts(adjudicator_client, round_):
    html = adjudicator_client.get(url(round_, "pass=annotator:alice&orders=30")).content.decode()
    assert html.count('<g class="cell"') == 13 * 14
    assert 'data-row="guilt" data-column="shame" data-count="1"' in html
    assert 'data-row="shame" data-column="abstain" data-count="1"' in html
    assert 'data-row="anger" data-column="anger" data-count="1"' in html
    assert 'data-row="pride" data-column="pride" data-count="1"' in html


def test_the_page_draws_bars_flows_strip_scoring_and_rates(adjudicator_client, round_):
    html = adjudicator_client.get(url(round_, "pass=annotator:alice&orders=25&seed=4")).content.decode()
    ticks = re.search(r'<path d="([^"]*)" class="order"/>', html).group(1)
    assert ticks.count("M") == 25  # one tick per random order, in one path
    assert 'data-mark="canonical"' in html and 'data-mark="guilt&lt;-&gt;shame"' in html
    assert '<tr data-flow="guilt:shame">' in html
    assert html.count("<tr data-scheme=") == 3
    assert 'data-emotion="guilt"' in html and "25 random orders (seed 4)" in html
    assert '<tr data-figure="flag two-construals">' in html


def test_compare_shows_both_passes_and_their_difference(adjudicator_client, round_):
    html = adjudicator_client.get(
        url(round_, "pass=annotator:alice&compare=annotator:bob&orders=10")
    ).content.decode()
    assert 'id="compare-table"' in html
    assert 'data-pass="annotator:alice"' in html and 'data-pass="annotator:bob"' in html
    assert html.count('class="chart confusion-heatmap"') == 2
    start = html.index('<tr data-figure="accuracy">', html.index('id="compare-table"'))
    row = html[start : html.index("</tr>", start)]
    assert "0.667" in row and "0.500" in row and '<td class="num diff">0.167</td>' in row


def test_every_table_downloads_as_csv_with_its_evidence(adjudicator_client, round_):
    for table in (
        "headline",
        "per_emotion",
        "confusion",
        "flows",
        "overrides",
        "flags",
        "scoring",
        "sensitivity",
    ):
        response = adjudicator_client.get(csv_url(round_, f"{table}", "pass=annotator:alice&orders=10"))
        assert response.status_code == 200, table
        assert response["Content-Type"].startswith("text/csv")
        rows = csv_rows(response)
        assert rows, table
        assert all(
            r["tier"] == "S" and r["items"] == "6" and r["pass"] == "eval-round/annotator:alice" for r in rows
        )
    confusion = csv_rows(adjudicator_client.get(csv_url(round_, "confusion", "pass=annotator:alice")))
    guilt = next(r for r in confusion if r["reference_label"] == "guilt")
    assert (guilt["guilt"], guilt["shame"], guilt["abstain"]) == ("1", "1", "0")
    headline = csv_rows(adjudicator_client.get(csv_url(round_, "headline", "pass=annotator:bob")))
    accuracy = next(r for r in headline if r["figure"] == "accuracy")
    assert (accuracy["k"], accuracy["n"], accuracy["value"]) == ("3", "6", "0.5000")


def test_the_compare_table_downloads_with_both_passes(adjudicator_client, round_):
    response = adjudicator_client.get(
        csv_url(round_, "compare", "pass=annotator:alice&compare=gold&orders=10")
    )
    rows = csv_rows(response)
    accuracy = next(r for r in rows if r["figure"] == "accuracy")
    assert (accuracy["a_k"], accuracy["b_k"], accuracy["difference"]) == ("4", "5", "-0.1667")
    assert accuracy["b_pass"] == "eval-round/gold"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("pass=annotator:zoe", "pass &#x27;annotator:zoe&#x27; is not a pass of round eval-round"),
        ("pass=annotator:alice&orders=lots", "orders must be a whole number"),
        ("pass=annotator:alice&swap=guilt:elation", "&#x27;elation&#x27; is not a rule"),
        ("pass=annotator:alice&compare=annotator:alice", "compare is the same pass"),
        ("pass=annotator:alice&item_set=nope", "item_set &#x27;nope&#x27;: there is no item set"),
    ],
)
def test_a_bad_pass_or_option_is_a_400_naming_it(adjudicator_client, round_, query, message):
    response = adjudicator_client.get(url(round_, query))
    assert response.status_code == 400
    assert message in response.content.decode()


def test_the_pages_form_shows_what_the_query_form_read(adjudicator_client, round_):
    """The pass, compare pass and held-out set come from EvaluationQuery: cleaned when valid, the
    values asked for (to correct) when refused."""
    html = adjudicator_client.get(url(round_, "pass=annotator:bob&compare=annotator:alice")).content.decode()
    assert '<option value="annotator:bob" selected>' in html
    assert '<option value="annotator:alice" selected>' in html
    default = adjudicator_client.get(url(round_)).content.decode()
    assert default.count(" selected>") == 1 and '<option value="annotator:alice" selected>' in default
    refused = adjudicator_client.get(url(round_, "pass=annotator:bob&heldout=nope"))
    page = refused.content.decode()
    assert refused.status_code == 400 and "heldout &#x27;nope&#x27;: there is no item set" in page
    assert 'name="heldout" size="14" list="eval-sets" value="nope"' in page
    assert '<option value="annotator:bob" selected>' in page


def test_a_bad_csv_request_is_a_400_in_plain_text(adjudicator_client, round_):
    response = adjudicator_client.get(csv_url(round_, "everything", "pass=annotator:alice"))
    assert response.status_code == 400
    assert "table 'everything' is not one of" in response.content.decode()
    response = adjudicator_client.get(csv_url(round_, "headline", "pass=parser:nope"))
    assert response.status_code == 400 and "parser:nope" in response.content.decode()


def test_a_pass_with_no_item_in_the_item_set_says_so(adjudicator_client, round_):
    item_set_from_items(name="empty-set", items=[])
    response = adjudicator_client.get(url(round_, "pass=annotator:alice&item_set=empty-set"))
    assert response.status_code == 200
    assert (
        "Pass annotator:alice has no item in item set empty-set: nothing to evaluate."
        in response.content.decode()
    )


def test_a_round_without_passes_says_so(adjudicator_client, round_):
    Annotation.objects.all().delete()
    round_.assignments.update(status="pending")
    GoldItem.objects.filter(round=round_).update(status=GoldItem.Status.OPEN)
    from annotator.models import ParserPrediction

    ParserPrediction.objects.all().delete()
    response = adjudicator_client.get(url(round_))
    assert response.status_code == 200
    assert 'id="evaluation-empty"' in response.content.decode()


def test_annotators_and_outsiders_cannot_open_the_page_or_the_api(client, round_, annotator, outsider):
    for user in (annotator, outsider):
        client.force_login(user)
        assert client.get(url(round_)).status_code == 403
        assert client.get(f"/api/rounds/{round_.pk}/evaluation/").status_code == 403


def test_the_round_list_and_the_round_nav_link_to_the_page(adjudicator_client, round_):
    target = f'href="/adjudicate/rounds/{round_.pk}/evaluation/"'
    assert target in adjudicator_client.get("/adjudicate/").content.decode()
    assert target in adjudicator_client.get(f"/adjudicate/rounds/{round_.pk}/").content.decode()


def test_the_api_returns_the_report_with_its_evidence(adjudicator_client, round_):
    response = adjudicator_client.get(
        f"/api/rounds/{round_.pk}/evaluation/?pass=annotator:bob&orders=20&seed=1"
    )
    assert response.status_code == 200
    doc = response.json()
    assert doc["pass"] == "annotator:bob" and doc["round"] == "eval-round"
    assert doc["passes"] == ["annotator:alice", "annotator:bob", "parser:lex", "gold"]
    assert doc["headline"]["accuracy"]["k"] == 3 and doc["headline"]["accuracy"]["n"] == 6
    assert doc["headline"]["abstention_by_type"]["no-rule"]["k"] == 1
    assert doc["evidence"] == {
        "tier": "S", "n": 6, "rule_set_version": "1", "rule_set_hash": doc["evidence"]["rule_set_hash"],
        "pass": "eval-round/annotator:bob",
    }  # fmt: skip
    assert doc["confusion"]["evidence"]["pass"] == "eval-round/annotator:bob"
    random = doc["sensitivity"]["random"]
    assert (random["orders"], random["seed"]) == (20, 1)
    assert random["min"] <= random["mean"] <= random["max"]


def test_the_api_compares_two_passes_and_refuses_bad_input(adjudicator_client, round_):
    base = f"/api/rounds/{round_.pk}/evaluation/"
    doc = adjudicator_client.get(f"{base}?pass=gold&compare=parser:lex&orders=5").json()
    assert doc["headline"]["accuracy"]["k"] == 5
    assert doc["compare"]["pass"] == "parser:lex" and doc["compare"]["headline"]["accuracy"]["n"] == 3
    bad = adjudicator_client.get(f"{base}?pass=gold&decay=2")
    assert bad.status_code == 400 and "decay must be in (0, 1]" in bad.json()["detail"]
    bad = adjudicator_client.get(f"{base}?pass=someone")
    assert bad.status_code == 400 and bad.json()["passes"][-1] == "gold"


def test_the_command_prints_nsmcores_table_for_a_pass(round_):
    out = io.StringIO()
    call_command(
        "evaluate", "--round", "eval-round", "--pass", "annotator:alice", "--orders", "20", stdout=out
    )
    text = out.getvalue()
    assert "Evaluation [S, n=6, rule set v1, pass eval-round/annotator:alice" in text
    assert "accuracy                    0.667 [0.22, 0.96]  (4/6)" in text
    assert "selective accuracy          0.800 [0.28, 0.99]  (4/5)" in text
    assert "20 random orders (seed 0)" in text


def test_the_command_compares_two_passes_and_writes_json(round_, tmp_path):
    out = io.StringIO()
    target = tmp_path / "report.json"
    call_command(
        "evaluate", "--round", "eval-round", "--pass", "annotator:alice", "--compare", "annotator:bob",
        "--orders", "10", "--json", str(target), stdout=out,
    )  # fmt: skip
    assert "comparison: A = S, n=6" in out.getvalue()
    assert "0.667 (4/6)" in out.getvalue() and "0.500 (3/6)" in out.getvalue() and "+0.167" in out.getvalue()
    doc = json.loads(target.read_text())
    assert doc["a"]["report"]["headline"]["accuracy"]["k"] == 4
    assert doc["b"]["report"]["headline"]["accuracy"]["k"] == 3


def test_the_command_lists_passes_without_pass(round_):
    out = io.StringIO()
    call_command("evaluate", "--round", "eval-round", stdout=out)
    assert [line.split()[0] for line in out.getvalue().splitlines()] == [
        "annotator:alice", "annotator:bob", "parser:lex", "gold",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--round", "nope", "--pass", "gold"], "no round named 'nope'; rounds: eval-round"),
        (["--round", "eval-round", "--pass", "annotator:zoe"], "pass 'annotator:zoe' is not a pass"),
        (["--round", "eval-round", "--pass", "gold", "--orders", "-3"], "orders must be between 0 and 5000"),
        (["--round", "eval-round", "--pass", "gold", "--swap", "guilt"], "swap 'guilt'"),
    ],
)
def test_the_command_exits_2_on_a_bad_round_pass_or_option(round_, tmp_path, args, message):
    target = tmp_path / "out.json"
    with pytest.raises(CommandError, match=message) as raised:
        call_command("evaluate", *args, "--json", str(target))
    assert raised.value.returncode == 2
    assert not target.exists()
