"""The quality page (rounds/<id>/quality/), its actions, the fragment the round pages load, and
the annotation page of a control item, which looks like any other."""

import re

import pytest

from annotator.models import Assignment
from quality.models import Move, Opening, QualitySettings
from quality.services import controls_add, quality_settings_set
from tests.quality.conftest import queue, submit_all

pytestmark = pytest.mark.django_db


def url(round_, tail: str = "") -> str:
    return f"/rounds/{round_.pk}/quality/{tail}"


@pytest.fixture
def alerted(with_controls, fay, gus):
    submit_all(with_controls, fay)
    submit_all(with_controls, gus, diff={"agency": "someone-else"})
    quality_settings_set(round_=with_controls, user=None, min_answered=4, threshold=0.95)
    return with_controls


def test_the_admin_sees_the_scores_and_the_settings_form(client, admin_user, alerted):
    client.force_login(admin_user)
    page = client.get(url(alerted)).content.decode()
    assert 'id="quality-form"' in page and 'id="controls-add"' in page and 'id="sweep-now"' in page
    assert re.search(r'<tr data-annotator="gus" class="alert">', page)
    assert (
        "gus is below the threshold on control items: 0.94 over 4 answered (mean per-slot accuracy)" in page
    )
    assert "8 of 8 control items done" in page
    assert re.search(r'data-annotator="fay".*?<td class="num routed">0.75', page, re.S)


def test_an_adjudicator_reads_without_the_forms(client, adjudicator, alerted):
    client.force_login(adjudicator)
    page = client.get(url(alerted)).content.decode()
    assert (
        'id="quality-settings"' in page
        and 'id="quality-form"' not in page
        and 'id="controls-add"' not in page
    )
    assert client.post(url(alerted), {"control_rate": "0.1"}).status_code == 403
    assert client.post(url(alerted, "controls/")).status_code == 403
    assert client.post(url(alerted, "sweep/")).status_code == 403


@pytest.mark.parametrize("who", ["fay", "outsider"])
def test_annotators_and_users_without_a_role_get_nothing(client, target, fay, outsider, who):
    client.force_login(fay if who == "fay" else outsider)
    for tail in ("", "alerts/"):
        assert client.get(url(target, tail)).status_code == 403


def form(**changes) -> dict:
    data = {"control_source": "", "control_rate": "0.1", "threshold": "0.8", "measure": "routed",
            "min_answered": "3", "abandon_hours": "12", "nudge": "on", "nudge_seconds": "15"}  # fmt: skip
    return {**data, **changes}


def test_the_admin_saves_the_settings(client, admin_user, target, gold_round):
    client.force_login(admin_user)
    response = client.post(url(target), form(control_source=str(gold_round.pk)))
    assert response.status_code == 302
    saved = QualitySettings.objects.get(round=target)
    assert (saved.control_source, saved.control_rate, saved.threshold, saved.measure) == (
        gold_round,
        0.1,
        0.8,
        "routed",
    )
    assert (saved.min_answered, saved.abandon_hours, saved.nudge, saved.nudge_seconds) == (3, 12, True, 15)
    assert saved.updated_by == admin_user


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"control_rate": "0.9"}, "control_rate"),
        ({"threshold": "x"}, "threshold"),
        ({"abandon_hours": "-1"}, "abandon_hours"),
    ],
)
def test_a_bad_setting_is_a_400_naming_it_and_nothing_is_saved(client, admin_user, target, changes, field):
    client.force_login(admin_user)
    response = client.post(url(target), form(**changes))
    assert response.status_code == 400
    assert f'data-field="{field}"' in response.content.decode()
    assert not QualitySettings.objects.filter(round=target).exists()


def test_the_round_itself_is_no_source(client, admin_user, target):
    client.force_login(admin_user)
    response = client.post(url(target), form(control_source=str(target.pk)))
    assert response.status_code == 400
    assert not QualitySettings.objects.filter(round=target).exists()


def test_the_admin_adds_controls_from_the_page(client, admin_user, target):
    client.force_login(admin_user)
    response = client.post(url(target, "controls/"))
    assert response.status_code == 400
    assert "the control rate is 0" in response.content.decode()
    quality_settings_set(round_=target, user=None, control_rate=0.25)
    response = client.post(url(target, "controls/"), follow=True)
    assert "4 control items added (fay 2, gus 2)." in response.content.decode()
    assert Assignment.objects.filter(round=target, control=True).count() == 4


def test_the_admin_sweeps_from_the_page(client, admin_user, target, fay):
    a = queue(target, fay)[0]
    client.force_login(fay)
    assert client.post(f"/work/a/{a.pk}/opened/").status_code == 204  # what the page posts once loaded
    Opening.objects.update(opened_at="2020-01-01T00:00Z", active_at="2020-01-01T00:00Z")
    client.force_login(admin_user)
    page = client.post(url(target, "sweep/"), follow=True).content.decode()
    assert "0 abandoned assignments moved back to the pool; left in place" in page  # gus has the item too
    assert not Move.objects.exists()


def test_the_fragment_gives_each_alert_as_a_message(client, adjudicator, alerted):
    client.force_login(adjudicator)
    response = client.get(url(alerted, "alerts/"), headers={"HX-Request": "true"})
    page = response.content.decode()
    assert '<ul class="messages" id="quality-alerts">' in page
    assert '<li class="quality-alert warning">gus is below the threshold' in page
    assert "fay is below" not in page
    assert "control items: 8 of 8 done" in page
    # shown once: the next page has no copy of it
    assert "below the threshold" not in client.get("/adjudicate/").content.decode()


def test_the_fragment_without_alerts_has_no_messages(client, adjudicator, target):
    client.force_login(adjudicator)
    page = client.get(url(target, "alerts/")).content.decode()
    assert "quality-alerts" not in page and 'id="quality-link"' in page and "control-progress" not in page


def test_the_round_pages_load_the_fragment(client, admin_user, target):
    client.force_login(admin_user)
    fragment = f'hx-get="/rounds/{target.pk}/quality/alerts/" hx-trigger="load"'
    assert fragment in client.get(f"/manage/rounds/{target.pk}/").content.decode()
    assert fragment in client.get(f"/adjudicate/rounds/{target.pk}/").content.decode()


def shape(page: str) -> tuple:
    """What tells one item's page from another's, but the item: ids, classes, prefill values,
    what is checked, and the form's fields."""
    return (
        sorted(set(re.findall(r'\bid="([^"]+)"', page))),
        sorted(set(re.findall(r'\bclass="([^"]+)"', page))),
        re.findall(r'data-prefill="([^"]*)"', page),
        re.findall(r'name="([^"]+)" value="([^"]*)"[^>]*checked', page),
        sorted(set(re.findall(r'name="([^"]+)"', page))),
    )


def test_a_control_item_looks_like_any_other(client, target, fay):
    controls_add(round_=target, control_rate=0.25)
    mine = queue(target, fay)
    control = next(a for a in mine if a.control)
    neighbour = mine[mine.index(control) + 1]  # a real item, between two others as well
    client.force_login(fay)
    pages = [client.get(f"/work/a/{a.pk}/").content.decode() for a in (control, neighbour)]
    assert shape(pages[0]) == shape(pages[1])
    assert len(shape(pages[0])[2]) == 12  # prefilled like the others
    for page in pages:
        assert not re.search(r"control|gold", page, re.I)
    # the queue and the items list count it as one of theirs
    items = client.get(f"/work/round/{target.pk}/items/").content.decode()
    assert items.count('href="/work/a/') == 10
