import pytest
from django.urls import reverse

from annotator.models import Annotation, Assignment
from tests.factories import PRED

pytestmark = pytest.mark.django_db


def mine(round_, user):
    return Assignment.objects.filter(round=round_, annotator=user).order_by("position").first()


def submit(client, pk, body):
    return client.post(reverse("api_annotation_submit", args=[pk]), body, content_type="application/json")


def test_submit_through_the_api_then_stale_then_history(client, prefilled_round, annotator):
    client.force_login(annotator)
    a = mine(prefilled_round, annotator)
    response = submit(client, a.pk, PRED | {"base_version": 0, "flags": ["unrecoverable"]})
    assert response.status_code == 200
    assert response.json()["version"] == 1 and response.json()["flags"] == ["unrecoverable"]
    stale = submit(client, a.pk, PRED | {"base_version": 0})
    assert stale.status_code == 409
    assert stale.json()["current_version"] == 1 and "Your values were not saved" in stale.json()["detail"]
    history = client.get(reverse("api_annotation_history", args=[a.pk])).json()
    assert [r["version"] for r in history] == [1]


def test_api_errors_name_the_slot_and_allowed_values(client, prefilled_round, annotator):
    client.force_login(annotator)
    a = mine(prefilled_round, annotator)
    body = {k: v for k, v in PRED.items() if k != "body"} | {"want": "wish", "base_version": 0, "mood": "x"}
    response = submit(client, a.pk, body)
    assert response.status_code == 400 and response.json() == {"mood": {"message": "unknown field"}}
    del body["mood"]
    errors = submit(client, a.pk, body).json()
    assert errors["want"]["allowed"] == ["want", "not-want", "none"]
    assert "missing" in errors["body"]["message"]
    assert submit(client, a.pk, PRED).json() == {"base_version": {"message": "required; 0 for a first save"}}
    assert submit(client, a.pk, ["not", "an", "object"]).status_code == 400
    assert not Annotation.objects.exists()


def test_items_api_is_for_adjudicators_and_admins(
    client, items, adjudicator, admin_user, annotator, outsider
):
    for user, code in ((adjudicator, 200), (admin_user, 200), (annotator, 403), (outsider, 403)):
        client.force_login(user)
        assert client.get(reverse("api_items")).status_code == code
    client.force_login(adjudicator)
    data = client.get(reverse("api_items")).json()
    assert data["count"] == len(items) and data["results"][0]["reference_label"] == "pride"
    client.logout()
    assert client.get(reverse("api_items")).status_code == 401  # no credentials: a Token challenge


def test_openapi_schema_is_generated_and_the_docs_page_serves(client, annotator):
    client.force_login(annotator)
    schema = client.get(reverse("api_schema"), HTTP_ACCEPT="application/json").json()
    assert "/api/assignments/{id}/annotation/" in schema["paths"]
    want = schema["components"]["schemas"]["AnnotationIn"]["properties"]["want"]
    ref = want.get("$ref") or want["allOf"][0]["$ref"]  # enums are factored out into components
    want = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert want["enum"] == ["want", "not-want", "none"]
    docs = client.get(reverse("api_docs"))
    assert docs.status_code == 200 and b"swagger" in docs.content.lower()


@pytest.mark.parametrize("value", ["22100782224436928512", "-1", "0.5"])
def test_an_item_set_filter_no_id_can_be_is_a_400_naming_it(client, adjudicator, items, value):
    """Found by the schema fuzzer: an id beyond any database integer reached SQLite (500)."""
    client.force_login(adjudicator)
    response = client.get(reverse("api_items"), {"item_set": value})
    assert response.status_code == 400 and list(response.json()) == ["item_set"]
