"""A refused or missing page keeps the site around its reader: the menu, the reason and a way on,
not a bare '403 Forbidden'."""

import time

import pytest
from django.db import connection
from django.db.utils import OperationalError
from django.test import Client
from django.urls import reverse

from config import errors


def test_a_refused_page_says_who_it_is_for_inside_the_site(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("jobs"))
    assert response.status_code == 403
    page = response.content.decode()
    assert "This page is for: admin." in page
    assert f'href="{reverse("queue")}"' in page  # the reader's own menu is there
    assert f'href="{reverse("home")}"' in page and "alice" in page


def test_an_adjudicator_page_refused_to_an_annotator_names_the_roles(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("adjudicate"))
    assert response.status_code == 403
    assert "This page is for: adjudicator, admin." in response.content.decode()


def test_a_page_refused_to_a_user_without_a_role_says_why(client, outsider):
    client.force_login(outsider)
    response = client.get(reverse("adjudicate"))
    assert response.status_code == 403
    assert "You have no role in this project, so only Home is open to you." in response.content.decode()


def test_a_missing_page_is_a_page_of_the_site(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("annotate", args=[999_999]))
    assert response.status_code == 404
    page = response.content.decode()
    assert "Not found" in page and f'href="{reverse("queue")}"' in page


def test_the_menu_and_home_offer_each_role_its_own_work(client, annotator, adjudicator, admin_user):
    client.force_login(adjudicator)
    page = client.get(reverse("home")).content.decode()
    assert f'href="{reverse("queue")}"' not in page  # "My work" would only say: nothing assigned
    assert f'<a class="card" href="{reverse("adjudicate")}">' in page
    client.force_login(admin_user)
    page = client.get(reverse("home")).content.decode()
    for name in ("manage_rounds", "manage_users", "jobs"):
        assert f'<a class="card" href="{reverse(name)}">' in page, name
    client.force_login(annotator)
    page = client.get(reverse("home")).content.decode()
    assert f'href="{reverse("queue")}"' in page and f'href="{reverse("adjudicate")}"' not in page


def test_the_site_has_an_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")
    page = client.get(reverse("login")).content.decode()
    assert 'rel="icon" href="/static/favicon.svg"' in page


def test_an_api_body_over_the_size_limit_is_a_json_400_saying_so(
    client, annotator, prefilled_round, settings
):
    """Found by an API walkthrough: a 3 MB JSON body got the site's HTML 'Bad Request' page."""
    from annotator.models import Annotation, Assignment

    client.force_login(annotator)
    a = Assignment.objects.filter(annotator=annotator).first()
    body = '{"notes": "' + "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10) + '", "base_version": 0}'
    response = client.post(
        reverse("api_annotation_submit", args=[a.pk]), body, content_type="application/json"
    )
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert "larger than 2.5 MB" in response.json()["detail"]
    assert not Annotation.objects.exists()
    # a page keeps the site's own answer
    assert client.post(reverse("annotate", args=[a.pk]), body, content_type="text/plain").status_code == 400


def test_a_form_sent_after_the_session_changed_says_so_inside_the_site(annotator, prefilled_round):
    """Found by a browser walkthrough: a save from a tab whose session was replaced (logged out
    and in again elsewhere) got Django's bare 'CSRF verification failed' page."""
    from django.test import Client

    from annotator.models import Annotation, Assignment

    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator)
    a = Assignment.objects.filter(annotator=annotator).first()
    response = client.post(
        reverse("annotate", args=[a.pk]), {"base_version": 0, "csrfmiddlewaretoken": "stale"}
    )
    assert response.status_code == 403
    page = response.content.decode()
    assert "was not saved" in page and "reload" in page.lower()
    assert f'href="{reverse("queue")}"' in page  # inside the site, with its menu
    assert not Annotation.objects.exists()


def test_a_save_after_logging_out_elsewhere_says_it_was_not_saved(client, annotator, prefilled_round):
    from annotator.models import Annotation, Assignment

    a = Assignment.objects.filter(annotator=annotator).first()
    response = client.post(reverse("annotate", args=[a.pk]), {"base_version": 0}, follow=True)
    page = response.content.decode()
    assert response.redirect_chain and "/accounts/login/" in response.redirect_chain[-1][0]
    assert "not saved" in page and "log in" in page.lower()
    assert not Annotation.objects.exists()


