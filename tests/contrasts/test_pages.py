"""The minimal pairs' pages: what each role may open, GET renders, POST creates (status, database
and the page), the scores loaded by htmx and without it, no inline code, every word marked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse

from contrasts.models import MinimalPair, PairSet
from contrasts.services import pair_set_freeze
from nsmcore.schema import SLOT_NAMES
from tests.app.test_every_string_marked import unmarked
from tests.security import inline_code

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "contrasts"


def form_post(pair_set, **change) -> dict:
    """The add-pair form as a browser posts it: every slot's two selects, most left empty."""
    data = {f"{side}_{name}": "" for name in SLOT_NAMES for side in ("to", "from")}
    data |= {
        "item": "t1-0",
        "text": "I was happy when my sister won the chess final.",
        "to_agency": "someone-else",
        "expected": "joy",
        "family": "",
        "note": "",
    }
    return data | change


def test_only_adjudicators_and_admins_open_the_pages(client, annotator, adjudicator, admin_user, pair_set):
    urls = [
        reverse("contrasts"),
        reverse("contrast_set", args=[pair_set.pk]),
        reverse("contrast_scores", args=[pair_set.pk]),
        reverse("contrast_split", args=[pair_set.pk]),
    ]
    for url in urls:
        assert client.get(url).status_code == 302  # to the login page
    client.force_login(annotator)
    for url in urls:
        assert client.get(url).status_code == 403
    assert client.post(reverse("contrasts"), {"name": "mine"}).status_code == 403
    assert (
        client.post(reverse("contrast_pair_add", args=[pair_set.pk]), form_post(pair_set)).status_code == 403
    )
    assert PairSet.objects.count() == 1 and MinimalPair.objects.count() == 3
    for user in (adjudicator, admin_user):
        client.force_login(user)
        for url in urls:
            assert client.get(url).status_code == 200, (user, url)


def test_the_list_shows_the_sets_and_creates_one(client, adjudicator, pair_set):
    client.force_login(adjudicator)
    page = client.get(reverse("contrasts")).content.decode()
    assert 'data-set="pilot-pairs@v1"' in page and inline_code(page) == []
    made = client.post(reverse("contrasts"), {"name": "agency-flips", "note": "mine"})
    fresh = PairSet.objects.get(name="agency-flips")
    assert made.status_code == 302 and made["Location"] == reverse("contrast_set", args=[fresh.pk])
    refused = client.post(reverse("contrasts"), {"name": "Agency Flips"})
    assert refused.status_code == 400 and "use 1-63 lower-case letters" in refused.content.decode()
    taken = client.post(reverse("contrasts"), {"name": "agency-flips"})
    assert taken.status_code == 400 and "a set named agency-flips exists" in taken.content.decode()
    assert PairSet.objects.count() == 2


def test_the_set_page_lists_its_pairs_and_adds_one(client, adjudicator, pair_set):
    client.force_login(adjudicator)
    url = reverse("contrast_set", args=[pair_set.pk])
    page = client.get(url).content.decode()
    assert page.count('data-pair="') == 3 and "agency: i → someone-else" in page
    assert "invariance: nothing changes" in page and 'id="pair-form"' in page
    assert '<option value="joy">joy</option>' in page  # the expected label: the active rule set's emotions
    assert f'hx-get="{reverse("contrast_scores", args=[pair_set.pk])}"' in page and inline_code(page) == []
    added = client.post(reverse("contrast_pair_add", args=[pair_set.pk]), form_post(pair_set, family="F1"))
    pair = MinimalPair.objects.latest("id")
    assert added.status_code == 302 and added["Location"] == f"{url}#pair-{pair.pk}"
    assert (pair.family, pair.targets, pair.expected, pair.created_by) == (
        "F1", {"agency": ["i", "someone-else"]}, "joy", adjudicator,
    )  # fmt: skip
    invariant = form_post(
        pair_set, to_agency="", expected="", invariance="on", text="I felt proud as I won it."
    )
    assert client.post(reverse("contrast_pair_add", args=[pair_set.pk]), invariant).status_code == 302
    assert MinimalPair.objects.latest("id").invariance


