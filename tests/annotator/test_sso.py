"""Single sign-on (annotator.sso) against a local OpenID Connect provider the test starts
(tests/oidc_provider.py): users created on the first login, roles from a claim on every login,
tampered answers refused, local passwords and their throttling unchanged."""

from __future__ import annotations

import logging
import socket
import time
from html.parser import HTMLParser
from urllib.parse import urlencode, urlsplit

import pytest
import requests
from axes.models import AccessAttempt
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import Client
from django.urls import reverse

from annotator import sso
from annotator.roles import ADJUDICATOR, ADMIN, ANNOTATOR, user_roles
from tests.oidc_provider import SSO_BACKEND, Provider, configure

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
START = "/oidc/authenticate/"
ZOE = {
    "sub": "8f14e45f",
    "preferred_username": "zoe",
    "email": "zoe@inst.example",
    "given_name": "Zoe",
    "family_name": "Lind",
    "groups": ["nsm-adjudicators", "staff-all"],
}


@pytest.fixture
def provider():
    with Provider(client_id="nsm-audit", client_secret="the-client-secret", claims=dict(ZOE)) as running:
        yield running


@pytest.fixture
def sso_on(settings, provider) -> Provider:
    configure(settings, provider)
    return provider


def through_provider(client: Client, start: str = START) -> tuple[str, str]:
    """The browser's way to the provider and back: the callback's path and query."""
    to_provider = client.get(start)
    assert to_provider.status_code == 302, to_provider.content
    back = requests.get(to_provider["Location"], allow_redirects=False, timeout=10)
    assert back.status_code == 302, back.text
    callback = urlsplit(back.headers["Location"])
    assert callback.path == reverse(sso.CALLBACK)
    return callback.path, callback.query


def sso_login(client: Client, start: str = START):
    path, query = through_provider(client, start)
    return client.get(f"{path}?{query}")


def logged_in(client: Client) -> User | None:
    user_id = client.session.get("_auth_user_id")
    return User.objects.get(pk=user_id) if user_id else None


def roles_of(username: str) -> set[str]:
    return set(User.objects.get(username=username).groups.values_list("name", flat=True))


def test_the_first_login_creates_the_user_with_the_mapped_roles(sso_on, client):
    response = sso_login(client)
    assert response.status_code == 302 and response["Location"] == reverse("home")
    zoe = User.objects.get(username="zoe")
    assert logged_in(client) == zoe
    assert (zoe.email, zoe.first_name, zoe.last_name) == ("zoe@inst.example", "Zoe", "Lind")
    assert not zoe.has_usable_password()  # no local password: only the provider lets her in
    assert roles_of("zoe") == {ADJUDICATOR}  # staff-all is mapped to nothing
    home = client.get(reverse("home")).content.decode()
    assert "zoe · adjudicator" in home and reverse("adjudicate") in home
    assert reverse("manage_users") not in home
    # the code was exchanged, the ID token's key read, the userinfo asked: a real provider's flow
    assert [p for p in sso_on.seen if p != "/.well-known/openid-configuration"] == [
        "/authorize", "/token", "/jwks", "/userinfo",
    ]  # fmt: skip


def test_a_second_login_with_changed_claims_updates_the_roles(sso_on, client):
    sso_login(client)
    assert roles_of("zoe") == {ADJUDICATOR}
    sso_on.claims = {**ZOE, "email": "zoe.lind@inst.example", "groups": ["nsm-admins", "nsm-staff"]}
    other = Client()
    assert sso_login(other).status_code == 302
    zoe = User.objects.get(username="zoe")
    assert roles_of("zoe") == {ADMIN, ANNOTATOR} and zoe.email == "zoe.lind@inst.example"
    assert User.objects.filter(username__iexact="zoe").count() == 1
    # the roles cached for the first session are forgotten: it sees her new roles at once
    assert client.get(reverse("manage_users")).status_code == 200
    assert client.get(reverse("adjudicate")).status_code == 200  # an admin's, not an adjudicator's


