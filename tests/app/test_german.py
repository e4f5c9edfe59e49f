"""Issue 25: German is a complete second interface language, chosen by the browser or the switch
in the footer, and the pages say which language they are in."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_a_browser_asking_for_german_gets_the_pages_in_german(client, annotator, submitted):
    client.force_login(annotator)
    page = client.get(reverse("queue"), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert '<html lang="de">' in page
    assert "Meine Arbeit" in page and "Abmelden" in page and "My work" not in page
    english = client.get(reverse("queue"), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<html lang="en">' in english and "My work" in english


def test_the_switch_keeps_the_choice_for_the_next_pages(client, adjudicator, submitted):
    client.force_login(adjudicator)
    switched = client.post(reverse("set_language"), {"language": "de", "next": reverse("adjudicate")})
    assert switched.status_code == 302 and switched["Location"] == reverse("adjudicate")
    page = client.get(reverse("adjudicate")).content.decode()  # no Accept-Language: the cookie
    assert '<html lang="de">' in page and "Übereinstimmung" in page
    assert client.cookies["django_language"].value == "de"
    back = client.post(reverse("set_language"), {"language": "en", "next": reverse("adjudicate")})
    assert back.status_code == 302 and "Agreement" in client.get(reverse("adjudicate")).content.decode()


def test_a_form_error_and_the_login_page_are_german_too(client, annotator):
    login = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Anmelden" in login and "Sprache" in login
    wrong = client.post(
        reverse("login"), {"username": "alice", "password": "wrong"}, HTTP_ACCEPT_LANGUAGE="de"
    ).content.decode()
    assert "Log in" not in wrong and "Anmelden" in wrong


def test_the_scripts_catalogue_serves_german(client):
    catalogue = client.get(reverse("javascript_catalog"), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Entwurf" in catalogue  # the annotation page's "draft kept" notice
    english = client.get(reverse("javascript_catalog"), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Entwurf" not in english
