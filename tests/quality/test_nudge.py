"""The too-fast nudge: off by default; on, a save that keeps all twelve prefilled values in less
than the round's time shows a gentle notice and is counted per annotator."""

import pytest

from quality.models import Nudge
from quality.services import quality_settings_set
from tests.factories import PRED
from tests.quality.conftest import make_round, queue

pytestmark = pytest.mark.django_db

NOTICE = "You kept every prefilled value in"


def save(client, assignment, *, ms: int, diff: dict | None = None):
    data = {**PRED, **(diff or {}), "residue": "", "notes": "", "base_version": 0, "time_spent_ms": ms}
    return client.post(f"/work/a/{assignment.pk}/", data, follow=True)


@pytest.fixture
def nudging(target):
    quality_settings_set(round_=target, user=None, nudge=True, nudge_seconds=20)
    return target


def test_off_by_default(client, target, fay):
    client.force_login(fay)
    response = save(client, queue(target, fay)[0], ms=3_000)
    assert NOTICE not in response.content.decode()
    assert not Nudge.objects.exists()


def test_a_prefill_kept_whole_too_fast_is_nudged_and_counted(client, nudging, fay):
    client.force_login(fay)
    a = queue(nudging, fay)[0]
    response = save(client, a, ms=3_400)
    page = response.content.decode()
    assert NOTICE + " 3 s" in page and "quality-nudge" in page
    nudge = Nudge.objects.get()
    assert (nudge.annotator, nudge.assignment_id, nudge.round_id, nudge.time_spent_ms) == (
        fay,
        a.pk,
        nudging.pk,
        3400,
    )
    assert nudge.version == 1


@pytest.mark.parametrize(
    ("ms", "diff"),
    [
        (25_000, None),  # slow enough
        (3_000, {"agency": "someone-else"}),  # one value changed
        (0, None),  # no time measured (a page without its script)
    ],
)
def test_no_nudge(client, nudging, fay, ms, diff):
    client.force_login(fay)
    response = save(client, queue(nudging, fay)[0], ms=ms, diff=diff)
    assert response.status_code == 200
    assert NOTICE not in response.content.decode()
    assert not Nudge.objects.exists()


def test_a_blind_round_has_no_prefill_to_keep(client, gold_round, fay, gus):
    blind = make_round("blind-nudge", [fay, gus], mode="blind")
    quality_settings_set(round_=blind, user=None, nudge=True)
    client.force_login(fay)
    save(client, queue(blind, fay)[0], ms=1_000)
    assert not Nudge.objects.exists()


def test_a_save_that_changes_nothing_is_not_nudged_again(client, nudging, fay):
    client.force_login(fay)
    a = queue(nudging, fay)[0]
    save(client, a, ms=2_000)
    data = {**PRED, "residue": "", "notes": "", "base_version": 1, "time_spent_ms": 1_000}
    client.post(f"/work/a/{a.pk}/", data)
    assert Nudge.objects.count() == 1
