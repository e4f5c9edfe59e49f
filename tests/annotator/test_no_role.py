"""No role, no access (annotator.roles): an annotator whose roles are all taken away reads and
saves nothing, in the browser or the API, from the next request on; given a role back, their
work is where they left it."""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from annotator.models import Annotation, Assignment
from annotator.roles import ANNOTATOR, user_roles
from annotator.user_services import user_roles_set
from tests.factories import PRED

pytestmark = pytest.mark.django_db


def mine(round_, user):
    return Assignment.objects.filter(round=round_, annotator=user).order_by("position").first()


def test_an_annotator_whose_roles_are_removed_reads_and_saves_nothing(
    client, prefilled_round, annotator, admin_user
):
    client.force_login(annotator)
    a = mine(prefilled_round, annotator)
    assert client.get(reverse("annotate", args=[a.pk])).status_code == 200  # the roles are now cached
    assert user_roles(annotator) == {ANNOTATOR}

    user_roles_set(user=annotator, roles=[], by=admin_user)

    page = client.get(reverse("annotate", args=[a.pk]))
    assert page.status_code == 403 and "You have no role in this project" in page.content.decode()
    assert client.get(reverse("queue")).status_code == 403
    sent = client.post(reverse("annotate", args=[a.pk]), {**PRED, "base_version": 0})
    assert sent.status_code == 403
    api = client.get(reverse("api_assignments"))
    assert api.status_code == 403 and api.json()["detail"].startswith("you have no role in this project")
    body = PRED | {"base_version": 0}
    saved = client.post(reverse("api_annotation_submit", args=[a.pk]), body, content_type="application/json")
    assert saved.status_code == 403
    assert not Annotation.objects.filter(assignment=a).exists()
    assert client.get(reverse("home")).status_code == 200  # home still opens, and says why

    user_roles_set(user=annotator, roles=[ANNOTATOR], by=admin_user)
    saved = client.post(reverse("api_annotation_submit", args=[a.pk]), body, content_type="application/json")
    assert saved.status_code == 200 and Annotation.objects.filter(assignment=a).count() == 1


def test_a_role_taken_away_in_the_django_admin_way_is_seen_at_once(client, prefilled_round, annotator):
    """Group membership changed from the group's side (the admin's group page), not the user's."""
    client.force_login(annotator)
    assert client.get(reverse("queue")).status_code == 200
    Group.objects.get(name=ANNOTATOR).user_set.clear()
    assert client.get(reverse("queue")).status_code == 403
    Group.objects.get(name=ANNOTATOR).user_set.add(annotator)
    assert client.get(reverse("queue")).status_code == 200


def test_a_token_of_a_user_without_a_role_opens_nothing(client, outsider):
    from annotator.tokens import token_create

    key = token_create(user=outsider).key
    answer = client.get(reverse("api_assignments"), HTTP_AUTHORIZATION=f"Token {key}")
    assert answer.status_code == 403
