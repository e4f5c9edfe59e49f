"""Login throttling (annotator.login_limits, django-axes): wrong passwords from one address, or
at one account from anywhere, lock that address or account out before any password is hashed."""

from __future__ import annotations

import base64

import pytest
from django.contrib.auth.hashers import MD5PasswordHasher
from django.test import Client, override_settings
from django.urls import reverse

from annotator import login_limits
from annotator.models import ApiToken

LOGIN = "/accounts/login/"


class CountingHasher(MD5PasswordHasher):
    """A (fast) hasher counting how often a password is checked: what costs a web worker."""

    checks = 0

    def verify(self, password, encoded):
        CountingHasher.checks += 1
        return super().verify(password, encoded)


@pytest.fixture
def counted(settings):
    settings.PASSWORD_HASHERS = ["tests.annotator.test_login_limits.CountingHasher"]
    CountingHasher.checks = 0
    return CountingHasher


@pytest.fixture
def user(django_user_model, counted):
    return django_user_model.objects.create_user("lena", password="the right passphrase 7")


def attempt(address: str, username: str, password: str):
    client = Client(REMOTE_ADDR=address)
    return client, client.post(LOGIN, {"username": username, "password": password})


@pytest.mark.django_db
def test_five_wrong_passwords_lock_the_address_out_before_any_password_is_checked(user, counted):
    for _ in range(4):
        _, response = attempt("203.0.113.9", "lena", "wrong")
        assert response.status_code == 200 and "password didn" in response.content.decode()
    _, response = attempt("203.0.113.9", "lena", "wrong")
    assert response.status_code == 429  # the fifth failure locks at once
    assert counted.checks == 5
    client, response = attempt("203.0.113.9", "lena", "the right passphrase 7")
    assert response.status_code == 429
    assert response["Retry-After"] == str(15 * 60)
    page = response.content.decode()
    assert "Too many failed logins" in page and "refused for 15 minutes" in page
    assert counted.checks == 5  # refused before the password was hashed, even the right one
    assert "_auth_user_id" not in client.session
    # the flood also locked the account it named, from anywhere, for the same while
    _, response = attempt("198.51.100.4", "lena", "the right passphrase 7")
    assert response.status_code == 429


@pytest.mark.django_db
def test_the_api_token_s_basic_auth_answers_a_lockout_with_429_json(user, counted):
    """Found by a security probe: with the account or the address locked, Basic auth on
    /api/token/ answered 401 "Invalid username/password" (the right password included), not the
    429 with Retry-After that the login page and the API's own answer (locked_out) give."""
    basic = {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(b"lena:wrong").decode()}
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(5):
        assert client.post(reverse("api_token"), **basic).status_code in (401, 429)
    right = {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(b"lena:the right passphrase 7").decode()}
    for address in ("203.0.113.7", "198.51.100.4"):  # the address, and the account from elsewhere
        response = Client(REMOTE_ADDR=address).post(reverse("api_token"), **right)
        assert response.status_code == 429 and response["Retry-After"] == str(15 * 60)
        assert "Too many failed logins" in response.json()["detail"]
    assert counted.checks == 5  # the right password was never hashed
    assert not ApiToken.objects.filter(user=user).exists()


@pytest.mark.django_db
def test_one_address_flooding_another_account_leaves_other_people_alone(user, django_user_model, counted):
    django_user_model.objects.create_user("omar", password="omar's own passphrase")
    for _ in range(6):
        attempt("203.0.113.9", "omar", "guess")
    client, response = attempt("198.51.100.4", "lena", "the right passphrase 7")
    assert response.status_code == 302 and client.session["_auth_user_id"] == str(user.pk)


@pytest.mark.django_db
def test_a_login_that_succeeds_resets_the_count(user, counted):
    for _ in range(4):
        attempt("203.0.113.9", "lena", "wrong")
    _, response = attempt("203.0.113.9", "lena", "the right passphrase 7")
    assert response.status_code == 302
    for _ in range(4):
        attempt("203.0.113.9", "lena", "wrong")
    _, response = attempt("203.0.113.9", "lena", "the right passphrase 7")
    assert response.status_code == 302  # 8 failures in all, never 5 in a row


@pytest.mark.django_db
def test_the_admin_login_is_throttled_too(user, counted):
    client = Client(REMOTE_ADDR="203.0.113.9")
    for _ in range(5):
        client.post("/admin/login/", {"username": "lena", "password": "wrong"})
    response = client.post("/admin/login/", {"username": "lena", "password": "the right passphrase 7"})
    assert response.status_code == 429 and counted.checks == 5


@pytest.mark.parametrize(
    ("proxies", "forwarded", "address"),
    [
        (0, "1.2.3.4", "10.0.0.2"),  # no proxy of ours: the header is the client's word, ignored
        (1, "1.2.3.4", "1.2.3.4"),  # nginx appended the client's address
        (1, "6.6.6.6, 1.2.3.4", "1.2.3.4"),  # what the client wrote itself comes before it
        (2, "1.2.3.4", "10.0.0.2"),  # fewer hops than proxies: the connection's own address
        (1, "not-an-address", "10.0.0.2"),  # a garbled header: the connection's own address
    ],
)
def test_behind_a_proxy_the_client_is_the_address_before_the_proxies(rf, proxies, forwarded, address):
    request = rf.get("/", HTTP_X_FORWARDED_FOR=forwarded, REMOTE_ADDR="10.0.0.2")
    with override_settings(NSM_PROXY_COUNT=proxies):
        assert login_limits.client_address(request) == address


def test_the_login_page_says_nothing_of_a_lockout_to_someone_not_locked_out(client):
    assert "Too many failed logins" not in client.get(reverse("login")).content.decode()


def test_a_request_without_an_address_counts_against_none(rf):
    """A login made in code (Django's force_login, a script) has no connection: its access log
    row gets no address, not a made-up one that PostgreSQL's inet column would refuse."""
    request = rf.get("/")
    del request.META["REMOTE_ADDR"]
    assert login_limits.client_address(request) is None