def test_a_bad_pair_is_shown_on_its_field_and_nothing_is_written(client, adjudicator, pair_set):
    client.force_login(adjudicator)
    refused = client.post(
        reverse("contrast_pair_add", args=[pair_set.pk]),
        form_post(pair_set, to_agency="i", expected="elation"),
    )
    assert refused.status_code == 400
    page = refused.content.decode()
    assert '<div class="error" data-field="to_agency">i on both sides' in page
    assert "&#x27;elation&#x27; is not an emotion of the active rule set" in page
    unknown = client.post(reverse("contrast_pair_add", args=[pair_set.pk]), form_post(pair_set, item="nope"))
    assert (
        unknown.status_code == 400
        and "no item with id or source id &#x27;nope&#x27;" in unknown.content.decode()
    )
    assert MinimalPair.objects.count() == 3


def test_the_item_preview_shows_its_text_and_gold(client, adjudicator, pair_set):
    client.force_login(adjudicator)
    url = reverse("contrast_set", args=[pair_set.pk])
    page = client.get(
        url, {"item": "t1-0", "text": "My rewrite", "to_agency": "someone-else"}
    ).content.decode()
    assert "I was proud when I won the chess final." in page and "<code>agency=i</code>" in page
    assert ">\nMy rewrite</textarea>" in page and '<option value="someone-else" selected>' in page
    fragment = client.get(url, {"item": "t2-0"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="item-preview")
    body = fragment.content.decode()
    assert "<html" not in body and 'id="item-preview"' in body and "stolen by a neighbour" in body


def test_freeze_and_new_version_from_the_page(client, adjudicator, pair_set):
    client.force_login(adjudicator)
    url = reverse("contrast_set", args=[pair_set.pk])
    assert client.post(reverse("contrast_set_freeze", args=[pair_set.pk])).status_code == 302
    pair_set.refresh_from_db()
    assert not pair_set.is_open
    page = client.get(url).content.decode()
    assert 'id="pair-form"' not in page and reverse("contrast_set_new_version", args=[pair_set.pk]) in page
    again = client.post(reverse("contrast_set_freeze", args=[pair_set.pk]), follow=True)
    assert "already frozen" in again.content.decode()
    made = client.post(reverse("contrast_set_new_version", args=[pair_set.pk]))
    second = PairSet.objects.get(name="pilot-pairs", version=2)
    assert made["Location"] == reverse("contrast_set", args=[second.pk]) and second.pairs.count() == 3
    # a pair posted to a set frozen since the page was opened: a conflict, said on the set's page
    refused = client.post(reverse("contrast_pair_add", args=[pair_set.pk]), form_post(pair_set))
    assert refused.status_code == 409 and "is frozen: open a new version" in refused.content.decode()
    assert pair_set.pairs.count() == 3


def test_scores_per_parser_by_htmx_and_as_a_page(client, adjudicator, pair_set, tiny_parser):
    client.force_login(adjudicator)
    url = reverse("contrast_scores", args=[pair_set.pk])
    fragment = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and 'id="scores"' in fragment
    assert 'data-parser="lexical"' in fragment and 'data-parser="tiny@1"' in fragment
    for family in ("F-agency", "F-intensity", "invariance"):
        assert fragment.count(f'data-family="{family}"') == 2  # a row per parser
    assert fragment.count('data-rate="causal"') == 8  # three families and all pairs, two parsers
    # the all-pairs row is a table's total row, not the page's card grid (class summary), which
    # drew it as a column of stacked cells below the table
    assert fragment.count('class="overall"') == 2 and 'class="summary"' not in fragment
    page = client.get(url, {"parser": "lexical"}).content.decode()
    assert "<html" in page and 'data-parser="tiny@1"' not in page and inline_code(page) == []
    refused = client.get(url, {"parser": "nope"})
    assert refused.status_code == 400
    assert "parser: no parser &#x27;nope&#x27;; parsers: lexical, tiny@1" in refused.content.decode()
    line = client.get(url, {"parser": "x" * 201}, HTTP_HX_REQUEST="true")  # the fragment: one line
    assert line.status_code == 400 and line["Content-Type"].startswith("text/plain")
    assert "parser: Ensure this value has at most 200 characters" in line.content.decode()


def test_a_parser_that_cannot_run_is_listed_not_a_500(client, adjudicator, pair_set, tmp_path):
    from registry.services import parser_register

    parser_register(name="gone", backend="classifier", folder=tmp_path / "missing", card={}, trained_on=[])
    client.force_login(adjudicator)
    page = client.get(reverse("contrast_scores", args=[pair_set.pk]))
    assert page.status_code == 200 and 'data-parser="gone@1"' in page.content.decode()
    assert "Not scored:" in page.content.decode()


def test_the_split_downloads_as_jsonl(client, adjudicator, pair_set):
    pair_set_freeze(user=adjudicator, pair_set=pair_set)
    client.force_login(adjudicator)
    response = client.get(reverse("contrast_split", args=[pair_set.pk]))
    assert response["Content-Disposition"] == 'attachment; filename="contrast-pilot-pairs-v1.jsonl"'
    records = [json.loads(line) for line in response.content.decode().splitlines()]
    assert [r["frozen"] for r in records] == [True] * 3 and records[2]["x_prime"]["emotion"] == "pride"


def test_every_word_of_the_templates_is_marked():
    left = {p.name: unmarked(p.read_text()) for p in sorted(TEMPLATES.glob("*.html"))}
    assert {name: words for name, words in left.items() if words} == {}


def test_a_crawl_of_the_pages_writes_nothing_and_finds_no_broken_link(
    client, adjudicator, pair_set, tiny_parser
):
    from tests.app.test_get_writes_nothing import _writes_during

    client.force_login(adjudicator)
    status, writes = _writes_during(
        client, [reverse("contrasts"), reverse("contrast_set", args=[pair_set.pk])]
    )
    assert writes == [], writes
    assert {url: code for url, code in status.items() if code != 200} == {}
    assert reverse("contrast_scores", args=[pair_set.pk]) in status


def test_show_the_item_posts_the_form_so_its_token_stays_out_of_the_address(client, adjudicator, pair_set):
    """The walkthrough found "Show the item" sending the whole form by GET, CSRF token included,
    into the address bar, the server's log and the next page's Referer."""
    client.force_login(adjudicator)
    page = client.get(reverse("contrast_set", args=[pair_set.pk])).content.decode()
    assert 'formmethod="get"' not in page and 'name="show"' in page
    before = MinimalPair.objects.count()
    shown = client.post(
        reverse("contrast_pair_add", args=[pair_set.pk]),
        {"show": "1", "item": "t1-0", "text": "My rewrite", "to_agency": "someone-else"},
    )
    body = shown.content.decode()
    assert shown.status_code == 200 and "I was proud when I won the chess final." in body
    assert ">\nMy rewrite</textarea>" in body and '<option value="someone-else" selected>' in body
    assert 'class="error"' not in body  # an unfinished form is shown, not judged
    assert MinimalPair.objects.count() == before


def test_an_unknown_item_is_said_once(client, adjudicator, pair_set):
    """The walkthrough saw the same "no item" line twice: under the field and in the preview."""
    client.force_login(adjudicator)
    page = client.post(reverse("contrast_pair_add", args=[pair_set.pk]), form_post(pair_set, item="nope"))
    assert page.status_code == 400
    assert page.content.decode().count("no item with id or source id &#x27;nope&#x27;") == 1
    shown = client.post(reverse("contrast_pair_add", args=[pair_set.pk]), {"show": "1", "item": "nope"})
    assert shown.content.decode().count("no item with id or source id &#x27;nope&#x27;") == 1
