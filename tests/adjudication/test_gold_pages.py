"""The convention and gold pages: who may do what, and what a page shows after each step."""

import re

import pytest
from django.urls import reverse

from adjudication.gold.services import convention_propose, gold_sync
from adjudication.models import Convention, GoldChange, GoldItem, Vote
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES


@pytest.mark.parametrize("persona", ["annotator", "outsider"])
def test_annotators_see_none_of_it(client, persona, request, accepted, submitted):
    client.force_login(request.getfixturevalue(persona))
    gold_sync(submitted)
    item = GoldItem.objects.filter(round=submitted).first().item_id
    for url in [
        reverse("conventions"),
        reverse("convention", args=[accepted.pk]),
        reverse("gold_list", args=[submitted.pk]),
        reverse("gold_item", args=[submitted.pk, item]),
    ]:
        assert client.get(url).status_code == 403, url
    for name in ("convention_vote", "convention_apply", "convention_revise", "convention_withdraw"):
        assert client.post(reverse(name, args=[accepted.pk]), {"approve": "yes"}).status_code == 403, name
    assert client.post(reverse("gold_item", args=[submitted.pk, item]), {"agency": "i"}).status_code == 403
    assert client.post(reverse("conventions"), {"slot": "body"}).status_code == 403
    accepted.refresh_from_db()
    assert accepted.applied_at is None


def test_admins_read_but_only_adjudicators_act(client, admin_user, accepted, submitted):
    client.force_login(admin_user)
    assert client.get(reverse("convention", args=[accepted.pk])).status_code == 200
    assert client.post(reverse("convention_apply", args=[accepted.pk])).status_code == 403
    assert client.post(reverse("conventions"), {"slot": "body"}).status_code == 403


def test_a_flow_link_prefills_the_proposal_and_the_page_proposes(
    client, adjudicator, submitted, other_annotator
):
    client.force_login(adjudicator)
    flows = client.get(reverse("flows", args=[submitted.pk])).content.decode()
    assert "propose a convention" in flows
    url = (
        reverse("conventions")
        + f"?round={submitted.pk}&slot=agency&value_a=i&value_b=someone-else&chosen=someone-else&from=flow"
    )
    page = client.get(url).content.decode()
    assert 'value="someone-else"' in page and "From a flow" in page
    response = client.post(reverse("conventions"), {
        "round": submitted.pk, "slot": "agency", "value_a": "i", "value_b": "someone-else", "chosen": "i",
        "rule": "The writer's own act takes agency=i.", "from": "flow",
    })  # fmt: skip
    convention = Convention.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("convention", args=[convention.pk])
    assert convention.source == {"from": "flow"}
    bad = client.post(reverse("conventions"), {
        "round": submitted.pk, "slot": "agency", "value_a": "i", "value_b": "someone-else",
        "chosen": "no-one", "rule": "x",
    })  # fmt: skip
    assert bad.status_code == 400 and "the chosen value must be i or someone-else" in bad.content.decode()


def test_vote_preview_apply_and_the_guidelines_list_the_convention(
    client, adjudicator, other_adjudicator, submitted
):
    convention = convention_propose(
        user=adjudicator, round_=submitted, slot="agency", value_a="i", value_b="someone-else", chosen="i",
        rule="The writer's own act takes agency=i.",
    )  # fmt: skip
    for user in (adjudicator, other_adjudicator):
        client.force_login(user)
        client.post(reverse("convention_vote", args=[convention.pk]), {"approve": "yes", "comment": "agreed"})
    page = client.get(reverse("convention", args=[convention.pk])).content.decode()
    assert 'id="convention-status">accepted' in page
    # the GET opened no gold record: it offers the button that does
    assert not GoldItem.objects.exists()
    assert (
        "Preview: 0 conflicts it settles" in page and "4 items</strong> have all their annotations in" in page
    )
    opened = client.post(
        reverse("gold_open", args=[submitted.pk]), {"next": reverse("convention", args=[convention.pk])}
    )
    assert opened.status_code == 302 and opened["Location"] == reverse("convention", args=[convention.pk])
    assert GoldItem.objects.filter(round=submitted).count() == 4
    page = client.get(opened["Location"]).content.decode()
    assert "Preview: 2 conflicts it settles" in page and "i / someone-else" in page
    assert 'id="gold-open"' not in page
    client.post(reverse("convention_apply", args=[convention.pk]))
    gold = client.get(reverse("gold_list", args=[submitted.pk])).content.decode()
    assert "<strong>3 / 4</strong> resolved" in gold
    assert "convention C1 v1 by dave" in gold  # dave applied it
    guidelines = client.get(reverse("guidelines")).content.decode()
    assert "C1 v1" in guidelines and "The writer&#x27;s own act takes agency=i." in guidelines


