"""API tokens: the page (any logged-in user, their own token), the API, and Token authentication."""

import base64
import re

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from annotator.models import ApiToken as Token
from annotator.tokens import key_digest, token_create


def _key_on(page: str) -> str:
    found = re.search(r'<code id="token-key">([0-9a-f]{40})</code>', page)
    assert found, "the new key is shown on the page"
    return found.group(1)


def _post(client, action: str) -> str:
    """A form post as a browser makes it: redirected to the page, which it then shows."""
    answer = client.post(reverse("account_tokens"), {"action": action})
    assert answer.status_code == 302 and answer["Location"] == reverse("account_tokens")
    return client.get(answer["Location"]).content.decode()


def test_the_page_creates_shows_the_key_once_replaces_and_revokes(client, annotator):
    client.force_login(annotator)
    page = client.get(reverse("account_tokens")).content.decode()
    assert "You have no token" in page and 'id="token-key"' not in page
    key = _key_on(_post(client, "create"))
    assert Token.objects.get(user=annotator).digest == key_digest(key)
    # a reload shows the page again, not the key, and makes no new token (found by a browser
    # walkthrough: reloading re-posted the form and replaced the key just copied)
    again = client.get(reverse("account_tokens")).content.decode()
    assert key not in again and "You have a token" in again
    assert Token.objects.get(user=annotator).digest == key_digest(key)
    second = _key_on(_post(client, "create"))
    assert second != key and list(Token.objects.filter(user=annotator).values_list("digest", flat=True)) == [
        key_digest(second)
    ]
    page = _post(client, "revoke")
    assert "Token revoked" in page and not Token.objects.filter(user=annotator).exists()


def test_the_page_refuses_a_bad_action_and_anonymous_users(client, annotator):
    assert client.get(reverse("account_tokens")).status_code == 302  # to the login page
    client.force_login(annotator)
    assert client.post(reverse("account_tokens"), {"action": "steal"}).status_code == 400
    assert not Token.objects.exists()


def test_the_page_posts_need_a_csrf_token(annotator):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator)
    assert client.post(reverse("account_tokens"), {"action": "create"}).status_code == 403
    assert not Token.objects.exists()


def test_the_user_menu_links_the_token_page(client, annotator):
    client.force_login(annotator)
    assert reverse("account_tokens") in client.get(reverse("home")).content.decode()


def _basic(username: str, password: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()}


def test_a_script_gets_a_key_with_its_password_and_uses_it(client, annotator, prefilled_round):
    assert client.post(reverse("api_token")).status_code == 401
    assert client.post(reverse("api_token"), **_basic("alice", "wrong")).status_code == 401
    answer = client.post(reverse("api_token"), **_basic("alice", "alice-pw"))
    assert answer.status_code == 201
    key = answer.json()["key"]
    assert (
        Token.objects.get(user=annotator).digest == key_digest(key) and answer.json()["username"] == "alice"
    )
    mine = client.get(reverse("api_assignments"), HTTP_AUTHORIZATION=f"Token {key}")
    assert (
        mine.status_code == 200
        and mine.json()["count"] == prefilled_round.assignments.filter(annotator=annotator).count()
    )
    state = client.get(reverse("api_token"), HTTP_AUTHORIZATION=f"Token {key}").json()
    assert state["exists"] is True and "key" not in state


def test_creating_again_replaces_the_key_and_revoking_ends_it(client, annotator):
    old = token_create(user=annotator).key
    new = client.post(reverse("api_token"), HTTP_AUTHORIZATION=f"Token {old}").json()["key"]
    assert new != old
    assert client.get(reverse("api_token"), HTTP_AUTHORIZATION=f"Token {old}").status_code == 401
    assert client.delete(reverse("api_token"), HTTP_AUTHORIZATION=f"Token {new}").status_code == 204
    assert not Token.objects.exists()
    assert client.get(reverse("api_token"), HTTP_AUTHORIZATION=f"Token {new}").status_code == 401
    client.force_login(annotator)
    assert client.delete(reverse("api_token")).status_code == 404


def test_a_token_of_an_inactive_user_is_refused(client, annotator):
    key = token_create(user=annotator).key
    annotator.is_active = False
    annotator.save()
    assert client.get(reverse("api_token"), HTTP_AUTHORIZATION=f"Token {key}").status_code == 401
    # the other APIs refuse it too
    assert client.get(reverse("api_assignments"), HTTP_AUTHORIZATION=f"Token {key}").status_code == 401


def test_the_database_and_the_admin_hold_no_key_only_its_digest(client, annotator):
    """Issue 24: keys were stored in clear and listed in Django's admin."""
    key = token_create(user=annotator).key
    row = Token.objects.get(user=annotator)
    assert key not in str(list(Token.objects.values_list()))  # no column holds the key
    assert row.digest == key_digest(key) and len(key) == 40
    assert client.get(reverse("api_assignments"), HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    assert client.get(reverse("api_assignments"), HTTP_AUTHORIZATION=f"Token {row.digest}").status_code == 401
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_superuser("root", "root@example.org", "pw"))
    listing = client.get("/admin/annotator/apitoken/").content.decode()
    assert "alice" in listing and key not in listing and row.digest not in listing
    assert client.get("/admin/authtoken/tokenproxy/").status_code == 404  # DRF's clear-key admin is gone
    annotator.is_active = False
    annotator.save()
    from django.test import Client

    assert Client().get(reverse("api_token"), HTTP_AUTHORIZATION=f"Token {key}").status_code == 401


@pytest.mark.django_db(transaction=True)
def test_the_migration_hashes_the_clear_keys_and_they_go_on_working():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor
    from django.test import Client
    from rest_framework.authtoken.models import Token as DrfToken

    before = [("annotator", "0005_prediction_text_field"), ("authtoken", "0004_alter_tokenproxy_options")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    user = old.get_model("auth", "User").objects.create(username="olga")
    key = "0" * 38 + "ab"
    old.get_model("authtoken", "Token").objects.create(key=key, user_id=user.pk)

    executor = MigrationExecutor(connection)  # a fresh graph: the one above has 0006 unapplied
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert not DrfToken.objects.exists()  # no clear key is left
    assert Token.objects.get(user__username="olga").digest == key_digest(key)
    olga = Token.objects.get(user__username="olga").user
    olga.groups.add(Group.objects.get_or_create(name="annotator")[0])  # no role, no access
    answer = Client().get(reverse("api_token"), HTTP_AUTHORIZATION=f"Token {key}")
    assert answer.status_code == 200 and answer.json()["exists"] is True
