"""The users page: admins create users, set their roles and deactivate them; nobody else may."""

import re

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.urls import reverse

from annotator.roles import user_roles
from tests.factories import login_request

pytestmark = pytest.mark.django_db


def test_only_admins_reach_the_users_pages(client, annotator, adjudicator, other_annotator):
    for user in (annotator, adjudicator):
        client.force_login(user)
        assert client.get(reverse("manage_users")).status_code == 403
        response = client.post(reverse("manage_users"), {"username": "mallory", "password": "x" * 20})
        assert response.status_code == 403
        url = reverse("manage_user_roles", args=[other_annotator.pk])
        assert client.post(url, {"roles": ["admin"]}).status_code == 403
        assert (
            client.post(reverse("manage_user_active", args=[other_annotator.pk]), {"active": "0"}).status_code
            == 403
        )
    assert not User.objects.filter(username="mallory").exists()
    assert user_roles(User.objects.get(pk=other_annotator.pk)) == {"annotator"}
    assert User.objects.get(pk=other_annotator.pk).is_active


def test_the_users_page_lists_users_with_their_roles(client, admin_user, annotator):
    client.force_login(admin_user)
    body = client.get(reverse("manage_users")).content.decode()
    row = re.search(r'<tr data-user="alice">.*?</tr>', body, re.S).group(0)
    assert 'value="annotator" checked' in row and 'value="admin" checked' not in row
    assert "active" in row


def test_an_admin_creates_a_user_with_a_typed_password_and_roles(client, admin_user):
    client.force_login(admin_user)
    response = client.post(
        reverse("manage_users"),
        {
            "username": "frank",
            "email": "frank@example.org",
            "password": "correct horse 42",
            "roles": ["annotator", "adjudicator"],
        },
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="user-created"' in body and "frank" in body and 'id="new-password"' not in body
    user = authenticate(login_request(), username="frank", password="correct horse 42")
    assert user is not None and user.email == "frank@example.org"
    assert user_roles(user) == {"annotator", "adjudicator"}


def test_a_generated_password_is_shown_once_and_works(client, admin_user):
    client.force_login(admin_user)
    response = client.post(reverse("manage_users"), {"username": "gina", "roles": ["annotator"]})
    assert response.status_code == 200
    password = re.search(r'<code id="new-password">([^<]+)</code>', response.content.decode()).group(1)
    assert len(password) >= 16
    assert authenticate(login_request(), username="gina", password=password) is not None
    assert password not in client.get(reverse("manage_users")).content.decode()


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"username": "", "password": "correct horse 42"}, "username", "This field is required"),
        ({"username": "bad name!", "password": "correct horse 42"}, "username", "Enter a valid username"),
        (
            {"username": "alice", "password": "correct horse 42"},
            "username",
            "a user named &#x27;alice&#x27; already exists",
        ),
        ({"username": "hank", "password": "123"}, "password", "This password is too short"),
        (
            {"username": "hank", "email": "not-an-address", "password": "correct horse 42"},
            "email",
            "Enter a valid email",
        ),
        (
            {"username": "hank", "password": "correct horse 42", "roles": ["boss"]},
            "roles",
            "Select a valid choice",
        ),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(
    client, admin_user, annotator, data, field, message
):
    client.force_login(admin_user)
    before = User.objects.count()
    response = client.post(reverse("manage_users"), data)
    assert response.status_code == 400
    body = response.content.decode()
    errors = re.search(rf'<div class="error" data-field="{field}">(.*?)</div>', body, re.S)
    assert errors is not None and message in errors.group(1)
    assert User.objects.count() == before


def test_an_admin_changes_roles(client, admin_user, annotator):
    client.force_login(admin_user)
    url = reverse("manage_user_roles", args=[annotator.pk])
    response = client.post(url, {"roles": ["adjudicator", "admin"]}, follow=True)
    assert response.status_code == 200
    assert "alice: adjudicator, admin" in response.content.decode()
    assert user_roles(User.objects.get(pk=annotator.pk)) == {"adjudicator", "admin"}
    client.post(url, {})  # no box ticked: no role
    assert user_roles(User.objects.get(pk=annotator.pk)) == frozenset()


