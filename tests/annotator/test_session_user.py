"""The logged-in user of a browser session, read from the shared cache (annotator.auth): no user
row read on an ordinary request, and every change that matters seen on the very next request:
deactivation (from the users page), a new password, a deleted user."""

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

pytestmark = pytest.mark.django_db


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def assignments(client) -> int:
    return client.get(reverse("api_assignments"), HTTP_ACCEPT="application/json").status_code


def user_reads(client) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert assignments(client) == 200
    return sum('FROM "auth_user"' in q["sql"] for q in queries.captured_queries)


def test_a_session_request_reads_the_user_once_then_from_the_cache(annotator):
    client = logged_in(annotator)
    assert user_reads(client) == 1  # force_login saved last_login: the cached copy was forgotten
    assert user_reads(client) == 0
    assert user_reads(logged_in(annotator)) == 1  # a new login, a new last_login


def test_a_deactivated_user_is_out_on_their_next_request(client, admin_user, annotator):
    theirs = logged_in(annotator)
    assert assignments(theirs) == 200
    client.force_login(admin_user)
    client.post(reverse("manage_user_active", args=[annotator.pk]), {"active": "0"})
    assert assignments(theirs) in (401, 403)
    client.post(reverse("manage_user_active", args=[annotator.pk]), {"active": "1"})
    assert assignments(logged_in(User.objects.get(pk=annotator.pk))) == 200


def test_a_new_password_ends_the_other_sessions(annotator):
    theirs = logged_in(annotator)
    assert assignments(theirs) == 200
    annotator.set_password("a-new-long-password-9")
    annotator.save()
    assert assignments(theirs) in (401, 403)


def test_a_deleted_user_is_out(annotator):
    theirs = logged_in(annotator)
    assert assignments(theirs) == 200
    User.objects.filter(pk=annotator.pk).delete()
    assert assignments(theirs) in (401, 403)
