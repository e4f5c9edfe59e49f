import pytest
from django.urls import reverse

from adjudication.agreement.analysis import round_signature
from annotator.models import Annotation, AnnotationDraft, AnnotationRevision, Assignment, Round
from annotator.services import AnnotationInvalid, StaleSave, annotation_submit
from tests.factories import PRED

pytestmark = pytest.mark.django_db


def round_version_of(round_: Round) -> str:
    """What the gold and agreement pages key on: it moves with every saved revision."""
    return round_signature(round_.pk)


def first(round_, user) -> Assignment:
    return Assignment.objects.filter(round=round_, annotator=user).order_by("position").first()


def form(values: dict, base_version: int = 0, **extra) -> dict:
    return {
        **values,
        "residue": "",
        "notes": "",
        "base_version": base_version,
        "time_spent_ms": 1200,
        **extra,
    }


def test_submit_saves_slots_a_revision_and_which_slots_kept_the_prefill(prefilled_round, annotator):
    a = first(prefilled_round, annotator)
    values = PRED | {"agency": "someone-else", "flags": ["two-construals"]}
    annotation = annotation_submit(
        assignment=a, user=annotator, values=values, base_version=0, time_spent_ms=900
    )
    assert annotation.version == 1 and annotation.agency == "someone-else"
    assert annotation.prefill == PRED
    assert "agency" not in annotation.kept_prefill and len(annotation.kept_prefill) == 11
    assert annotation.flags == ["two-construals"]
    a.refresh_from_db()
    assert a.status == "done"
    annotation_submit(assignment=a, user=annotator, values=PRED, base_version=1)
    revisions = list(AnnotationRevision.objects.filter(annotation=annotation).order_by("version"))
    assert [r.version for r in revisions] == [1, 2]
    assert revisions[0].slots["agency"] == "someone-else" and revisions[1].slots["agency"] == "i"


def test_invalid_values_name_the_slot_and_the_allowed_values(prefilled_round, annotator):
    a = first(prefilled_round, annotator)
    with pytest.raises(AnnotationInvalid) as caught:
        annotation_submit(
            assignment=a, user=annotator, values=PRED | {"want": "wish", "flags": ["odd"]}, base_version=0
        )
    assert caught.value.errors["want"]["allowed"] == ["want", "not-want", "none"]
    assert "odd" in caught.value.errors["flags"]["message"]
    assert not Annotation.objects.exists()


def test_a_stale_save_is_refused_and_changes_nothing(prefilled_round, annotator):
    a = first(prefilled_round, annotator)
    annotation_submit(assignment=a, user=annotator, values=PRED, base_version=0)
    annotation_submit(assignment=a, user=annotator, values=PRED | {"intensity": "very"}, base_version=1)
    with pytest.raises(StaleSave, match="saved elsewhere \\(now version 2"):
        annotation_submit(assignment=a, user=annotator, values=PRED | {"body": "yes"}, base_version=1)
    with pytest.raises(StaleSave):
        annotation_submit(assignment=a, user=annotator, values=PRED, base_version=0)
    annotation = Annotation.objects.get()
    assert (annotation.version, annotation.intensity, annotation.body) == (2, "very", "no")


def test_two_tabs_on_one_item_the_second_save_is_refused_with_a_clear_message(
    client, prefilled_round, annotator
):
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    url = reverse("annotate", args=[a.pk])
    assert 'name="base_version" value="0"' in client.get(url).content.decode()  # tab 1 and tab 2 load v0
    assert client.post(url, form(PRED)).status_code == 302  # tab 1 saves
    response = client.post(url, form(PRED | {"evaluation": "feel-bad"}))  # tab 2, still at v0
    assert response.status_code == 409
    body = response.content.decode()
    assert "saved elsewhere" in body and "Your values were not saved" in body
    assert 'value="feel-bad" checked' in body  # what tab 2 chose is still on the page, not lost
    assert Annotation.objects.get().evaluation == "feel-good"


def test_submit_and_next_lands_on_the_next_item_then_the_queue(client, prefilled_round, annotator):
    client.force_login(annotator)
    mine = list(Assignment.objects.filter(round=prefilled_round, annotator=annotator).order_by("position"))
    response = client.post(reverse("annotate", args=[mine[0].pk]), form(PRED))
    assert response["Location"] == reverse("annotate", args=[mine[1].pk])
    for a in mine[1:]:
        response = client.post(reverse("annotate", args=[a.pk]), form(PRED))
    assert response["Location"] == reverse("queue")
    queue = client.get(reverse("queue")).content.decode()
    assert f"{len(mine)} / {len(mine)}" in queue and "complete" in queue


