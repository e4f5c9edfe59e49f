"""The API's refusals as the client's typed errors, against the live server: a 400 names its fields
(and the client's error says them), 401, 403, 404 and 409 are each their own class, and nothing is
written by a refused request. Lists are walked page by page, lazily."""

from __future__ import annotations

import httpx
import pytest

from annotator.models import Annotation, Item, Round
from nsmclient import ApiError, BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from tests.factories import PRED, make_items

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_bad_body_is_a_bad_request_naming_each_field_and_nothing_is_written(api, admin_user):
    admin = api(admin_user)
    with pytest.raises(BadRequest) as refused:
        admin.rounds_create({"name": "r", "item_set": 999_999, "annotators": ["nobody"]})
    error = refused.value
    assert error.status == 400 and isinstance(error, ApiError)
    assert set(error.errors) == {"item_set", "annotators"}
    assert "item_set" in str(error) and "annotators" in str(error)
    assert error.body == error.errors and error.detail is None
    assert not Round.objects.exists()


def test_a_refused_slot_comes_with_its_message_and_allowed_values(api, prefilled_round, annotator):
    alice = api(annotator)
    assignment = alice.next_assignment(round=prefilled_round.pk)
    with pytest.raises(BadRequest) as refused:
        alice.submit_annotation(assignment, {**PRED, "agency": "the-cat"})
    slot = refused.value.errors["agency"]
    assert "i" in slot["allowed"] and "the-cat" not in slot["allowed"]
    assert f"agency: {slot['message']}" in str(refused.value)
    assert not Annotation.objects.exists()


def test_a_bad_file_names_its_lines_and_imports_nothing(api, admin_user):
    with pytest.raises(BadRequest) as refused:
        api(admin_user).import_items(file=("rows.jsonl", b'{"text_id": "a"}\nnot json\n'), item_set="s")
    problems = refused.value.errors["problems"]
    assert refused.value.errors["file"] and any(p["line"] == 2 for p in problems)  # not json
    assert not Item.objects.exists()


def test_no_token_or_a_wrong_one_is_unauthorized(api, admin_user):
    with pytest.raises(Unauthorized) as missing:
        api().rounds_list()
    assert missing.value.status == 401 and missing.value.response.headers["WWW-Authenticate"] == "Token"
    wrong = api()
    wrong.token = "0" * 40
    with pytest.raises(Unauthorized):
        wrong.rounds_list()


def test_a_role_refused_is_forbidden_with_the_reason(api, annotator, outsider):
    with pytest.raises(Forbidden) as refused:
        api(annotator).rounds_create({"name": "r", "item_set": 1})
    assert refused.value.status == 403 and refused.value.detail
    with pytest.raises(Forbidden):
        api(outsider).assignments_list()  # no role: nothing at all
    assert not Round.objects.exists()


def test_an_unknown_object_and_a_page_past_the_last_are_not_found(api, admin_user, prefilled_round):
    admin = api(admin_user)
    with pytest.raises(NotFound) as unknown:
        admin.rounds_retrieve(999_999)
    assert unknown.value.detail
    with pytest.raises(NotFound):
        admin.rounds_list(page=2)
    assert admin.rounds_retrieve(prefilled_round.pk)["name"] == "prefilled"


def test_a_taken_name_is_a_conflict(api, admin_user, prefilled_round):
    with pytest.raises(Conflict) as taken:
        api(admin_user).rounds_create(
            {"name": "prefilled", "item_set": prefilled_round.item_set_id, "annotators": ["alice"]}
        )
    assert taken.value.status == 409 and "name" in taken.value.errors
    assert Round.objects.count() == 1


class Recording(httpx.HTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        self.pages: list[str | None] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.pages.append(request.url.params.get("page"))
        return super().handle_request(request)


def test_paginate_walks_every_page_lazily_in_the_lists_order(api, admin_user):
    make_items(n_copies=28)  # 112 items: pages of 50, 50 and 12
    transport = Recording()
    admin = api(admin_user, transport=transport)
    rows = admin.paginate(admin.items_list, source="test")
    first = [next(rows) for _ in range(50)]
    assert transport.pages == ["1"]  # the second page is not read before it is needed
    rest = list(rows)
    assert transport.pages == ["1", "2", "3"]
    expected = list(Item.objects.filter(source="test").order_by("id").values_list("pk", flat=True))
    assert sorted(row["id"] for row in first + rest) == expected and len(expected) == 112
    assert list(admin.paginate(admin.items_list, source="nowhere")) == []
