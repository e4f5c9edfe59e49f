"""Bad input to an annotation submit (issue 17, "Input"): a first save that loses a race or carries
a version that was never saved is a 409 like any stale save; out-of-range or boolean numbers, NUL
bytes, lone surrogates and oversize notes are a 400 naming the field, through the service, the
workspace form and the API alike, and nothing is written."""

import re

import pytest
from django.db import connection
from django.urls import reverse

from annotator.models import Annotation, AnnotationRevision, Assignment
from annotator.services import (
    TEXT_MAX_CHARS,
    TIME_SPENT_MAX_MS,
    AnnotationInvalid,
    StaleSave,
    annotation_submit,
)
from tests.factories import PRED

pytestmark = pytest.mark.django_db


def first(round_, user) -> Assignment:
    return Assignment.objects.filter(round=round_, annotator=user).order_by("position").first()


def nothing_written(assignment: Assignment) -> bool:
    assignment.refresh_from_db()
    return (
        assignment.status == "pending"
        and not Annotation.objects.exists()
        and not AnnotationRevision.objects.exists()
    )


def api(client, pk, body):
    return client.post(reverse("api_annotation_submit", args=[pk]), body, content_type="application/json")


def form(values: dict, base_version=0, **extra) -> dict:
    return {"residue": "", "notes": "", "base_version": base_version, "time_spent_ms": 800, **values, **extra}


