"""A number typed where an id or a version goes, in superscript or another script's digits: '²' is
a digit to str.isdigit but int('²') raises, so every query that checked isdigit() before int()
answered 500 (found after the new-round form's, issue 24). Each place now reads ASCII digits only,
as the database's ids are, and answers what it answers to any unknown id or name."""

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from contrasts.services import pair_set_create
from registry.selectors import UnknownParser, parser_get, trained_ids

pytestmark = pytest.mark.django_db

SUPERSCRIPT = "²"


def test_the_assignments_api_names_the_round_it_cannot_find(client, annotator, prefilled_round):
    client.force_login(annotator)
    response = client.get("/api/assignments/", {"round": SUPERSCRIPT})
    assert response.status_code == 400
    assert response.json() == {"round": ["no round named '²' (nor with that id)"]}


def test_the_contrast_sets_item_preview_names_the_item_it_cannot_find(client, adjudicator, items):
    pair_set = pair_set_create(user=adjudicator, name="pairs")
    client.force_login(adjudicator)
    page = client.get(reverse("contrast_set", args=[pair_set.pk]), {"item": SUPERSCRIPT})
    assert page.status_code == 200 and "no item with id or source id &#x27;²&#x27;" in page.content.decode()


def test_the_profiles_page_names_the_round_it_cannot_find(client, adjudicator, prefilled_round):
    client.force_login(adjudicator)
    page = client.get(reverse("profiles"), {"round": SUPERSCRIPT})
    assert (
        page.status_code == 400
        and "round: there is no round &#x27;²&#x27; (give a round&#x27;s id)" in page.content.decode()
    )


def test_a_parser_version_in_superscript_is_no_parser(client, admin_user):
    client.force_login(admin_user)
    response = client.get("/api/parsers/", {"name": f"tiny@{SUPERSCRIPT}"})
    assert response.status_code == 200 and response.json()["results"] == []
    with pytest.raises(UnknownParser, match="no registered parser 'tiny@²'"):
        parser_get(f"tiny@{SUPERSCRIPT}")
    assert trained_ids(f"classifier:tiny@{SUPERSCRIPT}") is None


def test_the_learning_queue_command_names_the_round_it_cannot_find(prefilled_round):
    with pytest.raises(CommandError, match="no round named '²'"):
        call_command("learning_queue", "show", SUPERSCRIPT)
