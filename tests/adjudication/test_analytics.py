"""The agreement pages, API and command for adjudicators, computed from submitted annotations."""

import csv
import io
import itertools
import json
import re
from types import SimpleNamespace

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from adjudication.agreement.analysis import round_analysis, round_table
from adjudication.agreement.views import _chart
from annotator.models import Assignment, Round
from annotator.sampling import item_set_from_items
from annotator.services import annotation_submit, round_create
from nsmcore.agreement import agreement
from tests.explications import PRED
from tests.factories import make_items


def submit(round_, user, values_for):
    """Submit every assignment of ``user`` in ``round_`` with ``values_for(index, item)``."""
    for k, a in enumerate(Assignment.objects.filter(round=round_, annotator=user).order_by("item_id")):
        annotation_submit(assignment=a, user=user, values=values_for(k, a.item), base_version=0)


@pytest.fixture
def adjudicator_client(client, adjudicator):
    client.force_login(adjudicator)
    return client


def test_the_dashboard_shows_the_library_numbers_and_undefined_slots(adjudicator_client, submitted):
    page = adjudicator_client.get(reverse("agreement", args=[submitted.pk])).content.decode()
    expected = agreement(round_table(submitted.pk).table, bootstrap=0)
    agency = next(s for s in expected.slots if s.slot == "agency")
    assert f"{agency.alpha:.3f}" in page
    assert "0.500" in page  # agency raw agreement: 2 of 4 items
    # experiencer: everyone gave the same value
    assert "no variation: every value is i" in page
    assert page.count('class="undefined"') >= 10
    assert 'id="alpha-chart"' in page and 'data-slot="agency"' in page
    # the mean without degenerate slots names what it leaves out, and exactly those are greyed
    dropped = [s.slot for s in expected.slots if s.degenerate]
    assert f'<span id="degenerate-slots">({", ".join(dropped)})</span>' in page
    assert page.count('class="degenerate"') == len(dropped)


def test_the_dashboard_csv_has_a_row_per_slot(adjudicator_client, submitted):
    response = adjudicator_client.get(reverse("agreement_csv", args=[submitted.pk]))
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["slot"] for r in rows][:3] == ["experiencer", "trigger", "agency"]
    agency = next(r for r in rows if r["slot"] == "agency")
    assert agency["raw_agreement"] == "0.5000"
    assert next(r for r in rows if r["slot"] == "experiencer")["alpha"] == ""
    assert agency["minority"] == "2" and "degenerate" in rows[0]  # the values beside the majority


def test_conflicts_filter_by_slot_and_value_pair(adjudicator_client, submitted):
    url = reverse("conflicts", args=[submitted.pk])
    page = adjudicator_client.get(url).content.decode()
    assert '<span id="conflict-count">3</span>' in page
    page = adjudicator_client.get(url, {"slot": "agency"}).content.decode()
    assert '<span id="conflict-count">2</span>' in page
    page = adjudicator_client.get(url, {"slot": "agency", "a": "i", "b": "someone-else"}).content.decode()
    assert '<span id="conflict-count">2</span>' in page
    page = adjudicator_client.get(url, {"slot": "agency", "a": "no-one"}).content.decode()
    assert '<span id="conflict-count">0</span>' in page
    fragment = adjudicator_client.get(url, {"slot": "intensity"}, HTTP_HX_REQUEST="true").content.decode()
    assert fragment.startswith('<section id="conflicts">') and "<html" not in fragment
    refused = adjudicator_client.get(url, {"slot": "mood"})
    assert (
        refused.status_code == 400
        and "slot: unknown slot &#x27;mood&#x27;; slots: experiencer" in refused.content.decode()
    )
    refused = adjudicator_client.get(url, {"slot": "agency", "a": "everyone"})
    assert (
        refused.status_code == 400
        and "&#x27;everyone&#x27; is not a value of agency" in refused.content.decode()
    )
    refused = adjudicator_client.get(reverse("conflicts_csv", args=[submitted.pk]), {"slot": "mood"})
    assert refused.status_code == 400 and refused.content.decode().startswith("bad query: slot:")


