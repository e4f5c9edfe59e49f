import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.roles import user_roles

pytestmark = pytest.mark.django_db


def test_seed_demo_creates_one_user_per_role_and_prints_credentials(settings, capsys):
    settings.DEBUG = True
    call_command("seed_demo")
    out = capsys.readouterr().out
    assert "annotator1-demo" in out and "admin-demo" in out
    assert user_roles(authenticate(username="annotator1", password="annotator1-demo")) == {"annotator"}
    assert user_roles(authenticate(username="adjudicator", password="adjudicator-demo")) == {"adjudicator"}
    admin = authenticate(username="admin", password="admin-demo")
    assert admin.is_staff and "admin" in user_roles(admin)


def test_seed_demo_twice_creates_no_duplicates(settings):
    settings.DEBUG = True
    call_command("seed_demo")
    call_command("seed_demo")
    assert User.objects.count() == 4


def test_seed_demo_refuses_without_debug(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="refusing with DEBUG off"):
        call_command("seed_demo")
    assert User.objects.count() == 0
