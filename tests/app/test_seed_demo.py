import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.roles import user_roles
from tests.factories import login_request

pytestmark = pytest.mark.django_db


def test_seed_demo_creates_one_user_per_role_and_prints_credentials(settings, capsys):
    settings.DEBUG = True
    call_command("seed_demo")
    out = capsys.readouterr().out
    assert "annotator1-demo" in out and "admin-demo" in out
    assert user_roles(authenticate(login_request(), username="annotator1", password="annotator1-demo")) == {
        "annotator"
    }
    assert user_roles(authenticate(login_request(), username="adjudicator", password="adjudicator-demo")) == {
        "adjudicator"
    }
    # a second adjudicator: a convention is decided by the votes of two (found by a browser
    # walkthrough, which could not finish one with the demo users)
    assert user_roles(
        authenticate(login_request(), username="adjudicator2", password="adjudicator2-demo")
    ) == {"adjudicator"}
    assert settings.NSM_CONVENTION_QUORUM <= 2
    admin = authenticate(login_request(), username="admin", password="admin-demo")
    assert admin.is_staff and "admin" in user_roles(admin)


def test_seed_demo_twice_creates_no_duplicates(settings):
    settings.DEBUG = True
    call_command("seed_demo")
    call_command("seed_demo")
    assert User.objects.count() == 7


def test_seed_demo_refuses_without_debug(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="refusing with DEBUG off"):
        call_command("seed_demo")
    assert User.objects.count() == 0


def test_the_demo_blind_round_is_a_clean_control_for_its_annotators(settings):
    """No demo annotator meets an item blind that they were shown prefilled in another round."""
    from annotator.models import Round
    from annotator.round_selectors import prefill_overlap

    settings.DEBUG = True
    call_command("seed_demo")
    blind = Round.objects.get(name="Demo blind")
    assert blind.assignments.count() > 0
    assert prefill_overlap(item_set=blind.item_set, annotators=blind.pool.all()) == {}
    prefilled = Round.objects.get(name="Demo prefilled")
    assert prefilled.assignments.count() > 0 and prefilled.assignments.filter(status="pending").exists()
    pilot = Round.objects.get(name="Demo pilot (submitted)")
    assert not pilot.assignments.exclude(status="done").exists()


def test_the_demo_pilot_has_a_blind_control_arm_for_the_anchoring_page(settings, client):
    """The pilot's anchoring page has numbers at once: a blind round over the same items, labelled
    by two other annotators who never saw the prefill."""
    from annotator.models import Round
    from annotator.round_selectors import prefill_overlap

    settings.DEBUG = True
    call_command("seed_demo")
    pilot = Round.objects.get(name="Demo pilot (submitted)")
    control = Round.objects.get(name="Demo pilot blind control (submitted)")
    assert control.is_blind and control.item_set_id == pilot.item_set_id
    assert not set(control.pool.values_list("username", flat=True)) & set(
        pilot.pool.values_list("username", flat=True)
    )
    assert prefill_overlap(item_set=control.item_set, annotators=control.pool.all()) == {}
    assert not control.assignments.exclude(status="done").exists()
    assert all(a.annotation.prefill is None for a in control.assignments.select_related("annotation"))
    client.force_login(User.objects.get(username="adjudicator"))
    page = client.get(f"/adjudicate/rounds/{pilot.pk}/anchoring/", {"control": control.pk}).content.decode()
    assert "20 items in both rounds" in page


def demo_login(username: str, password: str):
    return authenticate(login_request(), username=username, password=password)
