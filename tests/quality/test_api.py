"""The quality API: settings (GET, PATCH), controls (POST), figures (GET), sweep (POST)."""

import pytest
from rest_framework.test import APIClient

from annotator.models import Assignment
from quality.models import QualitySettings
from tests.quality.conftest import submit_all

pytestmark = pytest.mark.django_db


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def url(round_, tail: str = "") -> str:
    return f"/api/rounds/{round_.pk}/quality/{tail}"


def test_settings_read_as_defaults_then_patched(admin_user, target, gold_round):
    got = api(admin_user).get(url(target)).json()
    assert got["control_rate"] == 0 and got["threshold"] == 0.7 and got["abandon_hours"] == 24
    assert got["nudge"] is False and got["control_source"] is None and got["updated_at"] is None
    response = api(admin_user).patch(
        url(target), {"control_rate": 0.1, "control_source": gold_round.name, "nudge": True}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert response.json()["control_source"] == gold_round.name and response.json()["updated_by"] == "dana"
    saved = QualitySettings.objects.get(round=target)
    assert (saved.control_rate, saved.control_source, saved.nudge, saved.threshold) == (
        0.1,
        gold_round,
        True,
        0.7,
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"control_rate": "0.1"}, "control_rate"),
        ({"control_rate": 0.9}, "control_rate"),
        ({"threshold": True}, "threshold"),
        ({"measure": "vibes"}, "measure"),
        ({"abandon_hours": 1.5}, "abandon_hours"),
        ({"control_source": "nowhere"}, "control_source"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_bad_patch_is_a_400_naming_the_field_and_nothing_is_written(admin_user, target, body, field):
    response = api(admin_user).patch(url(target), body, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert not QualitySettings.objects.filter(round=target).exists()


def test_the_round_itself_is_no_source(admin_user, target):
    response = api(admin_user).patch(url(target), {"control_source": "target"}, format="json")
    assert response.status_code == 400 and "control_source" in response.json()


def test_adjudicators_read_admins_write_annotators_get_nothing(adjudicator, fay, outsider, target):
    assert api(adjudicator).get(url(target)).status_code == 200
    assert api(adjudicator).get(url(target, "figures/")).status_code == 200
    assert api(adjudicator).patch(url(target), {"nudge": True}, format="json").status_code == 403
    assert api(adjudicator).post(url(target, "controls/"), {}, format="json").status_code == 403
    assert api(adjudicator).post(url(target, "sweep/"), {}, format="json").status_code == 403
    for user in (fay, outsider):
        assert api(user).get(url(target)).status_code == 403
        assert api(user).get(url(target, "figures/")).status_code == 403
    assert APIClient().get(url(target)).status_code in (401, 403)
    assert not QualitySettings.objects.exists()


def test_controls_are_added_with_a_rate_given(admin_user, target):
    response = api(admin_user).post(url(target, "controls/"), {"control_rate": 0.25}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["added"] == {"fay": 2, "gus": 2} and body["total"] == 4 and body["candidates"] == 4
    assert Assignment.objects.filter(round=target, control=True).count() == 4


def test_controls_at_rate_zero_are_refused(admin_user, target):
    response = api(admin_user).post(url(target, "controls/"), {}, format="json")
    assert response.status_code == 400 and "control_rate" in response.json()
    assert not Assignment.objects.filter(round=target, control=True).exists()


def test_the_figures(adjudicator, with_controls, fay, gus):
    submit_all(with_controls, fay)
    body = api(adjudicator).get(url(with_controls, "figures/")).json()
    assert body["controls"] == {"assigned": 8, "done": 4, "skipped": 0, "pending": 4}
    fay_row = body["annotators"][0]
    assert fay_row["annotator"] == "fay" and fay_row["routed"]["k"] == 3 and fay_row["routed"]["n"] == 4
    assert fay_row["slots"]["agency"]["value"] == 0.75 and fay_row["slots"]["agency"]["low"] > 0
    assert body["alerts"] == [] and body["moves"] == [] and body["nudges"] == []


def test_a_sweep(admin_user, target):
    response = api(admin_user).post(url(target, "sweep/"), {"hours": 1}, format="json")
    assert response.status_code == 200 and response.json()["moved"] == 0
    assert api(admin_user).post(url(target, "sweep/"), {"hours": 0}, format="json").status_code == 400


def test_an_api_client_says_an_assignment_is_open_and_abandoned_work_is_judged_from_it(target, fay, gus):
    """What the annotation page posts once loaded, for a client of the API: the opening starts,
    a later post is activity, and left idle past the round's limit the sweep finds it abandoned."""
    from datetime import timedelta

    from django.utils import timezone

    from quality.abandoned import abandoned_sweep
    from quality.models import Opening
    from tests.quality.conftest import queue

    mine = queue(target, fay)[0]
    assert api(gus).post(f"/api/assignments/{mine.pk}/opened/").status_code == 404  # not his
    assert not Opening.objects.exists()
    response = api(fay).post(f"/api/assignments/{mine.pk}/opened/")
    assert response.status_code == 204 and response.content == b""
    opening = Opening.objects.get(assignment=mine)
    assert opening.annotator == fay and opening.opened_at == opening.active_at
    then = timezone.now() - timedelta(hours=30)
    Opening.objects.filter(pk=opening.pk).update(opened_at=then, active_at=then)
    assert api(fay).post(f"/api/assignments/{mine.pk}/opened/").status_code == 204
    opening.refresh_from_db()
    assert opening.opened_at == then and opening.active_at > timezone.now() - timedelta(minutes=1)
    Opening.objects.filter(pk=opening.pk).update(active_at=then)
    result = abandoned_sweep()  # abandoned; gus has the item too, so it stays where it is
    assert (result.moved, result.stuck) == ({}, {"target": 1})
    assert APIClient().post(f"/api/assignments/{mine.pk}/opened/").status_code in (401, 403)