def test_conflicts_page_fifty_at_a_time(adjudicator_client, annotator, other_annotator):
    items = make_items(n_copies=15)  # 60 items
    round_ = round_create(name="big", item_set=item_set_from_items(name="s60", items=items),
                          annotators=[annotator, other_annotator], mode="blind")  # fmt: skip
    submit(round_, annotator, lambda k, item: dict(PRED))
    submit(round_, other_annotator, lambda k, item: {**PRED, "body": "yes"})
    url = reverse("conflicts", args=[round_.pk])
    first = adjudicator_client.get(url).content.decode()
    assert first.count("<tr data-item=") == 50
    assert "page 1 of 2" in first
    second = adjudicator_client.get(url, {"page": 2}).content.decode()
    assert second.count("<tr data-item=") == 10


def test_the_item_view_highlights_differing_slots(adjudicator_client, submitted):
    item = Assignment.objects.filter(round=submitted).order_by("item_id").first().item
    page = adjudicator_client.get(reverse("conflict_item", args=[submitted.pk, item.pk])).content.decode()
    assert '<tr data-slot="agency" class="differs">' in page
    assert '<tr data-slot="trigger" class="">' in page
    assert item.masked_text in page  # the text the annotators saw
    assert "alice" in page and "bob" in page


def test_flows_between_annotators_and_against_the_parser(
    adjudicator_client, submitted, annotator, other_annotator
):
    url = reverse("flows", args=[submitted.pk])
    page = adjudicator_client.get(url).content.decode()  # default: the round's first two annotators
    assert '<td>agency</td><td>i</td><td>someone-else</td><td class="num">2</td>' in page
    parser_vs_bob = {
        "a": f"{submitted.pk}:parser",
        "b": f"{submitted.pk}:{other_annotator.pk}",
    }
    flows_csv = reverse("flows_csv", args=[submitted.pk])
    rows = list(
        csv.DictReader(io.StringIO(adjudicator_client.get(flows_csv, parser_vs_bob).content.decode()))
    )
    assert {(r["slot"], r["value_in_a"], r["value_in_b"], r["count"]) for r in rows} == {
        ("agency", "i", "someone-else", "2"),
        ("intensity", "plain", "very", "1"),
    }
    passes_csv = reverse("passes_csv", args=[submitted.pk])
    rows = list(
        csv.DictReader(io.StringIO(adjudicator_client.get(passes_csv, parser_vs_bob).content.decode()))
    )
    by_slot = {r["slot"]: r for r in rows}
    assert by_slot["agency"]["raw_agreement"] == "0.5000"
    assert by_slot["trigger"]["alpha"] == "" and by_slot["trigger"]["undefined"].startswith("no variation")


def test_anchoring_shows_retention_beside_agreement_and_the_blind_control(
    adjudicator_client, submitted, blind_round, annotator, other_annotator
):
    submit(blind_round, annotator, lambda k, item: dict(PRED))
    submit(blind_round, other_annotator, lambda k, item: {**PRED, "want": "not-want" if k < 2 else "want"})
    response = adjudicator_client.get(reverse("anchoring", args=[submitted.pk]), {"control": blind_round.pk})
    page = response.content.decode()
    assert '<td>alice</td><td class="num">4</td>' in page
    assert 'id="arms-table"' in page and "4 items in both rounds" in page
    rows = list(
        csv.reader(
            io.StringIO(
                adjudicator_client.get(reverse("anchoring_csv", args=[submitted.pk])).content.decode()
            )
        )
    )
    header, alice, bob, raw = rows
    agency = header.index("agency")
    assert (alice[agency], bob[agency], raw[agency]) == ("1.0000", "0.5000", "0.5000")
    with_control = adjudicator_client.get(
        reverse("anchoring_csv", args=[submitted.pk]), {"control": blind_round.pk}
    )
    arm_rows = list(csv.reader(io.StringIO(with_control.content.decode())))[-2:]
    assert arm_rows[0][0].startswith("alpha, prefilled") and arm_rows[1][0].startswith("alpha, blind")
    want = header.index("want")
    assert arm_rows[0][want] == ""  # no variation on want in the prefilled round: undefined
    assert arm_rows[1][want] != ""


def test_the_analysis_is_recomputed_after_a_new_submission(adjudicator_client, submitted, other_annotator):
    before = round_analysis(submitted)
    a = Assignment.objects.filter(round=submitted, annotator=other_annotator).order_by("item_id").first()
    annotation_submit(assignment=a, user=other_annotator, values=dict(PRED), base_version=1)
    after = round_analysis(submitted)
    assert len(before.conflicts.items) == 3 and len(after.conflicts.items) == 2


