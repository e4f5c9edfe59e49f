"""Issue 26's acceptance for minimal pairs: an adjudicator writes three pairs in the browser (one an
invariance pair), the lexical and a trained classifier parser are scored on them, and a rule
revision's report lists the pair whose label it changes."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from adjudication.rule_revisions.services import revision_propose
from contrasts.models import MinimalPair, PairSet
from nsmcore.parsers.classifier_training import train_classifier
from registry.services import parser_register
from tests.browser.test_gold import log_in
from tests.contrasts.conftest import tiny_examples
from tests.rules.data import moved

pytestmark = pytest.mark.django_db(transaction=True)


def add_pair(page, item: str, text: str, *, to: dict[str, str] | None = None, expected: str = "") -> None:
    form = page.locator("#pair-form")
    form.locator("input[name=item]").fill(item)
    form.locator("textarea[name=text]").fill(text)
    # leaving the item's field fetches its preview (htmx), which grows the form above the fields
    # below: wait for it, or a click can land where the checkbox was (CI: "Clicking the checkbox
    # did not change its state")
    expect(page.locator("#item-preview strong")).to_have_text(item)
    if to is None:
        form.locator("input[name=invariance]").check()
    else:
        for slot, value in to.items():
            form.locator(f"select[name=to_{slot}]").select_option(value)
        form.locator("select[name=expected]").select_option(expected)
    count = page.locator("#pairs tbody tr[data-pair]").count()
    form.locator("button[type=submit]:has-text('Add the pair')").click()
    expect(page.locator("#pairs tbody tr[data-pair]")).to_have_count(count + 1)


def test_an_adjudicator_writes_pairs_scores_two_parsers_and_a_revision_lists_a_changed_pair(
    page, live_server, gold_round, adjudicator, admin_user, tmp_path
):
    folder = tmp_path / "tiny"
    train_classifier(tiny_examples(), seed=0).save(folder)
    parser_register(name="tiny", backend="classifier", folder=folder, card={}, trained_on=[], user=admin_user)

    log_in(page, live_server, "carol")
    page.click("nav >> text=Minimal pairs")
    page.fill("#new-set input[name=name]", "pilot-pairs")
    page.click("#new-set button[type=submit]")
    expect(page.locator("h1")).to_contain_text("pilot-pairs")
    # the invariance checkbox sits on its label's line, before it (the walkthrough saw it above)
    box = page.locator("#pair-form input[name=invariance]").bounding_box()
    label = page.locator("#pair-form label[for=id_invariance]").bounding_box()
    assert abs((box["y"] + box["height"] / 2) - (label["y"] + label["height"] / 2)) < 6, (box, label)
    assert label["x"] > box["x"]
    # Show the item posts the form: the item appears, and the address carries no token
    page.fill("#pair-form input[name=item]", "t1-0")
    page.click("#pair-form button[name=show]")
    expect(page.locator("#item-preview")).to_contain_text("I was proud when I won the chess final.")
    assert "csrfmiddlewaretoken" not in page.url
    add_pair(page, "t1-0", "I was happy when my sister won the chess final.", to={"agency": "someone-else"},
             expected="joy")  # fmt: skip
    add_pair(page, "t3-0", "I was glad when it snowed on my birthday.")  # nothing should change
    add_pair(page, "t3-0", "I was over the moon when it snowed on my birthday.", to={"intensity": "very"},
             expected="pride")  # fmt: skip
    pairs = MinimalPair.objects.filter(pair_set__name="pilot-pairs").order_by("id")
    assert [(p.invariance, dict(p.targets)) for p in pairs] == [
        (False, {"agency": ["i", "someone-else"]}), (True, {}), (False, {"intensity": ["plain", "very"]}),
    ]  # fmt: skip

    # both parsers scored, each with its families and the overall row
    page.reload()
    for parser in ("lexical", "tiny@1"):
        scores = page.locator(f"#scores .parser-scores[data-parser='{parser}'] table.scores-table")
        expect(scores).to_be_visible()
        expect(scores).to_contain_text("invariance")

    # a revision that puts joy's rule first lists the pair whose label it changes
    version = revision_propose(user=adjudicator, document=moved("joy", 0), note="joy first")
    page.goto(live_server.url + reverse("rule_revision", args=[version.version]))
    changed = page.locator("#check-contrasts-rows")
    expect(changed).to_contain_text("I was over the moon when it snowed on my birthday.")
    assert PairSet.objects.get(name="pilot-pairs").is_open