def test_roles_bad_input_and_self_demotion_are_400s(client, admin_user, annotator):
    client.force_login(admin_user)
    response = client.post(
        reverse("manage_user_roles", args=[annotator.pk]), {"roles": ["annotator", "boss"]}
    )
    assert response.status_code == 400
    assert "boss is not one of the available choices" in response.content.decode()
    assert user_roles(User.objects.get(pk=annotator.pk)) == {"annotator"}
    response = client.post(reverse("manage_user_roles", args=[admin_user.pk]), {"roles": ["annotator"]})
    assert response.status_code == 400
    assert "cannot take away your own admin role" in response.content.decode()
    assert user_roles(User.objects.get(pk=admin_user.pk)) == {"admin"}
    assert client.post(reverse("manage_user_roles", args=[99999]), {"roles": []}).status_code == 404


def test_an_admin_deactivates_and_reactivates_a_user(client, admin_user, annotator):
    client.force_login(admin_user)
    url = reverse("manage_user_active", args=[annotator.pk])
    response = client.post(url, {"active": "0"}, follow=True)
    assert response.status_code == 200
    assert "alice is deactivated" in response.content.decode()
    assert not User.objects.get(pk=annotator.pk).is_active
    assert authenticate(login_request(), username="alice", password="alice-pw") is None
    client.post(url, {"active": "1"})
    assert User.objects.get(pk=annotator.pk).is_active
    response = client.post(reverse("manage_user_active", args=[admin_user.pk]), {"active": "0"})
    assert response.status_code == 400 and "cannot deactivate yourself" in response.content.decode()
    assert User.objects.get(pk=admin_user.pk).is_active
    response = client.post(url, {"active": "maybe"})
    assert response.status_code == 400 and "active" in response.content.decode()


def test_the_header_shows_the_admins_own_roles_on_the_users_page(client, admin_user):
    client.force_login(admin_user)
    body = client.get(reverse("manage_users")).content.decode()
    who = re.search(r'<form class="who".*?<span>(.*?)</span>', body, re.S).group(1)
    assert who == "dana · admin"
    # every role still has its checkbox in each user's row
    row = re.search(r'<tr data-user="dana">.*?</tr>', body, re.S).group(0)
    assert re.findall(r'name="roles" value="(\w+)"', row) == ["annotator", "adjudicator", "admin"]


def test_a_refused_role_or_active_change_rerenders_the_users_page_whose_forms_post_to_the_users_urls(
    client, admin_user, annotator
):
    client.force_login(admin_user)
    response = client.post(reverse("manage_user_active", args=[admin_user.pk]), {"active": "0"})
    assert response.status_code == 400
    body = response.content.decode()
    error = re.search(r'<div class="error" data-field="is_active" role="alert">(.*?)</div>', body, re.S)
    assert error is not None and "cannot deactivate yourself" in error.group(1)
    assert 'id="users"' in body  # the whole users page, not a bare one
    # its New user form still creates a user, not another active change
    assert re.search(rf'<form method="post" action="{reverse("manage_users")}"[^>]*id="user-form"', body)
    assert User.objects.get(pk=admin_user.pk).is_active
    response = client.post(reverse("manage_user_roles", args=[admin_user.pk]), {"roles": ["annotator"]})
    assert response.status_code == 400
    body = response.content.decode()
    assert "cannot take away your own admin role" in body
    assert re.search(rf'<form method="post" action="{reverse("manage_users")}"[^>]*id="user-form"', body)
    assert user_roles(User.objects.get(pk=admin_user.pk)) == {"admin"}


def test_a_role_change_redirects_to_the_users_page_with_a_message(client, admin_user, annotator):
    client.force_login(admin_user)
    response = client.post(reverse("manage_user_roles", args=[annotator.pk]), {"roles": ["adjudicator"]})
    assert response.status_code == 302 and response["Location"] == reverse("manage_users")
    body = client.get(reverse("manage_users")).content.decode()
    assert re.search(r'<ul class="messages"><li class="success">alice: adjudicator</li>', body)
    assert user_roles(User.objects.get(pk=annotator.pk)) == {"adjudicator"}


@pytest.mark.parametrize("password", ["password", "12345678901234"])
def test_a_common_or_numeric_password_is_refused(client, admin_user, password):
    client.force_login(admin_user)
    response = client.post(reverse("manage_users"), {"username": "gina", "password": password})
    assert response.status_code == 400
    body = response.content.decode()
    errors = re.search(r'<div class="error" data-field="password">(.*?)</div>', body, re.S)
    assert errors is not None and ("too common" in errors.group(1) or "entirely numeric" in errors.group(1))
    assert not User.objects.filter(username="gina").exists()
