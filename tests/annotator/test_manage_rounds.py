"""Admin round pages: list with progress, the new-round form (parser coverage, bad input, the
blind/prefilled overlap confirmation), a round's annotators and pool changes."""

import re

import pytest
from django.urls import reverse

from annotator.models import Assignment, ParserPrediction, Round
from annotator.sampling import item_set_from_items
from annotator.services import annotation_submit, assignment_skip
from tests.factories import PRED

pytestmark = pytest.mark.django_db


def _form(item_set, *users, **extra):
    data = {
        "name": "r1",
        "item_set": item_set.pk,
        "annotators_per_item": 2,
        "annotators": [u.pk for u in users],
        "mode": "blind",
        "text_field": "masked_text",
    }
    return {**data, **extra}


def test_only_admins_reach_the_round_pages(client, annotator, adjudicator, prefilled_round):
    for user in (annotator, adjudicator):
        client.force_login(user)
        for url in (
            reverse("manage_rounds"),
            reverse("manage_round_new"),
            reverse("manage_round", args=[prefilled_round.pk]),
        ):
            assert client.get(url).status_code == 403
        assert (
            client.post(reverse("manage_round_new"), _form(prefilled_round.item_set, annotator)).status_code
            == 403
        )
        url = reverse("manage_round_pool_remove", args=[prefilled_round.pk])
        assert client.post(url, {"annotator": annotator.pk}).status_code == 403
    assert Round.objects.count() == 1 and prefilled_round.pool.count() == 2