def test_logging_out_or_switching_language_on_the_login_page_warns_of_nothing_lost(client, annotator):
    """Found by a new user's walk through the site: the login page said "what you sent was not
    saved" after every logout, and after switching the language while logged out."""
    lost = "was not saved"
    client.force_login(annotator)
    page = client.post(reverse("logout"), follow=True)
    assert page.redirect_chain[-1][0] == reverse("login") and lost not in page.content.decode()
    login = f"{reverse('login')}?next=/work/"
    page = client.post(reverse("set_language"), {"language": "de", "next": login}, follow=True)
    assert page.redirect_chain[-1][0] == login and lost not in page.content.decode()
    assert "Anmelden" in page.content.decode()  # the switch itself worked


def test_a_live_preview_after_logging_out_says_the_session_ended_not_the_login_page(client, prefilled_round):
    """Found by a browser walkthrough: the annotation page's preview panel showed the whole login
    page once the session had ended in another tab."""
    from annotator.models import Assignment

    a = Assignment.objects.first()
    response = client.post(reverse("preview", args=[a.pk]), {}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="session-ended"' in page and "<form" not in page and "<html" not in page


class Outage:
    """Every query fails, while ``down``, as it does when PostgreSQL is stopped (or the pool's
    wait ran out); ``tries`` counts the queries asked for meanwhile and ``probes`` the direct
    connections DatabaseOutage tried."""

    def __init__(self, monkeypatch):
        self.down = False
        self.tries = 0
        self.probes = 0
        original = connection.cursor

        def cursor(*args, **kwargs):
            if self.down:
                self.tries += 1
                raise OperationalError(
                    "connection to server at 127.0.0.1, port 5432 failed: Connection refused"
                )
            return original(*args, **kwargs)

        def database_answers():
            self.probes += 1
            return not self.down

        monkeypatch.setattr(connection, "cursor", cursor)
        monkeypatch.setattr(errors, "database_answers", database_answers)
        monkeypatch.setattr(errors, "PROBE_SECONDS", 0.3)


@pytest.fixture
def outage(monkeypatch):
    yield Outage(monkeypatch)
    errors._outage["down"] = False


@pytest.mark.parametrize("path", ["/api/items/", "/"])
def test_the_database_down_answers_503_with_retry_after_at_once_then_recovers(path, adjudicator, outage):
    client = Client(raise_request_exception=False)
    client.force_login(adjudicator)  # the session is written before the database goes away
    outage.down = True
    response = client.get(path)
    assert response.status_code == 503
    assert response["Retry-After"] == str(errors.RETRY_AFTER_SECONDS)
    if path.startswith("/api/"):
        assert response["Content-Type"] == "application/json"
        assert response.json()["detail"].startswith("the database is not answering")
    else:
        assert "The database is not answering" in response.content.decode()
    tried = outage.tries
    assert tried >= 1 and outage.probes == 0
    # from now on a request does not wait on the pool: one direct probe, which fails, then 503
    again = client.get(path)
    assert again.status_code == 503 and again["Retry-After"] == response["Retry-After"]
    assert (outage.tries, outage.probes) == (tried, 1)
    outage.down = False
    assert client.get(path).status_code == 503  # the next probe is not due yet: no connection tried
    assert outage.probes == 1
    time.sleep(0.35)
    assert client.get(path).status_code == 200  # the probe gets through and lifts the hold
    assert outage.probes == 2 and errors._outage["down"] is False


def test_any_other_server_error_is_still_a_500_in_the_api_s_shape(adjudicator, monkeypatch):
    from annotator import api

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    client = Client(raise_request_exception=False)
    client.force_login(adjudicator)
    monkeypatch.setattr(api.ItemList, "get", broken)
    response = client.get("/api/items/")
    assert response.status_code == 500 and response.json() == {"detail": "server error"}
    assert errors._outage["down"] is False  # a bug is not an outage: the next request is served


def test_the_probe_connects_to_the_real_database():
    assert errors.database_answers() is True