def test_roles_the_map_does_not_name_stay_as_an_admin_set_them(sso_on, settings, client):
    settings.NSM_OIDC_ROLE_MAP = "nsm-admins=admin,nsm-adjudicators=adjudicator"
    zoe = User.objects.create_user("Zoe", email="old@inst.example")  # made by an admin beforehand
    zoe.groups.add(Group.objects.get_or_create(name=ANNOTATOR)[0], Group.objects.get_or_create(name=ADMIN)[0])
    sso_login(client)
    assert logged_in(client) == zoe  # the same person: names are matched in any case
    # admin is managed by the provider and no value maps to it: taken away; annotator is not managed
    assert roles_of("Zoe") == {ADJUDICATOR, ANNOTATOR}
    assert user_roles(User.objects.get(pk=zoe.pk)) == {ADJUDICATOR, ANNOTATOR}


def test_everyone_the_provider_lets_in_gets_the_star_role(sso_on, settings, client):
    settings.NSM_OIDC_ROLE_MAP = "nsm-admins=admin,*=annotator"
    sso_login(client)
    assert roles_of("zoe") == {ANNOTATOR}


def test_a_user_no_value_maps_to_gets_no_role_and_is_refused(sso_on, client):
    sso_on.claims = {**ZOE, "groups": ["students"]}
    assert sso_login(client).status_code == 302
    zoe = User.objects.get(username="zoe")
    assert logged_in(client) == zoe and roles_of("zoe") == set()
    home = client.get(reverse("home"))
    assert 'id="no-role"' in home.content.decode()
    assert client.get(reverse("queue")).status_code == 403
    assert client.get(reverse("adjudicate")).status_code == 403
    assert client.get("/api/items/").status_code == 403


def test_an_adjudicator_whose_group_was_taken_away_loses_the_role(sso_on, client):
    sso_login(client)
    sso_on.claims = {**ZOE, "groups": []}
    sso_login(Client())
    assert roles_of("zoe") == set()
    assert client.get(reverse("adjudicate")).status_code == 403


@pytest.mark.parametrize(
    "tamper, reason",
    [
        ({"key": "other"}, "JWS token verification failed"),
        ({"nonce": "not-the-one-we-sent"}, "Nonce verification failed"),
        ({"aud": "another-client"}, "audience 'another-client' is not this client"),
        ({"iss": "http://127.0.0.1:9/elsewhere"}, "issuer 'http://127.0.0.1:9/elsewhere' is not"),
    ],
)
def test_a_tampered_id_token_is_refused(sso_on, client, caplog, tamper, reason):
    sso_on.tamper = tamper
    with caplog.at_level(logging.WARNING, logger="annotator.sso"):
        response = sso_login(client)
    assert response.status_code == 400
    assert 'id="sso-error"' in response.content.decode()
    assert "could not be verified" in response.content.decode()
    assert reason in caplog.text
    assert logged_in(client) is None and not User.objects.filter(username="zoe").exists()


def test_an_expired_id_token_is_refused_but_a_clock_a_little_ahead_is_not(sso_on, client, caplog):
    sso_on.tamper = {"iat": int(time.time()) - 7200, "exp": int(time.time()) - 3600}
    with caplog.at_level(logging.WARNING, logger="annotator.sso"):
        response = sso_login(client)
    assert response.status_code == 400 and "Signature has expired" in caplog.text
    assert logged_in(client) is None
    sso_on.tamper = {"iat": int(time.time()) + 30}  # the provider's clock half a minute ahead
    assert sso_login(client).status_code == 302 and logged_in(client).username == "zoe"


def test_a_provider_refusing_this_site_is_an_error_page(sso_on, settings, client, caplog):
    settings.NSM_OIDC_CLIENT_SECRET = "not-the-secret"
    with caplog.at_level(logging.WARNING, logger="annotator.sso"):
        response = sso_login(client)
    assert response.status_code == 502 and "answered with an error" in response.content.decode()
    assert "invalid_client" in caplog.text and logged_in(client) is None


