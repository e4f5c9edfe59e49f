"""The gold list is a queue that leads to the next piece of work: each record shows its text and
the slots still open, provenance never says "unanimous" while a slot is open, a save can go
straight on to the next open record, the annotators' values are taken with a button, and records
whose annotations are all in open without a separate click."""

import re

from django.urls import reverse

from adjudication.gold.services import gold_sync, gold_version
from adjudication.models import GoldItem
from tests.factories import PRED


def row(page: str, source_id: str) -> str:
    match = re.search(rf'<tr data-item="{source_id}">(.*?)</tr>', page, re.DOTALL)
    assert match, f"no row for {source_id}"
    return match.group(1)


def test_each_record_shows_its_text_and_open_slots_and_an_open_one_is_not_called_unanimous(
    client, adjudicator, submitted
):
    gold_sync(submitted)
    client.force_login(adjudicator)
    page = client.get(reverse("gold_list", args=[submitted.pk])).content.decode()
    gold = {g.item.source_id: g for g in GoldItem.objects.filter(round=submitted).select_related("item")}
    t3 = row(page, "t3-0")  # bob said intensity=very: that slot is open, the other eleven unanimous
    assert gold["t3-0"].item.text_for(submitted.text_field)[:40] in t3
    assert re.search(r'class="open-slots"[^>]*>\s*intensity\s*<', t3), t3
    assert "unanimous" not in t3.split('class="provenance"')[1]
    t4 = row(page, "t4-0")  # every slot agreed: resolved at once, and unanimous it is
    assert 'class="open-slots"' not in t4 and "unanimous" in t4


def test_a_long_text_is_cut_and_opens_in_full(client, adjudicator, submitted):
    gold_sync(submitted)
    gold = GoldItem.objects.filter(round=submitted).select_related("item").get(item__source_id="t3-0")
    long_text = "When the results came back I felt " + "very " * 40 + "tired."
    gold.item.masked_text = gold.item.text = long_text
    gold.item.save()
    client.force_login(adjudicator)
    t3 = row(client.get(reverse("gold_list", args=[submitted.pk])).content.decode(), "t3-0")
    assert "<details" in t3 and long_text in t3 and "…" in t3.split("</summary>")[0]


def _resolve(client, round_, gold, **extra):
    url = reverse("gold_item", args=[round_.pk, gold.item_id])
    gold.refresh_from_db()
    form = {"intensity": "very", "agency": "i", "why": "decided", "base_version": gold_version(gold)}
    return client.post(url, {**form, **extra})


def test_save_and_next_opens_the_next_open_record_and_ends_on_the_list(client, adjudicator, submitted):
    gold_sync(submitted)
    golds = {g.item.source_id: g for g in GoldItem.objects.filter(round=submitted).select_related("item")}
    open_ids = sorted(k for k, g in golds.items() if g.status == "open")
    assert open_ids == ["t1-0", "t2-0", "t3-0"]
    client.force_login(adjudicator)
    answer = _resolve(client, submitted, golds["t1-0"], then="next")
    assert answer.status_code == 302
    assert answer["Location"] == reverse("gold_item", args=[submitted.pk, golds["t2-0"].item_id])
    assert GoldItem.objects.get(pk=golds["t1-0"].pk).status == "resolved"
    # the last open record wraps round to one before it; with none left, back to the list, saying so
    answer = _resolve(client, submitted, golds["t3-0"], then="next")
    assert answer["Location"] == reverse("gold_item", args=[submitted.pk, golds["t2-0"].item_id])
    answer = _resolve(client, submitted, golds["t2-0"], then="next")
    assert answer["Location"] == reverse("gold_list", args=[submitted.pk])
    page = client.get(answer["Location"]).content.decode()
    assert "No open record is left" in page
    # a plain save still goes back to the list
    assert _resolve(client, submitted, golds["t1-0"])["Location"] == reverse("gold_list", args=[submitted.pk])


def test_each_annotators_value_can_be_taken_with_a_named_button(client, adjudicator, submitted):
    gold_sync(submitted)
    gold = GoldItem.objects.get(round=submitted, item__source_id="t3-0")
    client.force_login(adjudicator)
    page = client.get(reverse("gold_item", args=[submitted.pk, gold.item_id])).content.decode()
    intensity = re.search(r'<tr data-slot="intensity".*?</tr>', page, re.DOTALL).group(0)
    buttons = re.findall(r'<button type="button" class="take" data-key="(\w)" data-value="([\w-]+)"'
                         r' aria-label="([^"]+)"', intensity)  # fmt: skip
    assert [(key, value) for key, value, _ in buttons] == [("a", PRED["intensity"]), ("b", "very")]
    assert buttons[1][2] == "take bob's intensity: very (key b)"
    assert "js/gold.js" in page


def test_the_list_opens_waiting_records_itself_by_a_post_the_page_makes(client, adjudicator, submitted):
    client.force_login(adjudicator)
    url = reverse("gold_list", args=[submitted.pk])
    page = client.get(url).content.decode()
    assert not GoldItem.objects.exists()  # the GET itself wrote nothing
    form = re.search(r'<form[^>]*id="gold-open"[^>]*>', page).group(0)
    assert 'hx-trigger="load"' in form and f'hx-post="{reverse("gold_open", args=[submitted.pk])}"' in form
    answer = client.post(reverse("gold_open", args=[submitted.pk]), {"next": url}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200 and answer["HX-Refresh"] == "true"
    assert GoldItem.objects.filter(round=submitted).count() == 4
    assert 'hx-trigger="load"' not in client.get(url).content.decode()  # nothing waits: no second post


def test_an_item_whose_last_pending_assignment_is_skipped_opens_and_the_list_never_reloads_in_a_loop(
    client, adjudicator, submitted, django_user_model
):
    """A skip changes no annotation but leaves an item with all its annotations in: it is counted
    as waiting and opened. Whatever the list counts, its own post on load reloads the page only
    when the post changed something, so a count and an opening that ever disagree cannot make the
    page reload itself without end."""
    from annotator.models import Assignment, Item
    from annotator.services import assignment_skip

    third = django_user_model.objects.create_user("erin")
    late = Assignment.objects.create(
        round=submitted, item=Item.objects.get(source_id="t1-0"), annotator=third, position=99
    )
    assert gold_sync(submitted) == 3  # t1-0 waits for erin
    assignment_skip(assignment=late, user=third)
    client.force_login(adjudicator)
    url = reverse("gold_list", args=[submitted.pk])
    assert 'hx-trigger="load"' in client.get(url).content.decode()  # t1-0 waits to be opened
    answer = client.post(reverse("gold_open", args=[submitted.pk]), {"next": url}, HTTP_HX_REQUEST="true")
    assert GoldItem.objects.filter(round=submitted, item__source_id="t1-0").exists()
    assert answer["HX-Refresh"] == "true"
    assert 'hx-trigger="load"' not in client.get(url).content.decode()
    # a post that opens nothing answers without a reload
    again = client.post(reverse("gold_open", args=[submitted.pk]), {"next": url}, HTTP_HX_REQUEST="true")
    assert again.status_code == 204 and "HX-Refresh" not in again
