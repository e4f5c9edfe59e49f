"""Named personas, set up once per test that asks for them (healthchecks' BaseTestCase style)."""

import pytest
from django.contrib.auth.models import Group, User

from annotator.roles import ADJUDICATOR, ADMIN, ANNOTATOR


def _user(username: str, *roles: str, **extra) -> User:
    user = User.objects.create_user(username=username, password=f"{username}-pw", **extra)
    for role in roles:
        user.groups.add(Group.objects.get_or_create(name=role)[0])  # flushed by transactional tests
    return user


@pytest.fixture
def annotator(db) -> User:
    return _user("alice", ANNOTATOR)


@pytest.fixture
def other_annotator(db) -> User:
    return _user("bob", ANNOTATOR)


@pytest.fixture
def adjudicator(db) -> User:
    return _user("carol", ADJUDICATOR)


@pytest.fixture
def admin_user(db) -> User:
    return _user("dana", ADMIN, is_staff=True)


@pytest.fixture
def outsider(db) -> User:
    return _user("eve")