def test_a_callback_carried_to_another_browser_logs_no_one_in(sso_on, client):
    path, query = through_provider(client)
    stranger = Client()  # a login CSRF: the attacker's code in the victim's browser
    response = stranger.get(f"{path}?{query}")
    assert response.status_code == 400 and "started in another browser" in response.content.decode()
    assert logged_in(stranger) is None
    # nor is it good twice in the right browser
    assert client.get(f"{path}?{query}").status_code == 302
    assert client.get(f"{path}?{query}").status_code == 400


def test_the_provider_refusing_says_so(sso_on, client):
    client.get(START)
    state = next(iter(client.session["oidc_states"]))
    response = client.get(f"{reverse(sso.CALLBACK)}?{urlencode({'error': 'access_denied', 'state': state})}")
    assert response.status_code == 400 and "refused the sign-on (access_denied)" in response.content.decode()
    assert logged_in(client) is None


def test_an_unreachable_provider_is_a_page_not_a_crash(settings, provider, client):
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    configure(
        settings, provider, NSM_OIDC_DISCOVERY_URL=f"http://127.0.0.1:{port}/.well-known/openid-configuration"
    )
    response = client.get(START)
    assert response.status_code == 502 and "could not be reached" in response.content.decode()


def test_the_discovery_document_is_read_once(sso_on, client):
    sso_login(client)
    sso_login(Client())
    assert sso_on.seen.count("/.well-known/openid-configuration") == 1


def test_the_next_page_is_kept(sso_on, client):
    response = sso_login(client, f"{START}?next={reverse('adjudicate')}")
    assert response["Location"] == reverse("adjudicate")
    # an address elsewhere is not followed
    response = sso_login(Client(), f"{START}?next=https://evil.example/")
    assert response["Location"] == reverse("home")


def test_claims_in_the_userinfo_only_are_read(sso_on, client):
    sso_on.claims_in_id_token = False
    sso_login(client)
    assert roles_of("zoe") == {ADJUDICATOR}


def test_the_username_falls_back_to_the_email_and_the_claims_are_configurable(sso_on, settings, client):
    sso_on.claims = {k: v for k, v in ZOE.items() if k not in ("preferred_username", "groups")}
    sso_on.claims["realm_access"] = {"roles": ["nsm-admins"]}
    settings.NSM_OIDC_ROLE_CLAIM = ["realm_access.roles"]  # Keycloak's realm roles
    sso_login(client)
    assert roles_of("zoe@inst.example") == {ADMIN}
    sso_on.claims = {**ZOE, "upn": "zlind", "roles": "nsm-staff"}  # one string, not a list
    settings.NSM_OIDC_USERNAME_CLAIM = "upn"
    settings.NSM_OIDC_ROLE_CLAIM = ["roles"]
    sso_login(Client())
    assert roles_of("zlind") == {ANNOTATOR}


def test_a_login_without_any_name_or_with_a_bad_one_is_refused(sso_on, client):
    sso_on.claims = {"sub": "x1", "groups": ["nsm-staff"]}
    response = sso_login(client)
    assert (
        response.status_code == 400 and "neither preferred_username nor an email" in response.content.decode()
    )
    sso_on.claims = {"sub": "x2", "preferred_username": "zoe lind"}
    response = sso_login(Client())
    assert response.status_code == 400 and "cannot be a username here" in response.content.decode()
    assert User.objects.count() == 0


def test_with_account_creation_off_only_known_users_log_in(sso_on, settings, client):
    settings.NSM_OIDC_CREATE_USERS = False
    response = sso_login(client)
    assert response.status_code == 400 and "no account named zoe here" in response.content.decode()
    assert not User.objects.exists()
    User.objects.create_user("zoe")
    assert sso_login(client).status_code == 302 and roles_of("zoe") == {ADJUDICATOR}


