"""A save refused as stale (another tab saved first): the 409 page compares, Enter stays refused,
"Replace it with mine" overwrites on purpose, "Discard mine" is a plain GET."""

import re

import pytest
from django.urls import reverse

from annotator.models import Annotation, AnnotationRevision, Assignment
from tests.factories import PRED

pytestmark = pytest.mark.django_db


def form(values: dict, base_version: int, **extra) -> dict:
    return {"residue": "", "notes": "", "base_version": base_version, "time_spent_ms": 800, **values, **extra}


def base_version_on(body: str) -> int:
    return int(re.search(r'name="base_version" value="(\d+)"', body).group(1))


@pytest.fixture
def refused(client, prefilled_round, annotator):
    """Tab 1 saved version 1 (agency someone-else); tab 2, loaded at version 0, is refused."""
    client.force_login(annotator)
    a = Assignment.objects.filter(round=prefilled_round, annotator=annotator).order_by("position").first()
    url = reverse("annotate", args=[a.pk])
    assert client.post(url, form(PRED | {"agency": "someone-else"}, 0, notes="tab one")).status_code == 302
    mine = PRED | {"evaluation": "feel-bad", "flags": ["unrecoverable"]}
    response = client.post(url, form(mine, 0, residue="only mine"))
    assert response.status_code == 409
    return a, url, mine, response.content.decode()


def test_a_resubmit_from_the_409_page_is_refused_again_and_writes_nothing(client, refused):
    a, url, mine, body = refused
    assert base_version_on(body) == 0  # the page still carries the version the form was loaded at
    again = client.post(url, form(mine, base_version_on(body), residue="only mine"))  # Enter again
    assert again.status_code == 409
    saved = Annotation.objects.get(assignment=a)
    assert (saved.version, saved.agency, saved.evaluation, saved.notes) == (
        1,
        "someone-else",
        "feel-good",
        "tab one",
    )
    assert AnnotationRevision.objects.filter(annotation=saved).count() == 1


def test_the_409_page_shows_the_saved_version_beside_mine_and_marks_what_differs(refused):
    _, _, _, body = refused
    table = body[body.index('id="stale-compare"') : body.index("</table>", body.index('id="stale-compare"'))]
    rows = dict(re.findall(r'<tr data-field="(\w+)" class="(differs|same)">', table))
    assert {k for k, v in rows.items() if v == "differs"} == {
        "agency",
        "evaluation",
        "residue",
        "notes",
        "flags",
    }
    assert rows["trigger"] == "same" and len(rows) == 12 + 3
    agency = re.search(r'<tr data-field="agency".*?</tr>', table, re.S).group(0)
    assert "someone-else" in agency and ">i<" in agency  # saved value, then mine
    assert "saved elsewhere" in body and "Your values were not saved" in body
    assert "version 1" in body
    assert 'name="replace_version" value="1"' in body  # the explicit overwrite names what it replaces
    assert 'value="feel-bad" checked' in body  # my values stay on the form


def test_replace_it_with_mine_saves_my_values_over_the_saved_version(client, refused):
    a, url, mine, body = refused
    response = client.post(url, form(mine, base_version_on(body), residue="only mine", replace_version=1))
    assert response.status_code == 302
    saved = Annotation.objects.get(assignment=a)
    assert (saved.version, saved.agency, saved.evaluation, saved.residue, saved.flags) == (
        2,
        "i",
        "feel-bad",
        "only mine",
        ["unrecoverable"],
    )
    revisions = list(AnnotationRevision.objects.filter(annotation=saved).order_by("version"))
    assert [(r.version, r.slots["agency"]) for r in revisions] == [(1, "someone-else"), (2, "i")]


def test_replace_is_refused_when_the_item_was_saved_again_meanwhile(client, refused):
    a, url, mine, _ = refused
    assert client.post(url, form(PRED, 1, notes="tab one again")).status_code == 302  # tab 1 saves v2
    response = client.post(url, form(mine, 0, replace_version=1))
    assert response.status_code == 409
    assert 'name="replace_version" value="2"' in response.content.decode()
    saved = Annotation.objects.get(assignment=a)
    assert (saved.version, saved.notes) == (2, "tab one again")


def test_discard_mine_is_a_get_link_to_the_saved_version(client, refused):
    a, url, _, body = refused
    link = re.search(
        r'<a [^>]*id="discard-mine"[^>]*href="([^"]+)"|<a [^>]*href="([^"]+)"[^>]*id="discard-mine"', body
    )
    assert link is not None and url in link.groups()
    page = client.get(url).content.decode()
    assert base_version_on(page) == 1 and 'value="someone-else" checked' in page and "tab one" in page
    assert Annotation.objects.get(assignment=a).version == 1


@pytest.mark.parametrize("bad", ["two", "-1", "0"])
def test_a_bad_replace_version_is_a_400_naming_it(client, refused, bad):
    a, url, mine, _ = refused
    response = client.post(url, form(mine, 0, replace_version=bad))
    assert response.status_code == 400
    assert "replace_version" in response.content.decode()
    assert Annotation.objects.get(assignment=a).version == 1
