"""The pages: who sees what, the figures as rendered, the digest, the CSV and bad queries."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from nsmcore.schema import SLOT_NAMES
from tests.profiles.conftest import RULE


def page(client, user, url, **params):
    client.force_login(user)
    return client.get(url, params)


def rows_of(html: str, table_id: str) -> str:
    start = html.index(f'id="{table_id}"')
    return html[start : html.index("</table>", start)]


def test_an_adjudicator_lists_every_annotator_with_headline_figures(client, team, adjudicator):
    response = page(client, adjudicator, reverse("profiles"))
    assert response.status_code == 200
    html = response.content.decode()
    table = rows_of(html, "profiles-table")
    assert 'data-annotator="alice"' in table and 'data-annotator="bob"' in table
    assert "silverbot" not in table  # a silver pass's model annotator is nobody's profile
    assert 'href="/profiles/alice/"' in table
    assert "45/48" in table and "48/48" in table  # agreement with gold, pooled
    assert "Silver passes, a model annotator's work, are left out: S." in html
    assert 'data-round="P"' in html and 'data-round="B"' in html


def test_an_annotator_lists_only_themselves(client, team, annotator):
    html = page(client, annotator, reverse("profiles")).content.decode()
    table = rows_of(html, "profiles-table")
    assert 'data-annotator="alice"' in table and "bob" not in table


@pytest.mark.parametrize(
    "url", ["/profiles/", "/profiles/alice/", "/profiles/me/", "/profiles/alice/slots.csv"]
)
def test_no_role_no_profile(client, team, outsider, url):
    assert page(client, outsider, url).status_code == 403


def test_an_anonymous_reader_is_sent_to_log_in(client, team):
    response = client.get("/profiles/alice/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_an_annotator_opens_only_their_own_profile(client, team, annotator):
    assert page(client, annotator, "/profiles/alice/").status_code == 200
    assert page(client, annotator, "/profiles/bob/").status_code == 404
    assert page(client, annotator, "/profiles/bob/slots.csv").status_code == 404
    assert page(client, annotator, "/profiles/nobody/").status_code == 404
    me = page(client, annotator, "/profiles/me/", round=team["P"].pk)
    assert me.status_code == 302 and me["Location"] == f"/profiles/alice/?round={team['P'].pk}"


def test_an_adjudicator_opens_any_annotators_profile_but_no_one_elses(client, team, adjudicator, admin_user):
    assert page(client, adjudicator, "/profiles/bob/").status_code == 200
    assert page(client, admin_user, "/profiles/alice/").status_code == 200
    assert page(client, adjudicator, "/profiles/dana/").status_code == 404  # an admin, no annotator
    assert page(client, adjudicator, "/profiles/nobody/").status_code == 404


def test_the_profile_shows_the_slot_table_flows_time_and_chart(client, team, adjudicator):
    html = page(client, adjudicator, "/profiles/alice/").content.decode()
    table = rows_of(html, "slot-table")
    agency = table[table.index('data-slot="agency"') : table.index('data-slot="realization"')]
    assert "0.750" in agency and "3/4" in agency  # agreement with gold
    assert "0.500" in agency and "2/4" in agency  # kept
    assert "-0.250" in agency  # kept minus control
    assert "0/2" in agency  # overturned
    pooled = table[table.index('data-slot="all"') :]
    assert "45/48" in pooled and "44/48" in pooled and "1/45" in pooled and "0.021" in pooled
    flows = rows_of(html, "flows-table")
    assert "someone-else" in flows and "→ i" in flows
    assert '<strong id="median-time">40.0</strong>' in html
    assert 'id="throughput-chart"' in html
    assert html.count('data-day="') == 3 and 'data-items="6"' in html and 'data-items="0"' in html
    assert 'href="/profiles/alice/slots.csv"' in html


def test_the_annotator_reads_their_digest_with_links_they_may_open(client, team, annotator):
    html = page(client, annotator, "/profiles/alice/").content.decode()
    digest = html[html.index('id="digest"') :]
    assert "What adjudication decided where you differed from gold" in digest
    assert digest.index('data-item="t4-0"') < digest.index('data-item="t3-0"')
    assert RULE.replace("'", "&#x27;") in digest and "The team settled it by convention C1 v1 (i)" in digest
    assert "Decided by carol:" in digest and "a plain reading" in digest and "the text says very" in digest
    assert f'href="/work/a/{team["alice_p"][3].pk}/"' in digest  # her own annotation
    assert 'href="/guidelines/#conventions"' in digest
    assert "/adjudicate/" not in digest  # gold and convention pages are not hers to open


def test_the_adjudicator_reading_the_digest_gets_the_gold_and_convention_links(client, team, adjudicator):
    html = page(client, adjudicator, "/profiles/alice/").content.decode()
    digest = html[html.index('id="digest"') :]
    assert "where this annotator differed from gold" in digest
    assert f'href="/adjudicate/conventions/{team["convention"].pk}/"' in digest
    assert f'href="/adjudicate/rounds/{team["P"].pk}/gold/' in digest
    assert "/work/a/" not in digest


def test_the_digest_alone_for_htmx(client, team, annotator, monkeypatch):
    monkeypatch.setattr("profiles.selectors.DIGEST_PAGE", 1)
    client.force_login(annotator)
    response = client.get("/profiles/alice/", {"page": 2}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="digest")
    html = response.content.decode()
    assert response.status_code == 200 and html.startswith('<section id="digest">')
    assert 'data-item="t3-0"' in html and 'data-item="t4-0"' not in html
    assert "page 2 of 2" in html and 'href="?page=1#digest"' in html


def test_one_round_narrows_every_figure(client, team, adjudicator):
    html = page(client, adjudicator, "/profiles/alice/", round=team["P"].pk).content.decode()
    assert '<strong id="submitted">4</strong>' in html
    assert "No blind round in scope" in html
    assert f'href="/profiles/alice/slots.csv?round={team["P"].pk}"' in html


@pytest.mark.parametrize(
    "params, problem",
    [
        ({"round": "x"}, "round: there is no round &#x27;x&#x27;"),
        ({"round": "99999"}, "round: there is no round &#x27;99999&#x27;"),
        ({"page": "0"}, "page: Ensure this value is greater than or equal to 1."),
        ({"page": "3"}, "page: there is no page 3; pages 1 to 1"),
    ],
)
def test_a_bad_query_is_a_400_naming_it(client, team, adjudicator, params, problem):
    response = page(client, adjudicator, "/profiles/alice/", **params)
    assert response.status_code == 400 and problem in response.content.decode()


def test_a_round_given_by_name_is_told_to_give_its_id_with_the_ids_listed(client, team, adjudicator):
    """The query takes an id; the refusal had listed names, so the name it refused looked valid."""
    response = page(client, adjudicator, "/profiles/alice/", round="P")
    ids = ", ".join(f"{team[n].pk} ({n})" for n in ("B", "P", "S"))
    text = response.content.decode()
    assert response.status_code == 400
    assert f"round: there is no round &#x27;P&#x27; (give a round&#x27;s id); rounds: {ids}" in text


def test_a_silver_pass_is_refused_by_name(client, team, adjudicator):
    response = page(client, adjudicator, "/profiles/", round=team["S"].pk)
    assert response.status_code == 400
    assert "round: S is a silver pass (a model annotator)" in response.content.decode()
    csv_refused = page(client, adjudicator, "/profiles/alice/slots.csv", round=team["S"].pk)
    assert csv_refused.status_code == 400 and csv_refused["Content-Type"].startswith("text/plain")


def test_the_csv_holds_the_per_slot_table(client, team, annotator):
    response = page(client, annotator, "/profiles/alice/slots.csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert 'filename="profile-alice.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["slot"] for r in rows] == [*SLOT_NAMES, "all slots"]
    agency = rows[2]
    assert agency["slot"] == "agency"
    assert (agency["gold_k"], agency["gold_n"], agency["gold_share"]) == ("3", "4", "0.7500")
    assert (agency["kept_k"], agency["kept_n"], agency["control_k"], agency["control_n"]) == (
        "2",
        "4",
        "3",
        "4",
    )
    assert (agency["control_source"], agency["difference"]) == ("own", "-0.2500")
    assert (agency["overturned_k"], agency["overturned_n"]) == ("0", "2")
    assert agency["gold_low"] == "0.1941" and agency["gold_high"] == "0.9937"
    assert (rows[-1]["gold_k"], rows[-1]["gold_n"], rows[-1]["overturned_k"]) == ("45", "48", "1")