def test_the_api_gives_the_same_numbers(adjudicator_client, submitted):
    body = adjudicator_client.get(reverse("api_agreement", args=[submitted.pk])).json()
    agency = next(s for s in body["slots"] if s["slot"] == "agency")
    assert agency["raw"] == 0.5 and body["conflicts"]["items"] == 3
    assert next(s for s in body["slots"] if s["slot"] == "experiencer")["alpha"] is None
    conflicts = adjudicator_client.get(
        reverse("api_conflicts", args=[submitted.pk]), {"slot": "agency"}
    ).json()
    assert conflicts["count"] == 2 and conflicts["results"][0]["values"]["agency"] == ["i", "someone-else"]
    api_conflicts = reverse("api_conflicts", args=[submitted.pk])
    assert adjudicator_client.get(api_conflicts, {"slot": "mood"}).status_code == 400
    # the page's form: a value not of the slot, or a page that is no number, is named (they were ignored)
    refused = adjudicator_client.get(api_conflicts, {"slot": "intensity", "b": "loud", "page": "null"})
    assert refused.status_code == 400 and set(refused.json()) == {"detail", "b", "page"}
    flows = adjudicator_client.get(reverse("api_flows", args=[submitted.pk])).json()
    assert flows["items"] == 4 and flows["flows"][0]["count"] == 2
    anchoring = adjudicator_client.get(reverse("api_anchoring", args=[submitted.pk])).json()
    assert {a["annotator"] for a in anchoring["annotators"]} == {"alice", "bob"}


def test_the_command_prints_the_table_and_json(submitted, capsys):
    call_command("agreement", submitted.name)
    out = capsys.readouterr().out
    assert "agency" in out and "undefined" in out and "3 items with conflicts" in out
    call_command("agreement", submitted.name, "--json")
    doc = json.loads(capsys.readouterr().out)
    assert doc["conflicts"]["items"] == 3 and len(doc["slots"]) == 12
    # the mean without degenerate slots names the slots it leaves out (issue 26)
    dropped = [s["slot"] for s in doc["slots"] if s["degenerate"]]
    assert dropped and doc["degenerate_slots"] == dropped
    assert f"without the variance-degenerate slots, {', '.join(dropped)}:" in out


@pytest.mark.parametrize("persona", ["annotator", "outsider"])
def test_annotators_reach_none_of_it(client, persona, request, submitted):
    client.force_login(request.getfixturevalue(persona))
    item = Assignment.objects.filter(round=submitted).first().item_id
    pages = [reverse("adjudicate")]
    pages += [reverse(name, args=[submitted.pk]) for name in ("agreement", "conflicts", "flows", "anchoring")]
    tables = ("agreement", "conflicts", "flows", "passes", "anchoring")
    pages += [reverse(f"{table}_csv", args=[submitted.pk]) for table in tables]
    pages += [reverse("conflict_item", args=[submitted.pk, item])]
    for url in pages:
        assert client.get(url).status_code == 403, url
    for name in ("api_agreement", "api_conflicts", "api_flows", "api_anchoring"):
        assert client.get(reverse(name, args=[submitted.pk])).status_code == 403, name


def test_ordinal_intensity_changes_only_intensity(adjudicator_client, submitted):
    nominal = round_analysis(submitted).report
    ordinal = round_analysis(submitted, levels={"intensity": "ordinal"}).report
    assert ordinal.slots[-1].level == "ordinal"
    assert [s.alpha for s in nominal.slots[:-1]] == [s.alpha for s in ordinal.slots[:-1]]
    assert np.isclose(nominal.slots[2].alpha, ordinal.slots[2].alpha)
    page = adjudicator_client.get(
        reverse("agreement", args=[submitted.pk]), {"intensity": "ordinal"}
    ).content.decode()
    assert "intensity read as ordinal" in page


def test_an_empty_round_says_so(adjudicator_client, items, annotator, other_annotator):
    round_ = Round.objects.create(name="empty", item_set=item_set_from_items(name="e", items=items))
    page = adjudicator_client.get(reverse("agreement", args=[round_.pk])).content.decode()
    assert "No submissions yet: no annotator is assigned to this round (2 per item)." in page


CONTROL_NEEDED = "A blind control needs a blind round over the same items, annotated by other annotators"


def control_options(page):
    select = re.search(r'<select name="control"[^>]*>(.*?)</select>', page, re.S)
    return select.group(1) if select else None


