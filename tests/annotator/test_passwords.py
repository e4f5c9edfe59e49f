"""Passwords: anyone changes their own; an admin sets a new one for a user; a forgotten one is
reset by a link sent by mail (Django's views; the console in development, memory in tests)."""

import re

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_a_user_changes_their_own_password(client, annotator):
    annotator.set_password("old-secret-1")
    annotator.save()
    client.force_login(annotator)
    home = client.get(reverse("account_tokens")).content.decode()
    assert reverse("password_change") in home  # the account page links to it
    wrong = client.post(reverse("password_change"), {
        "old_password": "not-it", "new_password1": "N3w-long-passphrase",
        "new_password2": "N3w-long-passphrase",
    })  # fmt: skip
    assert wrong.status_code == 200 and "incorrectly" in wrong.content.decode()
    done = client.post(reverse("password_change"), {
        "old_password": "old-secret-1", "new_password1": "N3w-long-passphrase",
        "new_password2": "N3w-long-passphrase",
    })  # fmt: skip
    assert done.status_code == 302
    assert User.objects.get(pk=annotator.pk).check_password("N3w-long-passphrase")


def test_an_admin_sets_a_new_password_for_a_user(client, admin_user, annotator):
    client.force_login(admin_user)
    page = client.get(reverse("manage_users")).content.decode()
    url = reverse("manage_user_password", args=[annotator.pk])
    assert url in page
    refused = client.post(url, {"new_password1": "short", "new_password2": "short"})
    assert refused.status_code == 400 and "too short" in refused.content.decode()
    assert not User.objects.get(pk=annotator.pk).check_password("short")
    answer = client.post(url, {"new_password1": "Set-by-the-admin-7", "new_password2": "Set-by-the-admin-7"})
    assert answer.status_code == 302
    assert User.objects.get(pk=annotator.pk).check_password("Set-by-the-admin-7")


def test_only_admins_set_other_peoples_passwords(client, adjudicator, annotator):
    client.force_login(adjudicator)
    url = reverse("manage_user_password", args=[annotator.pk])
    answer = client.post(url, {"new_password1": "Set-by-the-admin-7", "new_password2": "Set-by-the-admin-7"})
    assert answer.status_code == 403
    assert not User.objects.get(pk=annotator.pk).check_password("Set-by-the-admin-7")


def test_a_forgotten_password_is_reset_by_the_link_sent_by_mail(client, annotator):
    annotator.email = "alice@example.org"
    annotator.save()
    assert reverse("password_reset") in client.get(reverse("login")).content.decode()
    client.post(reverse("password_reset"), {"email": "alice@example.org"})
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["alice@example.org"]
    link = re.search(r"http://testserver(/accounts/reset/\S+/)", mail.outbox[0].body).group(1)
    form = client.get(link, follow=True)
    assert form.status_code == 200 and "new_password1" in form.content.decode()
    client.post(
        form.redirect_chain[-1][0], {"new_password1": "Reset-by-mail-9", "new_password2": "Reset-by-mail-9"}
    )
    assert User.objects.get(pk=annotator.pk).check_password("Reset-by-mail-9")