@pytest.fixture
def race(prefilled_round, annotator):
    """Another request saves this assignment's first version in the race window: just after the
    loser read the assignment and found no saved annotation with it (the API and the form read
    both in one query), before the loser's insert. The winner's row is there when the loser
    writes, as in a real race; the loser must write nothing beside it."""
    won = []
    loser = first(prefilled_round, annotator).pk

    def winner_saves_after_the_losers_read(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        looked = sql.lstrip().startswith("SELECT") and re.search(r'\bannotator_annotation"?\s', sql)
        if looked and not won:
            won.append(loser)
            Annotation.objects.bulk_create(
                [Annotation(assignment_id=loser, version=1, notes="the winner", **PRED)]
            )
        return result

    with connection.execute_wrapper(winner_saves_after_the_losers_read):
        yield won
    assert won, "the race was never run: the loser did not look for a saved annotation"


def only_the_winner_saved(assignment: Assignment) -> bool:
    """After a lost race: the winner's annotation as it was, and nothing of the loser's (no
    revision, the status untouched)."""
    assignment.refresh_from_db()
    return (
        assignment.status == "pending"
        and list(Annotation.objects.values_list("assignment_id", "version", "notes"))
        == [(assignment.pk, 1, "the winner")]
        and not AnnotationRevision.objects.exists()
    )


# The service ------------------------------------------------------------------------------------


def test_the_loser_of_a_first_save_race_gets_a_stale_save_not_an_integrity_error(
    prefilled_round, annotator, race
):
    a = first(prefilled_round, annotator)
    with pytest.raises(StaleSave) as caught:
        annotation_submit(assignment=a, user=annotator, values=PRED | {"body": "yes"}, base_version=0)
    assert caught.value.current.notes == "the winner" and caught.value.current.version == 1
    assert caught.value.current.body == "no"  # the winner's value, not the loser's "yes"
    assert only_the_winner_saved(a)


def test_a_first_save_claiming_a_version_that_was_never_saved_is_stale(prefilled_round, annotator):
    a = first(prefilled_round, annotator)
    with pytest.raises(StaleSave, match="no saved version") as caught:
        annotation_submit(assignment=a, user=annotator, values=PRED, base_version=3)
    assert caught.value.current is None
    assert nothing_written(a)


@pytest.mark.parametrize(
    "change, field",
    [
        ({"time_spent_ms": 2**31}, "time_spent_ms"),
        ({"time_spent_ms": TIME_SPENT_MAX_MS + 1}, "time_spent_ms"),
        ({"time_spent_ms": -1}, "time_spent_ms"),
        ({"time_spent_ms": True}, "time_spent_ms"),
        ({"time_spent_ms": 1.5}, "time_spent_ms"),
        ({"base_version": -1}, "base_version"),
        ({"base_version": False}, "base_version"),
        ({"base_version": 2**31}, "base_version"),
        ({"values": PRED | {"notes": "a\x00b"}}, "notes"),
        ({"values": PRED | {"residue": "I feel \ud800"}}, "residue"),
        ({"values": PRED | {"notes": "x" * (TEXT_MAX_CHARS + 1)}}, "notes"),
        ({"values": PRED | {"residue": "x" * (TEXT_MAX_CHARS + 1)}}, "residue"),
    ],
)
def test_bad_numbers_and_texts_are_refused_by_the_service_naming_the_field(
    prefilled_round, annotator, change, field
):
    a = first(prefilled_round, annotator)
    kwargs = {"values": PRED, "base_version": 0, "time_spent_ms": 10} | change
    with pytest.raises(AnnotationInvalid) as caught:
        annotation_submit(assignment=a, user=annotator, **kwargs)
    assert list(caught.value.errors) == [field]
    assert nothing_written(a)


def test_the_limits_themselves_are_accepted(prefilled_round, annotator):
    a = first(prefilled_round, annotator)
    text = "é" * TEXT_MAX_CHARS
    saved = annotation_submit(
        assignment=a,
        user=annotator,
        values=PRED | {"notes": text, "residue": text},
        base_version=0,
        time_spent_ms=TIME_SPENT_MAX_MS,
    )
    saved.refresh_from_db()
    assert (saved.notes, saved.residue, saved.time_spent_ms) == (text, text, TIME_SPENT_MAX_MS)


# The workspace form -----------------------------------------------------------------------------


def test_the_workspace_loser_of_a_first_save_race_gets_the_409_page(client, prefilled_round, annotator, race):
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    response = client.post(reverse("annotate", args=[a.pk]), form(PRED | {"body": "yes"}))
    assert response.status_code == 409
    body = response.content.decode()
    assert "saved elsewhere" in body and 'id="stale-compare"' in body
    assert re.search(r'<tr data-field="notes" class="differs">.*?the winner', body, re.S)
    assert only_the_winner_saved(a)


def test_a_workspace_first_save_at_a_version_never_saved_is_a_409(client, prefilled_round, annotator):
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    response = client.post(reverse("annotate", args=[a.pk]), form(PRED, base_version=4))
    assert response.status_code == 409
    assert "no saved version" in response.content.decode()
    assert nothing_written(a)


@pytest.mark.parametrize(
    "extra, field",
    [
        ({"time_spent_ms": str(2**31)}, "time_spent_ms"),
        ({"time_spent_ms": str(TIME_SPENT_MAX_MS + 1)}, "time_spent_ms"),
        ({"time_spent_ms": "true"}, "time_spent_ms"),
        ({"base_version": "-1"}, "base_version"),
        ({"base_version": str(2**31)}, "base_version"),
        ({"notes": "a\x00b"}, "notes"),
        ({"residue": "x" * (TEXT_MAX_CHARS + 1)}, "residue"),
        ({"notes": "x" * (TEXT_MAX_CHARS + 1)}, "notes"),
    ],
)
def test_bad_workspace_posts_are_a_400_naming_the_field(client, prefilled_round, annotator, extra, field):
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    response = client.post(reverse("annotate", args=[a.pk]), form(PRED, **extra))
    assert response.status_code == 400
    assert f"<li><code>{field}</code>: " in response.content.decode()
    assert nothing_written(a)


# The API ----------------------------------------------------------------------------------------


def test_the_api_loser_of_a_first_save_race_gets_a_409(client, prefilled_round, annotator, race):
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    response = api(client, a.pk, PRED | {"base_version": 0})
    assert response.status_code == 409
    assert response.json()["current_version"] == 1
    assert only_the_winner_saved(a)


def test_an_api_first_save_at_a_version_never_saved_is_a_409(client, prefilled_round, annotator):
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    response = api(client, a.pk, PRED | {"base_version": 2})
    assert response.status_code == 409
    assert response.json()["current_version"] == 0 and "no saved version" in response.json()["detail"]
    assert nothing_written(a)


@pytest.mark.parametrize(
    "extra, field",
    [
        ({"time_spent_ms": 2**31}, "time_spent_ms"),
        ({"time_spent_ms": -5}, "time_spent_ms"),
        ({"time_spent_ms": True}, "time_spent_ms"),
        ({"time_spent_ms": "lots"}, "time_spent_ms"),
        ({"time_spent_ms": 12.5}, "time_spent_ms"),
        ({"base_version": True}, "base_version"),
        ({"base_version": -1}, "base_version"),
        ({"base_version": "v1"}, "base_version"),
        ({"base_version": None}, "base_version"),
        ({"notes": "a\x00b"}, "notes"),
        ({"residue": "\udc80"}, "residue"),
        ({"notes": "x" * (TEXT_MAX_CHARS + 1)}, "notes"),
        ({"notes": 5}, "notes"),
        ({"flags": ["\ud800"]}, "flags"),
    ],
)
def test_bad_api_submits_are_a_400_naming_the_field(client, prefilled_round, annotator, extra, field):
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    response = api(client, a.pk, PRED | {"base_version": 0, "time_spent_ms": 100} | extra)
    assert response.status_code == 400
    errors = response.json()
    assert list(errors) == [field] and errors[field]["message"]
    assert nothing_written(a)


def test_an_unknown_api_field_with_a_lone_surrogate_in_its_name_is_a_400(client, prefilled_round, annotator):
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    response = api(client, a.pk, PRED | {"base_version": 0, "mo\ud800od": 1})
    assert response.status_code == 400
    assert list(response.json()) == ["mo\\ud800od"]
    assert nothing_written(a)


def test_form_encoded_api_numbers_are_read_as_whole_numbers(client, prefilled_round, annotator):
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    url = reverse("api_annotation_submit", args=[a.pk])
    bad = client.post(url, PRED | {"base_version": "0", "time_spent_ms": "1e3"})
    assert bad.status_code == 400 and list(bad.json()) == ["time_spent_ms"]
    assert nothing_written(a)
    good = client.post(url, PRED | {"base_version": "0", "time_spent_ms": "1500"})
    assert good.status_code == 200 and good.json()["time_spent_ms"] == 1500


def test_a_lone_surrogate_cannot_reach_the_workspace_form_it_arrives_replaced(
    client, prefilled_round, annotator
):
    # %ED%A0%80 is U+D800 as (invalid) UTF-8 bytes; Django decodes a form body with replacement,
    # so the service never sees a surrogate from a form post: the save works and stores U+FFFD.
    from urllib.parse import urlencode

    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    body = urlencode(form(PRED), doseq=True) + "&notes=x%ED%A0%80"
    response = client.post(
        reverse("annotate", args=[a.pk]), body, content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 302
    notes = Annotation.objects.get(assignment=a).notes
    assert notes.startswith("x\ufffd") and notes.encode("utf-8")


def test_the_form_tells_the_browser_the_same_text_limit(client, annotator, prefilled_round):

    assignment = Assignment.objects.filter(annotator=annotator).first()
    client.force_login(annotator)
    page = client.get(reverse("annotate", args=[assignment.pk])).content.decode()
    assert page.count(f'maxlength="{TEXT_MAX_CHARS}"') == 2  # residue and notes


def test_many_unknown_flags_are_named_a_few_not_echoed_whole(client, prefilled_round, annotator):
    """Found by an API walkthrough: 100,000 unknown flags gave a 400 of half a megabyte."""
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    response = api(client, a.pk, PRED | {"base_version": 0, "flags": [f"f{i}" for i in range(100_000)]})
    assert response.status_code == 400
    message = response.json()["flags"]["message"]
    assert "f0" in message and "and 99,990 more" in message and len(response.content) < 2_000
    assert nothing_written(a)