def test_resume_goes_to_the_first_pending_item_and_skip_moves_on(client, prefilled_round, annotator):
    client.force_login(annotator)
    mine = list(Assignment.objects.filter(round=prefilled_round, annotator=annotator).order_by("position"))
    client.post(reverse("annotate", args=[mine[0].pk]), form(PRED))
    response = client.get(reverse("round_next", args=[prefilled_round.pk]))
    assert response["Location"] == reverse("annotate", args=[mine[1].pk])
    response = client.post(reverse("skip", args=[mine[1].pk]))
    assert response["Location"] == f"{reverse('annotate', args=[mine[2].pk])}?skipped={mine[1].pk}"
    assert Assignment.objects.get(pk=mine[1].pk).status == "skipped"
    # the next page offers the skip back (issue 25), and takes it back
    page = client.get(response["Location"]).content.decode()
    assert 'id="skip-undo"' in page and reverse("unskip", args=[mine[1].pk]) in page
    assert (
        'id="skip-undo"'
        not in client.get(reverse("annotate", args=[mine[2].pk]), {"skipped": "x"}).content.decode()
    )
    back = client.post(reverse("unskip", args=[mine[1].pk]))
    assert back["Location"] == reverse("annotate", args=[mine[1].pk])
    assert Assignment.objects.get(pk=mine[1].pk).status == "pending"
    assert 'id="skip-undo"' not in client.get(response["Location"]).content.decode()  # no longer skipped
    # a round that does not exist, or has no item of this annotator's, is a 404 as on its items
    # page, not "nothing left to annotate" (found by a browser walkthrough)
    assert client.get(reverse("round_next", args=[999_999])).status_code == 404
    other = Round.objects.create(name="not-mine", item_set=prefilled_round.item_set)
    assert client.get(reverse("round_next", args=[other.pk])).status_code == 404


def test_prefilled_page_starts_at_the_parser_values_and_marks_them(client, prefilled_round, annotator):
    client.force_login(annotator)
    body = client.get(reverse("annotate", args=[first(prefilled_round, annotator).pk])).content.decode()
    assert 'data-prefill="someone-did-something"' in body
    assert 'value="feel-good" checked' in body
    assert "prefilled" in body


def test_blind_round_page_and_api_carry_nothing_of_the_parser(client, blind_round, annotator):
    client.force_login(annotator)
    a = first(blind_round, annotator)
    body = client.get(reverse("annotate", args=[a.pk])).content.decode()
    assert (
        'data-prefill="' not in body
        and "prefill-state" not in body
        and 'someone-did-something" checked' not in body
    )
    assert 'value="feel-good" checked' not in body  # the parser said feel-good; defaults show instead
    assert 'value="neither" checked' in body
    api = client.get(reverse("api_assignment", args=[a.pk])).json()
    assert api["prefill"] is None
    listing = client.get(reverse("api_assignments"), {"round": "blind"}).json()
    assert all(row["prefill"] is None for row in listing["results"])
    annotation_submit(assignment=a, user=annotator, values=PRED, base_version=0)
    assert Annotation.objects.get().prefill is None and Annotation.objects.get().kept_prefill == []


def test_the_routed_label_is_hidden_unless_the_round_shows_it(client, blind_round, annotator):
    client.force_login(annotator)
    url = reverse("preview", args=[first(blind_round, annotator).pk])
    body = client.post(url, PRED).content.decode()
    assert "I did something" in body and "data-label" not in body
    blind_round.show_routed_label = True
    blind_round.save()
    assert 'data-label="pride"' in client.post(url, PRED).content.decode()


def test_the_reference_label_never_reaches_an_annotator(client, prefilled_round, annotator):
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    a.item.reference_label = "surprise"  # a label that no other text on the page contains
    a.item.save()
    for url in (reverse("annotate", args=[a.pk]), reverse("api_assignment", args=[a.pk]), reverse("queue")):
        assert "surprise" not in client.get(url).content.decode()
    assert client.get(reverse("api_items")).status_code == 403


def test_annotator_b_cannot_read_or_write_a_s_annotation_by_page_or_api(
    client, prefilled_round, annotator, other_annotator
):
    a = first(prefilled_round, annotator)
    annotation_submit(assignment=a, user=annotator, values=PRED, base_version=0)
    client.force_login(other_annotator)
    for name in ("annotate", "history", "api_assignment", "api_annotation_history"):
        assert client.get(reverse(name, args=[a.pk])).status_code == 404, name
    assert client.post(reverse("annotate", args=[a.pk]), form(PRED, 1)).status_code == 404
    assert client.post(reverse("preview", args=[a.pk]), PRED).status_code == 404
    assert client.post(reverse("skip", args=[a.pk])).status_code == 404
    response = client.post(
        reverse("api_annotation_submit", args=[a.pk]),
        PRED | {"base_version": 1},
        content_type="application/json",
    )
    assert response.status_code == 404
    ids = [row["id"] for row in client.get(reverse("api_assignments")).json()["results"]]
    assert a.pk not in ids
    assert Annotation.objects.get().version == 1