def test_the_form_lists_annotators_and_the_sets_parsers_with_their_coverage(
    client, admin_user, items, annotator, adjudicator
):
    item_set = item_set_from_items(name="four", items=items)
    for item in items[:3]:
        ParserPrediction.objects.create(item=item, parser="lex", explication=PRED, legal=True)
    ParserPrediction.objects.create(item=items[3], parser="bad", explication=None, legal=False)
    client.force_login(admin_user)
    body = client.get(reverse("manage_round_new"), {"item_set": item_set.pk}).content.decode()
    assert '<option value="lex">lex (legal predictions for 3 of 4 items)</option>' in body
    assert "bad (" not in body  # illegal predictions cannot prefill
    pool = re.search(r'<p class="field-annotators">.*?</p>', body, re.S).group(0)
    assert "alice" in pool and "carol" not in pool  # only users with the annotator role
    # htmx asks for the form alone when the set changes
    fragment = client.get(
        reverse("manage_round_new"), {"item_set": item_set.pk}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert fragment.startswith('<form method="post"') and "<html" not in fragment and "lex (legal" in fragment
    # the rest of what was filled in comes back
    query = {"item_set": item_set.pk, "name": "r9", "annotators": [annotator.pk], "mode": "prefilled"}
    fragment = client.get(reverse("manage_round_new"), query, HTTP_HX_REQUEST="true").content.decode()
    assert 'value="r9"' in fragment and f'value="{annotator.pk}" id="id_annotators_0" checked' in fragment
    assert re.search(r'<input type="radio" name="mode" value="prefilled"[^>]* checked>', fragment)


def test_an_admin_creates_a_prefilled_round(client, admin_user, items, annotator, other_annotator):
    item_set = item_set_from_items(name="four", items=items)
    for item in items:
        ParserPrediction.objects.create(item=item, parser="lex", explication=PRED, legal=True)
    client.force_login(admin_user)
    data = _form(item_set, annotator, other_annotator, mode="prefilled", prefill_parser="lex",
                 text_field="text", show_routed_label="on")  # fmt: skip
    response = client.post(reverse("manage_round_new"), data, follow=True)
    assert response.status_code == 200
    round_ = Round.objects.get(name="r1")
    assert (round_.mode, round_.prefill_parser, round_.text_field, round_.show_routed_label) == (
        "prefilled",
        "lex",
        "text",
        True,
    )
    assert round_.assignments.count() == 8
    assert response.redirect_chain[-1][0] == reverse("manage_round", args=[round_.pk])
    assert "Round r1 created: 8 assignments." in response.content.decode()


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"name": ""}, "name", "This field is required"),
        ({"annotators_per_item": 0}, "annotators_per_item", "greater than or equal to 1"),
        ({"annotators_per_item": 3}, "annotators", "3 annotators per item but the pool has 2"),
        ({"mode": "prefilled"}, "prefill_parser", "a prefilled round needs a parser"),
        ({"mode": "prefilled", "prefill_parser": "nonesuch"}, "prefill_parser", "Select a valid choice"),
        ({"mode": "sideways"}, "mode", "Select a valid choice"),
        ({"text_field": "title"}, "text_field", "Select a valid choice"),
        ({"item_set": 999}, "item_set", "Select a valid choice"),
        ({"annotators": []}, "annotators", "This field is required"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(
    client, admin_user, items, annotator, other_annotator, change, field, message
):
    item_set = item_set_from_items(name="four", items=items)
    client.force_login(admin_user)
    response = client.post(
        reverse("manage_round_new"), {**_form(item_set, annotator, other_annotator), **change}
    )
    assert response.status_code == 400
    error = re.search(
        rf'<div class="error" data-field="{field}">(.*?)</div>', response.content.decode(), re.S
    )
    assert error is not None and message in error.group(1)
    assert not Round.objects.exists() and not Assignment.objects.exists()


def test_a_taken_name_is_a_400(client, admin_user, prefilled_round, annotator, other_annotator):
    client.force_login(admin_user)
    response = client.post(
        reverse("manage_round_new"),
        _form(prefilled_round.item_set, annotator, other_annotator, name="prefilled"),
    )
    assert response.status_code == 400
    assert "a round named &#x27;prefilled&#x27; already exists" in response.content.decode()
    assert Round.objects.count() == 1


def test_a_blind_round_over_items_seen_prefilled_warns_with_counts_and_needs_confirmation(
    client, admin_user, prefilled_round, annotator, other_annotator
):
    client.force_login(admin_user)
    data = _form(prefilled_round.item_set, annotator, other_annotator, name="control")
    response = client.post(reverse("manage_round_new"), data)
    assert response.status_code == 400
    body = response.content.decode()
    warning = re.search(r'<div class="warn" id="overlap-warning".*?</div>', body, re.S).group(0)
    assert re.search(r'data-annotator="alice"><td>alice</td><td class="num">4</td>', warning)
    assert re.search(r'data-annotator="bob"><td>bob</td><td class="num">4</td>', warning)
    assert 'name="confirm_overlap"' in warning
    assert not Round.objects.filter(name="control").exists()
    response = client.post(reverse("manage_round_new"), {**data, "confirm_overlap": "on"})
    assert response.status_code == 302
    assert Round.objects.get(name="control").assignments.count() == 8


def test_the_rounds_page_lists_progress(client, admin_user, prefilled_round, annotator):
    first, second = Assignment.objects.filter(round=prefilled_round, annotator=annotator).order_by(
        "position"
    )[:2]
    annotation_submit(assignment=first, user=annotator, values=PRED, base_version=0)
    assignment_skip(assignment=second, user=annotator)
    client.force_login(admin_user)
    body = client.get(reverse("manage_rounds")).content.decode()
    row = re.search(r'<tr data-round="prefilled">.*?</tr>', body, re.S).group(0)
    cells = re.findall(r'<td class="num">(\d+)</td>', row)
    assert cells == ["2", "2", "1", "1", "6"]  # per item, pool, done, skipped, pending
    assert 'value="25"' in row


def test_a_rounds_page_shows_each_annotator_and_the_pool_changes(
    client, admin_user, prefilled_round, annotator, other_annotator
):
    from tests.conftest import _user

    newcomer = _user("nina", "annotator")
    first = Assignment.objects.filter(round=prefilled_round, annotator=annotator).order_by("position").first()
    annotation_submit(assignment=first, user=annotator, values=PRED, base_version=0)
    client.force_login(admin_user)
    url = reverse("manage_round", args=[prefilled_round.pk])
    body = client.get(url).content.decode()
    alice = re.search(r'<tr data-annotator="alice">.*?</tr>', body, re.S).group(0)
    assert re.findall(r'<td class="num">(\d+)</td>', alice) == ["1", "0", "3"]
    assert f'<option value="{newcomer.pk}">nina</option>' in body

    response = client.post(
        reverse("manage_round_pool_remove", args=[prefilled_round.pk]),
        {"annotator": annotator.pk},
        follow=True,
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert (
        "alice removed from the pool: 0 pending assignments moved; 3 items now have fewer annotators" in body
    )
    alice = re.search(r'<tr data-annotator="alice">.*?</tr>', body, re.S).group(0)
    assert "left the pool" in alice and "Remove" not in alice
    assert Assignment.objects.filter(round=prefilled_round, annotator=annotator).count() == 1

    response = client.post(
        reverse("manage_round_pool_add", args=[prefilled_round.pk]), {"annotator": newcomer.pk}, follow=True
    )
    assert "nina added to the pool: 2 pending assignments moved (from bob 2)" in response.content.decode()
    assert Assignment.objects.filter(round=prefilled_round, annotator=newcomer, status="pending").count() == 2


def test_pool_changes_refuse_bad_input_with_a_400(
    client, admin_user, prefilled_round, annotator, adjudicator
):
    client.force_login(admin_user)
    add = reverse("manage_round_pool_add", args=[prefilled_round.pk])
    for data in ({"annotator": annotator.pk}, {"annotator": adjudicator.pk}, {"annotator": "x"}, {}):
        response = client.post(add, data)
        assert response.status_code == 400
        assert re.search(r'<div class="error" data-field="annotator"', response.content.decode())
    remove = reverse("manage_round_pool_remove", args=[prefilled_round.pk])
    assert client.post(remove, {"annotator": adjudicator.pk}).status_code == 400
    assert set(prefilled_round.pool.values_list("username", flat=True)) == {"alice", "bob"}
    assert (
        client.post(reverse("manage_round_pool_add", args=[999]), {"annotator": annotator.pk}).status_code
        == 404
    )


def test_the_new_round_link_of_an_item_set_preselects_it(client, admin_user, prefilled_round):
    client.force_login(admin_user)
    item_set = prefilled_round.item_set
    response = client.get(reverse("manage_round_new"), {"item_set": item_set.pk})
    assert response.status_code == 200
    select = re.search(r'<select name="item_set".*?</select>', response.content.decode(), re.S).group(0)
    assert re.search(rf'<option value="{item_set.pk}" selected>{item_set.name}</option>', select)
    assert "lex (legal predictions for 4 of 4 items)" in response.content.decode()


def test_the_overlap_warning_is_shown_once(client, admin_user, prefilled_round, annotator, other_annotator):
    client.force_login(admin_user)
    data = _form(prefilled_round.item_set, annotator, other_annotator, name="control")
    response = client.post(reverse("manage_round_new"), data)
    assert response.status_code == 400
    body = response.content.decode()
    assert body.count('id="overlap-warning"') == 1
    assert 'class="error"' not in body  # no red error repeating what the amber box says
    assert not Round.objects.filter(name="control").exists()


def test_adding_an_annotator_who_gets_no_work_says_why(client, admin_user, prefilled_round, annotator):
    from tests.conftest import _user

    client.force_login(admin_user)
    add = reverse("manage_round_pool_add", args=[prefilled_round.pk])
    # prefilled round over 4 items, 2 per item: 8 pending; a newcomer gets 8 // 3 = 2
    Assignment.objects.filter(round=prefilled_round).update(status=Assignment.Status.SKIPPED)
    response = client.post(add, {"annotator": _user("nina", "annotator").pk}, follow=True)
    assert "nina added to the pool: 0 pending assignments moved: the round has no pending work" in (
        response.content.decode()
    )
    assert not Assignment.objects.filter(round=prefilled_round, annotator__username="nina").exists()


def test_the_round_page_leads_to_its_analysis_and_keeps_its_progress_live(client, admin_user, submitted):
    import re as _re

    from django.urls import reverse as _reverse

    client.force_login(admin_user)
    page = client.get(_reverse("manage_round", args=[submitted.pk])).content.decode()
    for name in ("agreement", "conflicts", "gold_list", "evaluation"):
        assert _reverse(name, args=[submitted.pk]) in page, name
    table = _re.search(r'<section id="round-progress"[^>]*>', page).group(0)
    assert 'hx-trigger="every 10s"' in table and 'hx-select="#round-progress"' in table
    assert "8 of 8 assignments done" in page


def test_a_huge_id_in_the_new_round_form_is_a_400_naming_the_field(
    client, admin_user, annotator, prefilled_round
):
    """Found by a new user's walk through the site: a hand-made POST naming an annotator by a
    20-digit id was a 500 (SQLite cannot bind the number)."""
    client.force_login(admin_user)
    form = _form(prefilled_round.item_set, annotator) | {"annotators": [annotator.pk, "99999999999999999999"]}
    response = client.post(reverse("manage_round_new"), form)
    assert response.status_code == 400
    assert "99999999999999999999 is not one of the available choices" in response.content.decode()
    assert Round.objects.count() == 1


@pytest.mark.parametrize("value", ["9" * 25, "²", "-1", "x"])
def test_a_bad_item_set_in_the_new_round_form_is_no_server_error(client, admin_user, items, annotator, value):
    """'²'.isdigit() is true and int('²') fails; 25 digits do not fit SQLite's integer: both were 500s."""
    client.force_login(admin_user)
    page = client.get(reverse("manage_round_new"), {"item_set": value, "name": "r9"})
    assert page.status_code == 200 and 'value="r9"' in page.content.decode()  # the form, as filled in
    refused = client.post(reverse("manage_round_new"), {**_form(item_set_from_items(name="s", items=items),
                                                                 annotator), "item_set": value})  # fmt: skip
    assert refused.status_code == 400 and "item_set" in refused.context["form"].errors
    assert not Round.objects.exists()
