"""The first admin of a fresh database comes from one command."""

import io

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotator.roles import user_roles
from tests.factories import login_request

pytestmark = pytest.mark.django_db


def test_create_admin_reads_the_password_from_stdin_and_makes_a_working_admin(client, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("a long passphrase 42\n"))
    call_command("create_admin", "root", "--password-stdin", "--email", "root@example.org")
    assert "root is an admin" in capsys.readouterr().out
    user = authenticate(login_request(), username="root", password="a long passphrase 42")
    assert user is not None and user.is_staff and not user.is_superuser
    assert user.email == "root@example.org"
    assert user_roles(user) == {"admin"}
    client.force_login(user)
    assert client.get(reverse("manage_import")).status_code == 200
    assert client.get(reverse("manage_users")).status_code == 200


def test_create_admin_refuses_a_weak_or_empty_password_and_writes_nothing(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("123\n"))
    with pytest.raises(CommandError, match="password"):
        call_command("create_admin", "root", "--password-stdin")
    monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
    with pytest.raises(CommandError, match="empty password"):
        call_command("create_admin", "root", "--password-stdin")
    assert not User.objects.filter(username="root").exists()


def test_create_admin_refuses_an_existing_username(monkeypatch, annotator):
    monkeypatch.setattr("sys.stdin", io.StringIO("a long passphrase 42\n"))
    with pytest.raises(CommandError, match="'alice' already exists"):
        call_command("create_admin", "alice", "--password-stdin")
    assert user_roles(User.objects.get(username="alice")) == {"annotator"}


def test_create_admin_prompts_twice_when_not_reading_stdin(monkeypatch):
    answers = iter(["a long passphrase 42", "a long passphrase 42"])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))
    call_command("create_admin", "root")
    assert authenticate(login_request(), username="root", password="a long passphrase 42") is not None
    answers = iter(["a long passphrase 42", "another one 42"])
    with pytest.raises(CommandError, match="do not match"):
        call_command("create_admin", "root2")
