"""The discussion's tests: helpers over the shared personas (tests/conftest.py). In ``blind_round``
and ``prefilled_round`` alice and bob both have every item; carol and dave adjudicate, dana is an
admin, eve has no role."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from annotator.models import Assignment, Item, Round
from annotator.roles import ANNOTATOR
from annotator.services import annotation_submit
from tests.factories import PRED


def first_item(round_: Round) -> Item:
    return round_.item_set.items.order_by("pk").first()


def assignment_of(user: User, round_: Round, item: Item) -> Assignment:
    return Assignment.objects.get(round=round_, item=item, annotator=user)


def submit(user: User, round_: Round, item: Item) -> None:
    annotation_submit(
        assignment=assignment_of(user, round_, item), user=user, values=dict(PRED), base_version=0
    )


def thread_url(item: Item, round_: Round) -> str:
    return f"/discussion/items/{item.pk}/rounds/{round_.pk}/"


def post_url(item: Item, round_: Round) -> str:
    return f"{thread_url(item, round_)}comments/"


@pytest.fixture
def stranger(db) -> User:
    """An annotator who has no item of the rounds."""
    user = User.objects.create_user(username="frank", password="frank-pw")
    user.groups.add(Group.objects.get_or_create(name=ANNOTATOR)[0])
    return user