def test_the_blind_control_offers_only_blind_rounds_sharing_items_with_how_many(
    adjudicator_client, submitted, blind_round, items, annotator, other_annotator
):
    submit(blind_round, annotator, lambda k, item: dict(PRED))
    submit(blind_round, other_annotator, lambda k, item: dict(PRED))
    # a blind round with no submitted item in common: it cannot be a control
    Round.objects.create(name="unrelated", item_set=item_set_from_items(name="u", items=items[:1]))
    response = adjudicator_client.get(reverse("anchoring", args=[submitted.pk]))
    options = control_options(response.content.decode())
    assert response.status_code == 200
    assert f'<option value="{blind_round.pk}">blind (4 items in both rounds)</option>' in options
    assert "unrelated" not in options


def test_without_a_blind_round_over_the_same_items_the_page_says_what_a_control_needs(
    adjudicator_client, submitted, items
):
    unrelated = Round.objects.create(name="unrelated", item_set=item_set_from_items(name="u", items=items))
    url = reverse("anchoring", args=[submitted.pk])
    page = adjudicator_client.get(url).content.decode()
    assert CONTROL_NEEDED in page and control_options(page) is None
    # a hand-made address choosing it gets the same explanation, not an empty table
    chosen = adjudicator_client.get(url, {"control": unrelated.pk})
    text = chosen.content.decode()
    assert chosen.status_code == 400
    assert "unrelated shares no submitted item with prefilled" in text and CONTROL_NEEDED in text
    assert 'id="arms-table"' not in text and "undefined" not in text
    assert adjudicator_client.get(url, {"control": "abc"}).status_code == 400
    csv_url = reverse("anchoring_csv", args=[submitted.pk])
    assert adjudicator_client.get(csv_url, {"control": unrelated.pk}).status_code == 400


def tick_labels(page):
    return re.findall(r'class="tick">([^<]*)</text>', page)


@pytest.mark.parametrize(
    "lowest, labels",
    [
        (0.2, ["0", "0.25", "0.5", "0.75", "1"]),
        (-0.1, ["-0.5", "-0.25", "0", "0.25", "0.5", "0.75", "1"]),
        (-0.8, ["-1", "-0.5", "0", "0.5", "1"]),
    ],
)
def test_the_chart_ticks_are_evenly_spaced_and_unique(lowest, labels):
    slot = SimpleNamespace(slot="agency", alpha=lowest, ci_low=lowest, ci_high=0.9, degenerate=False)
    chart = _chart(SimpleNamespace(slots=[slot]))
    assert [t["label"] for t in chart["ticks"]] == labels
    gaps = {round(b["x"] - a["x"], 6) for a, b in itertools.pairwise(chart["ticks"])}
    assert len(gaps) == 1


def test_the_dashboard_chart_draws_each_tick_once(adjudicator_client, submitted):
    page = adjudicator_client.get(reverse("agreement", args=[submitted.pk])).content.decode()
    labels = tick_labels(page)
    assert len(labels) == len(set(labels)) and labels[-1] == "1"


def test_an_empty_round_leaves_the_resample_note_out(adjudicator_client, items):
    round_ = Round.objects.create(name="empty", item_set=item_set_from_items(name="e", items=items))
    page = adjudicator_client.get(reverse("agreement", args=[round_.pk])).content.decode()
    assert "resamples" not in page and "No submissions yet" in page


def test_the_same_pass_for_a_and_b_is_refused_with_no_figure(adjudicator_client, submitted, annotator):
    key = f"{submitted.pk}:{annotator.pk}"
    url = reverse("flows", args=[submitted.pk])
    response = adjudicator_client.get(url, {"a": key, "b": key})
    page = response.content.decode()
    assert response.status_code == 400
    assert "pass A and pass B are the same pass (prefilled: alice): choose two different passes" in page
    assert 'id="pass-agreement"' not in page and 'id="flow-table"' not in page and "1.000" not in page
    assert (
        adjudicator_client.get(reverse("flows_csv", args=[submitted.pk]), {"a": key, "b": key}).status_code
        == 400
    )
    api = adjudicator_client.get(reverse("api_flows", args=[submitted.pk]), {"a": key, "b": key})
    assert api.status_code == 400 and "same pass" in api.json()["detail"]


def test_the_flows_page_compares_two_different_passes_by_default(
    adjudicator_client, prefilled_round, annotator
):
    # one annotator has submitted: two passes (alice and the parser); B is not A by default
    submit(prefilled_round, annotator, lambda k, item: dict(PRED))
    response = adjudicator_client.get(reverse("flows", args=[prefilled_round.pk]))
    page = response.content.decode()
    assert response.status_code == 200 and "(prefilled: alice vs prefilled: parser prefill)" in page