def test_history_page_lists_revisions(client, prefilled_round, annotator):
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    annotation_submit(assignment=a, user=annotator, values=PRED, base_version=0, time_spent_ms=4000)
    annotation_submit(assignment=a, user=annotator, values=PRED | {"body": "yes"}, base_version=1)
    body = client.get(reverse("history", args=[a.pk])).content.decode()
    assert body.count("<tr><td>") == 2 and "body</code>=yes" in body


@pytest.mark.parametrize(
    "extra, field, message",
    [
        ({"flags": ["two-construals", "odd"]}, "flags", "Select a valid choice. odd is not one of the"),
        ({"base_version": "first"}, "base_version", "Enter a whole number."),
        ({"time_spent_ms": "-5"}, "time_spent_ms", "greater than or equal to 0"),
        ({"agency": "x" * 65}, "agency", "at most 64 characters"),
    ],
)
def test_a_bad_workspace_post_is_a_400_naming_the_field_and_writes_nothing(
    client, prefilled_round, annotator, extra, field, message
):
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    response = client.post(reverse("annotate", args=[a.pk]), form(PRED, **extra))
    page = response.content.decode()
    assert response.status_code == 400
    assert f"<li><code>{field}</code>: " in page and message in page
    a.refresh_from_db()
    assert (
        a.status == "pending" and not Annotation.objects.exists() and not AnnotationRevision.objects.exists()
    )
    # the live preview reads the same form: a bad flag is named there too
    preview = client.post(reverse("preview", args=[a.pk]), form(PRED, flags=["odd"]))
    assert preview.status_code == 400 and preview.content.decode().startswith("flags: ")


def test_a_submit_that_changes_nothing_writes_no_revision_and_the_page_says_so(
    client, prefilled_round, annotator, other_annotator
):
    """Enter on a done item, unchanged, wrote an identical revision (and marked its gold record for
    review through the round's new version). Issue 25."""
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    url = reverse("annotate", args=[a.pk])
    assert client.post(url, form(PRED | {"intensity": "very"})).status_code == 302
    round_version = round_version_of(prefilled_round)
    page = client.get(url).content.decode()
    assert 'id="saved-version"' in page and "saved v1" in page  # a revisited done item says when

    response = client.post(url, form(PRED | {"intensity": "very"}, base_version=1), follow=True)
    annotation = Annotation.objects.get(assignment=a)
    assert annotation.version == 1 and AnnotationRevision.objects.filter(annotation=annotation).count() == 1
    assert round_version_of(prefilled_round) == round_version  # nothing for gold to review
    assert "No change: version 1 is kept" in response.content.decode()

    # the service and the API alike
    same = annotation_submit(
        assignment=a, user=annotator, values=PRED | {"intensity": "very"}, base_version=1
    )
    assert (same.version, same.changed) == (1, False)
    changed = annotation_submit(assignment=a, user=annotator, values=PRED, base_version=1)
    assert (changed.version, changed.changed) == (2, True)


def test_a_draft_is_kept_restored_with_a_notice_and_gone_once_saved_or_discarded(
    client, prefilled_round, annotator, other_annotator
):
    """Unsaved edits vanished when following a link (issue 25): the page keeps a draft on the server."""
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    url = reverse("annotate", args=[a.pk])
    draft_url = reverse("annotation_draft", args=[a.pk])
    assert client.post(draft_url, form(PRED | {"intensity": "very"}, notes="half done")).status_code == 204
    page = client.get(url).content.decode()
    assert 'id="draft-restored"' in page and "not saved" in page
    assert 'value="very" checked' in page and "half done" in page
    assert not Annotation.objects.exists()  # a draft is no save

    # a bad value is named and kept out; another annotator's item does not exist for this one
    assert client.post(draft_url, form(PRED, base_version="x")).status_code == 400
    client.force_login(other_annotator)
    assert client.post(draft_url, form(PRED)).status_code == 404
    client.force_login(annotator)

    assert client.post(url, form(PRED | {"intensity": "very"})).status_code == 302  # the save
    assert 'id="draft-restored"' not in client.get(url).content.decode()  # made on v0, saved as v1

    client.post(draft_url, form(PRED | {"body": "yes"}, base_version=1))
    discarded = client.post(reverse("annotation_draft_discard", args=[a.pk]), follow=True).content.decode()
    assert "Draft discarded." in discarded and 'id="draft-restored"' not in discarded
    assert not AnnotationDraft.objects.exists()


def test_a_draft_older_than_a_later_save_is_not_offered(client, prefilled_round, annotator):
    client.force_login(annotator)
    a = first(prefilled_round, annotator)
    annotation_submit(assignment=a, user=annotator, values=PRED, base_version=0)  # saved elsewhere: v1
    AnnotationDraft.objects.create(assignment=a, values={**PRED, "body": "yes"}, base_version=0)  # made on v0
    page = client.get(reverse("annotate", args=[a.pk])).content.decode()
    body = page[page.index('data-slot="body"') :].split("</fieldset>")[0]
    assert (
        'id="draft-restored"' not in page
        and 'value="no" checked' in body
        and 'value="yes" checked' not in body
    )