def test_resolving_by_hand_through_the_page(client, adjudicator, submitted):
    client.force_login(adjudicator)
    gold_sync(submitted)
    gold = GoldItem.objects.get(round=submitted, item__source_id="t3-0")
    url = reverse("gold_item", args=[submitted.pk, gold.item_id])
    page = client.get(url).content.decode()
    assert "<em>unresolved</em>" in page
    missing = client.post(url, {"body": "no", "why": "no body word"})
    assert missing.status_code == 400
    assert "choose a value for every unresolved slot: intensity" in missing.content.decode()
    response = client.post(
        url, {"intensity": "plain", "two_construals": "1", "second_intensity": "very", "why": "both"}
    )
    assert response.status_code == 302
    listing = client.get(reverse("gold_list", args=[submitted.pk]), {"status": "resolved"}).content.decode()
    assert "two construals; pivotal: intensity" in listing
    assert "pride | pride" in listing


def test_revising_through_the_page_makes_a_new_version_and_flags_the_items(
    client, adjudicator, accepted, submitted
):
    client.force_login(adjudicator)
    client.post(reverse("convention_apply", args=[accepted.pk]))
    response = client.post(
        reverse("convention_revise", args=[accepted.pk]), {"chosen": "someone-else", "rule": "Revised."}
    )
    revision = Convention.objects.get(number=accepted.number, version=2)
    assert response["Location"] == reverse("convention", args=[revision.pk])
    page = client.get(response["Location"]).content.decode()
    assert "a revision of C1 v1" in page and "C1 v2" in page
    flagged = client.get(reverse("gold_list", args=[submitted.pk]), {"status": "review"}).content.decode()
    assert flagged.count("to review</span>") == 2