def test_a_deactivated_user_is_refused(sso_on, client):
    User.objects.create_user("zoe", is_active=False)
    response = sso_login(client)
    assert response.status_code == 400 and "deactivated" in response.content.decode()
    assert logged_in(client) is None and roles_of("zoe") == set()


def test_a_user_without_a_role_may_log_in_again(sso_on, outsider, client):
    client.force_login(outsider)
    assert client.get(START).status_code == 302  # not 403: the way to get roles from the provider


class Buttons(HTMLParser):
    def __init__(self):
        super().__init__()
        self.forms, self.submits, self.links = [], [], {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append(attrs.get("action"))
        if tag == "button" and attrs.get("type") == "submit":
            self.submits.append(self.forms[-1])
        if tag == "a" and attrs.get("id"):
            self.links[attrs["id"]] = attrs["href"]


def test_the_login_page_offers_the_provider_beside_the_local_form(sso_on, client):
    page = client.get(f"{LOGIN}?next=/rounds/")
    html = page.content.decode()
    assert "Log in with Test IdP" in html
    found = Buttons()
    found.feed(html)
    assert found.submits[0] == LOGIN  # the local form's button is the first submit on the page
    assert found.links["sso-login"] == f"{START}?next=/rounds/"


def test_without_sso_there_is_no_button_and_no_flow(client, settings):
    assert not settings.NSM_OIDC_CLIENT_ID
    assert "sso-login" not in client.get(LOGIN).content.decode()
    assert client.get(START).status_code == 404
    assert client.get(f"{reverse(sso.CALLBACK)}?code=x&state=y").status_code == 404


def test_local_passwords_still_work(sso_on, adjudicator):
    client = Client()
    response = client.post(LOGIN, {"username": "carol", "password": "carol-pw"})
    assert response.status_code == 302 and logged_in(client) == adjudicator
    # a password form whose address carries ?code=&state= is no SSO callback
    client = Client()
    response = client.post(f"{LOGIN}?code=abc&state=def", {"username": "carol", "password": "carol-pw"})
    assert response.status_code == 302 and logged_in(client) == adjudicator
    assert "/token" not in sso_on.seen
    wrong = Client().post(LOGIN, {"username": "carol", "password": "wrong"})
    assert wrong.status_code == 200 and "Please try again" in wrong.content.decode()


def failures() -> list[tuple[str, int]]:
    return list(AccessAttempt.objects.order_by("username").values_list("username", "failures_since_start"))


def test_throttling_counts_passwords_not_sso_callbacks(sso_on, settings, client, adjudicator):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        Client().post(LOGIN, {"username": "carol", "password": "guess"})
    Client().post(LOGIN, {"username": "zoe", "password": "guess"})
    assert Client().post(LOGIN, {"username": "carol", "password": "carol-pw"}).status_code == 429
    assert failures() == [("carol", settings.AXES_FAILURE_LIMIT + 1), ("zoe", 1)]
    # the address is locked out for passwords, but the provider, which throttles its own, lets zoe in
    assert sso_login(client).status_code == 302 and logged_in(client).username == "zoe"
    # her login forgets what was counted against her account, not what her address tried at carol's
    assert failures() == [("carol", settings.AXES_FAILURE_LIMIT + 1)]
    assert Client().post(LOGIN, {"username": "carol", "password": "carol-pw"}).status_code == 429
    # a refused callback is no wrong password
    sso_on.tamper = {"aud": "another-client"}
    assert sso_login(Client()).status_code == 400
    assert failures() == [("carol", settings.AXES_FAILURE_LIMIT + 2)]
    # and a password login's success still clears its address, as before
    settings.AXES_FAILURE_LIMIT = 100
    assert Client().post(LOGIN, {"username": "carol", "password": "carol-pw"}).status_code == 302
    assert failures() == []


@pytest.mark.parametrize(
    "values, says",
    [
        ({"NSM_OIDC_CLIENT_ID": "c"}, ["annotator.E103", "annotator.E104"]),
        ({"NSM_OIDC_CLIENT_SECRET": "s", "NSM_OIDC_DISCOVERY_URL": "https://idp/x"}, ["annotator.E101"]),
        (
            {
                "NSM_OIDC_CLIENT_ID": "c",
                "NSM_OIDC_CLIENT_SECRET": "s",
                "NSM_OIDC_TOKEN_ENDPOINT": "https://t",
            },
            ["annotator.E104"],
        ),
        (
            {"NSM_OIDC_CLIENT_ID": "c", "NSM_OIDC_CLIENT_SECRET": "s", "NSM_OIDC_DISCOVERY_URL": "idp/x"},
            ["annotator.E105"],
        ),
        (
            {
                "NSM_OIDC_CLIENT_ID": "c",
                "NSM_OIDC_CLIENT_SECRET": "s",
                "NSM_OIDC_DISCOVERY_URL": "https://idp/x",
                "NSM_OIDC_ROLE_MAP": "nsm-admins=root",
            },
            ["annotator.E106"],
        ),
        (
            {
                "NSM_OIDC_CLIENT_ID": "c",
                "NSM_OIDC_CLIENT_SECRET": "s",
                "NSM_OIDC_DISCOVERY_URL": "https://idp/x",
                "NSM_OIDC_SCOPES": "email",
            },
            ["annotator.E107"],
        ),
    ],
)
def test_the_check_refuses_half_made_sso(settings, values, says):
    if "NSM_OIDC_CLIENT_ID" in values:  # as base.py does
        settings.AUTHENTICATION_BACKENDS = [*settings.AUTHENTICATION_BACKENDS, SSO_BACKEND]
    for name, value in values.items():
        setattr(settings, name, value)
    assert [error.id for error in sso.check_sso()] == says
    with pytest.raises(SystemCheckError, match=says[0]):
        call_command("check")


def test_the_check_names_what_is_missing_and_passes_a_whole_setup(settings):
    settings.NSM_OIDC_CLIENT_ID = "c"
    (secret, endpoints, backend) = sso.check_sso()
    assert backend.id == "annotator.E102"  # base.py adds the backend with the client id: here not
    settings.AUTHENTICATION_BACKENDS = [*settings.AUTHENTICATION_BACKENDS, SSO_BACKEND]
    assert secret.msg == "NSM_OIDC_CLIENT_ID is set but NSM_OIDC_CLIENT_SECRET is not"
    assert "NSM_OIDC_AUTHORIZATION_ENDPOINT, NSM_OIDC_TOKEN_ENDPOINT, NSM_OIDC_ISSUER" in endpoints.msg
    settings.NSM_OIDC_CLIENT_SECRET = "s"
    settings.NSM_OIDC_DISCOVERY_URL = "http://idp.example/.well-known/openid-configuration"
    assert sso.check_sso() == []
    assert [w.id for w in sso.check_sso_deploy()] == ["annotator.W101"]  # http://: --deploy warns
    settings.NSM_OIDC_DISCOVERY_URL = "https://idp.example/.well-known/openid-configuration"
    assert sso.check_sso_deploy() == []


def test_the_role_map_is_read_strictly():
    assert sso.parse_role_map(" a=admin, b = adjudicator ,a=annotator,,*=annotator") == (
        ("a", "admin"), ("b", "adjudicator"), ("a", "annotator"), ("*", "annotator"),
    )  # fmt: skip
    assert sso.parse_role_map("team=nsm=admin") == (("team=nsm", "admin"),)  # the last = splits
    with pytest.raises(ValueError, match="'nsm-admins' is not value=role"):
        sso.parse_role_map("nsm-admins")
    with pytest.raises(ValueError, match="'root' is no role"):
        sso.parse_role_map("x=root")
