"""Single sign-on in a real browser: the login page's button, a local OpenID Connect provider the
test starts (tests/oidc_provider.py), and back on Home with the role the provider's groups map to."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.oidc_provider import Provider, configure

pytestmark = pytest.mark.django_db(transaction=True)

CLAIMS = {
    "sub": "u-77",
    "preferred_username": "zoe",
    "email": "zoe@inst.example",
    "groups": ["nsm-adjudicators"],
}


def test_an_adjudicator_logs_in_through_the_institutes_provider(page, live_server, settings):
    with Provider(client_id="nsm-audit", client_secret="the-client-secret", claims=CLAIMS) as provider:
        configure(settings, provider)
        page.goto(f"{live_server.url}/accounts/login/")
        # the local form stays, its button first; the provider's beside it
        expect(page.locator("button[type=submit]").first).to_have_text("Log in")
        page.click("text=Log in with Test IdP")
        page.wait_for_url(f"{live_server.url}/")
        page.wait_for_load_state()
        expect(page.locator("form.who span")).to_have_text("zoe · adjudicator")
        nav = page.locator("header nav")
        expect(nav.locator("text=Agreement")).to_be_visible()  # an adjudicator's links
        expect(nav.locator("text=Users")).to_have_count(0)  # not an admin's
        assert "/authorize" in provider.seen and "/token" in provider.seen
        zoe = User.objects.get(username="zoe")
        assert set(zoe.groups.values_list("name", flat=True)) == {"adjudicator"}
        # her page opens: the role works, not only its name
        page.click("header nav >> text=Agreement")
        page.wait_for_load_state()
        expect(page.locator("h1").first).to_be_visible()
        assert page.url.startswith(f"{live_server.url}/adjudicate")


def test_a_refused_sign_on_says_why_on_the_login_page(page, live_server, settings):
    with Provider(client_id="nsm-audit", client_secret="the-client-secret", claims=CLAIMS) as provider:
        configure(settings, provider)
        provider.tamper = {"key": "other"}  # an ID token signed with a key the provider does not publish
        page.goto(f"{live_server.url}/accounts/login/")
        page.click("#sso-login")
        expect(page.locator("#sso-error")).to_contain_text("could not be verified")
        expect(page.locator("form.who")).to_have_count(0)  # nobody logged in
        assert not User.objects.filter(username="zoe").exists()