def test_the_proposal_form_offers_the_twelve_slots_and_the_values_of_the_chosen_one(
    client, adjudicator, submitted
):
    client.force_login(adjudicator)
    page = client.get(reverse("conventions")).content.decode()
    slot_select = re.search(r'<select name="slot"[^>]*>(.*?)</select>', page, re.S).group(1)
    assert re.findall(r'<option value="([a-z_]+)"', slot_select) == list(SLOT_NAMES)
    # a slot picked (from a link, or by the select through htmx): the value lists are its values
    htmx = client.get(
        reverse("conventions"), {"slot": "agency"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="convention-values"
    )
    fragment = htmx.content.decode()
    assert htmx.status_code == 200 and fragment.startswith('<div id="convention-values"')
    assert "<html" not in fragment
    for name in ("value_a", "value_b", "chosen"):
        select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', fragment, re.S).group(1)
        assert re.findall(r'<option value="([a-z-]+)"', select) == list(SLOT_BY_NAME["agency"].values)
    plain = client.get(reverse("conventions"), {"slot": "body", "value_a": "yes"}).content.decode()
    value_a = re.search(r'<select name="value_a"[^>]*>(.*?)</select>', plain, re.S).group(1)
    assert re.findall(r'<option value="([a-z-]+)"', value_a) == ["yes", "no"]
    assert '<option value="yes" selected>' in value_a


@pytest.mark.parametrize(
    "values, message",
    [
        (
            {"value_a": "feel-good"},
            "feel-good is not a value of agency; allowed: i, someone-else, no-one, none",
        ),
        ({"chosen": "can"}, "can is not a value of agency"),
        ({"slot": "mood"}, "mood is not one of the available choices"),
    ],
)
def test_a_value_outside_the_slot_is_refused_by_name_and_nothing_is_written(
    client, adjudicator, submitted, values, message
):
    client.force_login(adjudicator)
    data = {"round": submitted.pk, "slot": "agency", "value_a": "i", "value_b": "someone-else", "chosen": "i",
            "rule": "The writer's own act takes agency=i."} | values  # fmt: skip
    response = client.post(reverse("conventions"), data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Convention.objects.exists()


def test_without_a_slot_the_value_lists_group_every_slots_values(client, adjudicator, submitted):
    client.force_login(adjudicator)
    page = client.get(reverse("conventions")).content.decode()
    value_a = re.search(r'<select name="value_a"[^>]*>(.*?)</select>', page, re.S).group(1)
    assert re.findall(r'<optgroup label="([a-z_]+)"', value_a) == list(SLOT_NAMES)


def test_resolving_by_hand_without_a_reason_is_a_400_naming_why_and_writes_nothing(
    client, adjudicator, submitted
):
    client.force_login(adjudicator)
    gold_sync(submitted)
    gold = GoldItem.objects.get(round=submitted, item__source_id="t3-0")
    changes = GoldChange.objects.count()
    url = reverse("gold_item", args=[submitted.pk, gold.item_id])
    response = client.post(url, {"intensity": "plain", "why": "  "})
    page = response.content.decode()
    assert response.status_code == 400
    assert "why: say why the item is resolved this way" in page and 'id="resolve-form"' in page
    gold.refresh_from_db()
    assert gold.status == "open" and GoldChange.objects.count() == changes
    assert "why (required)" in client.get(url).content.decode()


def vote_form(page):
    return re.search(r'<form[^>]*id="vote-form".*?</form>', page, re.S).group(0)


@pytest.mark.parametrize("choice", [{}, {"approve": "maybe"}])
def test_the_vote_form_preselects_nothing_and_a_vote_without_a_choice_is_refused(
    client, adjudicator, other_adjudicator, submitted, choice
):
    convention = convention_propose(
        user=adjudicator, round_=submitted, slot="agency", value_a="i", value_b="someone-else", chosen="i",
        rule="The writer's own act takes agency=i.",
    )  # fmt: skip
    client.force_login(other_adjudicator)
    form = vote_form(client.get(reverse("convention", args=[convention.pk])).content.decode())
    assert "checked" not in form and 'name="approve" value="yes" required' in form
    response = client.post(reverse("convention_vote", args=[convention.pk]), {"comment": "ok", **choice})
    page = response.content.decode()
    assert response.status_code == 400
    assert "approve: choose approve or reject" in page and 'id="vote-form"' in page
    assert not Vote.objects.exists()
    convention.refresh_from_db()
    assert convention.status == "proposed"


def test_a_conflict_link_leaves_the_value_the_slot_takes_to_the_adjudicator(client, adjudicator, submitted):
    client.force_login(adjudicator)
    gold_sync(submitted)  # t1-0: alice says agency=i, bob someone-else
    item = GoldItem.objects.get(round=submitted, item__source_id="t1-0").item_id
    page = client.get(reverse("conflict_item", args=[submitted.pk, item])).content.decode()
    link = re.search(r'class="propose" href="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert "chosen=" not in link
    flows = client.get(reverse("flows", args=[submitted.pk])).content.decode()
    assert "chosen=" not in re.search(r'class="propose" href="([^"]+)"', flows).group(1)
    # even a hand-made address does not preselect it
    arrived = client.get(link.split("#")[0] + "&chosen=i").content.decode()
    chosen = re.search(r'<select name="chosen"[^>]*>(.*?)</select>', arrived, re.S).group(1)
    assert "selected" not in chosen.replace('<option value="" selected>', "")
    data = {"round": submitted.pk, "slot": "agency", "value_a": "i", "value_b": "someone-else",
            "rule": "The writer's own act takes agency=i.", "from": "conflict"}  # fmt: skip
    response = client.post(reverse("conventions"), data)
    assert response.status_code == 400
    assert "the slot takes: choose one of the two values" in response.content.decode()
    assert not Convention.objects.exists()


def test_a_refused_save_keeps_the_adjudicators_choices_and_the_browser_asks_for_why(
    client, adjudicator, submitted
):
    """A 400 showed the stored record again, not what was posted: the choices were lost (issue 25)."""
    client.force_login(adjudicator)
    gold_sync(submitted)
    gold = GoldItem.objects.get(round=submitted, item__source_id="t3-0")
    url = reverse("gold_item", args=[submitted.pk, gold.item_id])
    posted = {
        "intensity": "very",
        "body": "yes",
        "two_construals": "1",
        "second_intensity": "plain",
        "why": " ",
    }
    page = client.post(url, posted).content.decode()
    assert "why: say why" in page
    assert re.search(r'<select name="intensity"[^>]*>.*?<option value="very" selected>', page, re.S)
    assert re.search(r'<select name="body"[^>]*>.*?<option value="yes" selected>', page, re.S)
    assert re.search(r'<select name="second_intensity"[^>]*>.*?<option value="plain" selected>', page, re.S)
    assert re.search(r'name="two_construals" value="1" checked', page)
    assert re.search(r'<input type="text" name="why"[^>]* required', client.get(url).content.decode())


@pytest.mark.parametrize(
    ("fmt", "status"), [("xml", 400), ("", 200), ("chat", 200), ("prompt", 200), ("pairs", 200)]
)
def test_the_training_download_reads_its_format_through_a_form(client, adjudicator, gold_round, fmt, status):
    """An unknown format is a plain-text 400 naming the formats (as the CSV downloads refuse a bad
    query); an empty one is the default, the prompt format."""
    client.force_login(adjudicator)
    response = client.get(reverse("gold_training", args=[gold_round.pk]), {"format": fmt})
    assert response.status_code == status
    if status == 400:
        assert response["Content-Type"] == "text/plain; charset=utf-8"
        assert response.content.decode() == "bad query: format 'xml': formats are prompt, chat, pairs"
    else:
        assert response["Content-Type"] == "application/zip"
        assert f"-{fmt or 'prompt'}.zip" in response["Content-Disposition"]
