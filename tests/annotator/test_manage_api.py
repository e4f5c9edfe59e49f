"""The admin API: one-request imports to annotatable rounds, item sets, rounds with progress and
pool changes; who may use it (401 without credentials, 403 for non-admins) and that a refused
request writes nothing."""

import io
import json

import pytest
from django.contrib.auth.models import Group, User
from django.urls import reverse

from annotator.models import Assignment, Item, ItemSet, ParserPrediction, Round
from annotator.roles import ANNOTATOR
from annotator.sampling import item_set_from_items
from annotator.tokens import token_create
from tests.factories import PRED, TEXTS

pytestmark = pytest.mark.django_db


def _jsonl(n: int = 4, *, bad_line: int | None = None) -> bytes:
    lines = []
    for i in range(n):
        sid, emotion, text, masked = TEXTS[i % len(TEXTS)]
        row = {"text_id": f"{sid}-{i}", "emotion": emotion, "text": text, "masked_text": masked}
        if bad_line == i + 1:
            row["emotion"] = "wistfulness"
        lines.append(json.dumps(row))
    return "\n".join(lines).encode()


def _file(data: bytes, name: str = "batch.jsonl") -> io.BytesIO:
    f = io.BytesIO(data)
    f.name = name
    return f


def _import(client, data: bytes = b"", name: str = "batch.jsonl", **fields):
    body = {"file": _file(data or _jsonl(), name), **fields}
    return client.post(reverse("api_imports"), body)  # multipart, as a script sends it


def _nothing_written() -> bool:
    return not (Item.objects.exists() or ItemSet.objects.exists() or Round.objects.exists())


def test_without_credentials_401_and_for_non_admins_403_and_nothing_written(
    client, annotator, adjudicator, prefilled_round
):
    item_set = prefilled_round.item_set
    calls = [
        ("get", reverse("api_item_sets"), {}),
        ("post", reverse("api_item_sets"), {"name": "x", "item_ids": [1]}),
        ("get", reverse("api_item_set", args=[item_set.pk]), {}),
        ("get", reverse("api_rounds"), {}),
        ("post", reverse("api_rounds"), {"name": "x", "item_set": item_set.pk, "annotators": ["alice"]}),
        ("get", reverse("api_round", args=[prefilled_round.pk]), {}),
        ("post", reverse("api_round_pool_add", args=[prefilled_round.pk]), {"annotator": "alice"}),
        ("delete", reverse("api_round_pool_remove", args=[prefilled_round.pk, "alice"]), {}),
    ]
    for method, url, body in calls:
        answer = getattr(client, method)(url, body, content_type="application/json")
        assert answer.status_code == 401, url
        assert answer["WWW-Authenticate"] == "Token"
    assert _import(client, item_set="s").status_code == 401
    for user in (annotator, adjudicator):
        client.force_login(user)
        for method, url, body in calls:
            assert getattr(client, method)(url, body, content_type="application/json").status_code == 403, url
        assert _import(client, item_set="s").status_code == 403
    assert Round.objects.count() == 1 and ItemSet.objects.count() == 1 and Item.objects.count() == 4
    assert prefilled_round.pool.count() == 2


def test_one_request_imports_makes_an_item_set_and_a_round_with_balanced_assignments(
    client, admin_user, annotator, other_annotator
):
    client.force_login(admin_user)
    answer = _import(
        client,
        _jsonl(10),
        item_set="batch-1",
        round="r-batch-1",
        annotators=["alice", str(other_annotator.pk)],  # by name or id
        mode="blind",
        text_field="text",
    )
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert (body["rows"], body["created"], body["unchanged"], body["source"]) == (10, 10, 0, "batch")
    item_set = ItemSet.objects.get(name="batch-1")
    assert body["item_set"]["id"] == item_set.pk and body["item_set"]["url"].endswith(
        f"/api/item-sets/{item_set.pk}/"
    )
    # the set holds the file's rows in file order
    in_set = list(item_set.members.order_by("position").values_list("item__source_id", flat=True))
    assert in_set == [f"{TEXTS[i % 4][0]}-{i}" for i in range(10)] and item_set.size == 10
    assert item_set.created_by == admin_user
    round_ = Round.objects.get(name="r-batch-1")
    assert body["round"]["id"] == round_.pk and body["assignments"] == 20
    assert (round_.item_set, round_.mode, round_.text_field) == (item_set, "blind", "text")
    assert set(round_.pool.all()) == {annotator, other_annotator}
    per_annotator = {
        u: Assignment.objects.filter(round=round_, annotator=u).count() for u in (annotator, other_annotator)
    }
    assert per_annotator == {annotator: 10, other_annotator: 10}
    # annotatable: the annotator sees the work through the API at once
    client.force_login(annotator)
    assert client.get(reverse("api_assignments"), {"round": "r-batch-1"}).json()["count"] == 10


def test_an_import_alone_or_with_only_an_item_set_and_re_importing_into_a_new_set(client, admin_user):
    client.force_login(admin_user)
    csv = b"id,label,text\na1,joy,I was glad.\na2,anger,I was cross.\n"
    answer = _import(client, csv, name="few.csv", source="few")
    assert answer.status_code == 201
    assert answer.json()["item_set"] is None and answer.json()["round"] is None
    assert Item.objects.filter(source="few").count() == 2 and not ItemSet.objects.exists()
    again = _import(client, csv, name="few.csv", source="few", item_set="few-set")
    assert again.status_code == 201 and (again.json()["created"], again.json()["unchanged"]) == (0, 2)
    assert ItemSet.objects.get(name="few-set").members.count() == 2 and Item.objects.count() == 2


def test_a_round_without_an_item_set_name_gets_a_set_named_after_it(
    client, admin_user, annotator, other_annotator
):
    client.force_login(admin_user)
    answer = _import(client, round="pilot", annotators="alice,bob")  # comma-separated works too
    assert answer.status_code == 201, answer.content
    assert Round.objects.get(name="pilot").item_set.name == "pilot"
    assert Assignment.objects.filter(round__name="pilot").count() == 8


def test_a_bad_file_is_a_400_naming_its_lines_and_nothing_is_written(
    client, admin_user, annotator, other_annotator
):
    client.force_login(admin_user)
    answer = _import(client, _jsonl(6, bad_line=4), item_set="s", round="r", annotators=["alice", "bob"])
    assert answer.status_code == 400
    body = answer.json()
    assert body["problems"][0]["line"] == 4 and body["problems"][0]["column"] == "emotion"
    assert body["file"][0].startswith("line 4, column emotion: 'wistfulness' is not an emotion")
    assert _nothing_written()
    unknown = _import(client, name="notes.txt", item_set="s")
    assert unknown.status_code == 400 and "cannot tell the format" in unknown.json()["format"][0]
    assert _nothing_written()


@pytest.mark.parametrize(
    "fields, field, message",
    [
        ({"annotators": ["alice", "mallory"]}, "annotators", "'mallory'"),
        ({"annotators": ["alice"]}, "annotators", "2 annotators per item but the pool has 1"),
        ({"annotators": ["alice", "alice"]}, "annotators", "named twice"),
        (
            {"annotators": ["alice", "bob"], "mode": "prefilled"},
            "prefill_parser",
            "needs the name of the parser",
        ),
        (
            {"annotators": ["alice", "bob"], "mode": "prefilled", "prefill_parser": "lex"},
            "prefill_parser",
            "no legal",
        ),
        ({"annotators": ["alice", "bob"], "annotators_per_item": 0}, "annotators_per_item", ""),
        ({"annotators": ["alice", "bob"], "mode": "sideways"}, "mode", ""),
    ],
)
def test_a_bad_round_is_a_400_naming_the_field_and_the_items_are_not_imported_either(
    client, admin_user, annotator, other_annotator, fields, field, message
):
    client.force_login(admin_user)
    answer = _import(client, item_set="s", round="r", **fields)
    assert answer.status_code == 400, answer.content
    assert message in " ".join(answer.json()[field])
    assert _nothing_written()


def test_annotators_without_a_round_are_refused(client, admin_user, annotator):
    client.force_login(admin_user)
    answer = _import(client, item_set="s", annotators=["alice"])
    assert answer.status_code == 400 and "annotators" in answer.json()
    assert _nothing_written()


def test_taken_names_are_a_409_and_nothing_is_written(
    client, admin_user, prefilled_round, annotator, other_annotator
):
    client.force_login(admin_user)
    before = Item.objects.count()
    answer = _import(client, _jsonl(3), item_set="set-p")
    assert answer.status_code == 409 and "already exists" in answer.json()["item_set"][0]
    assert answer.json()["detail"] == answer.json()["item_set"][0]  # every error body has a detail
    answer = _import(client, _jsonl(3), item_set="new", round="prefilled", annotators=["alice", "bob"])
    assert answer.status_code == 409 and "already exists" in answer.json()["round"][0]
    assert Item.objects.count() == before and ItemSet.objects.count() == 1 and Round.objects.count() == 1


def test_a_blind_round_over_items_seen_prefilled_is_a_409_unless_allowed(client, admin_user, prefilled_round):
    client.force_login(admin_user)
    body = {"name": "control", "item_set": prefilled_round.item_set.pk, "annotators": ["alice", "bob"]}
    answer = client.post(reverse("api_rounds"), body, content_type="application/json")
    assert answer.status_code == 409 and answer.json()["overlap"] == {"alice": 4, "bob": 4}
    assert not Round.objects.filter(name="control").exists()
    answer = client.post(
        reverse("api_rounds"), {**body, "allow_prefill_overlap": True}, content_type="application/json"
    )
    assert answer.status_code == 201
    assert Assignment.objects.filter(round__name="control").count() == 8


def test_item_sets_from_ids_keep_their_order_and_draws_work_as_on_the_page(client, admin_user, items):
    client.force_login(admin_user)
    ids = [items[2].pk, items[0].pk, items[3].pk]
    answer = client.post(
        reverse("api_item_sets"), {"name": "pick", "item_ids": ids}, content_type="application/json"
    )
    assert answer.status_code == 201 and answer.json()["item_ids"] == ids
    assert list(ItemSet.objects.get(name="pick").members.values_list("item_id", flat=True)) == ids
    drawn = client.post(
        reverse("api_item_sets"),
        {"name": "strat", "seed": 7, "per_stratum": 2, "disjoint_from": answer.json()["id"]},
        content_type="application/json",
    )
    assert drawn.status_code == 400 and "not enough items" in drawn.json()["detail"]  # one item is left
    drawn = client.post(
        reverse("api_item_sets"), {"name": "two", "seed": 7, "size": 2}, content_type="application/json"
    )
    assert drawn.status_code == 201 and len(drawn.json()["item_ids"]) == 2
    assert ItemSet.objects.get(name="two").seed == 7 and ItemSet.objects.get(name="two").members.count() == 2
    listed = client.get(reverse("api_item_sets")).json()
    assert [s["name"] for s in listed["results"]] == ["two", "pick"]
    detail = client.get(reverse("api_item_set", args=[answer.json()["id"]])).json()
    assert detail["item_ids"] == ids and detail["size"] == 3
    assert client.get(reverse("api_item_set", args=[999999])).status_code == 404


@pytest.mark.parametrize(
    "body, status, field",
    [
        ({"name": "pick", "item_ids": [1]}, 409, "name"),
        ({"name": "n", "item_ids": [999999]}, 400, "item_ids"),
        ({"name": "n", "item_ids": ["ITEM", "ITEM"]}, 400, "item_ids"),
        ({"name": "n", "seed": 1, "per_stratum": 50}, 400, "per_stratum"),
        ({"name": "n", "seed": 1, "size": 50}, 400, "size"),
        ({"name": "n", "item_ids": []}, 400, "item_ids"),
        ({"name": "n", "item_ids": ["ITEM"], "seed": 1}, 400, "item_ids"),
        ({"name": "n", "seed": 1}, 400, "size"),
        ({"name": "n", "seed": 1, "size": 1, "per_stratum": 1}, 400, "size"),
        ({"name": "n", "size": 1}, 400, "seed"),
        ({"name": "n", "seed": 2**64, "size": 1}, 400, "seed"),
        ({"name": "", "item_ids": ["ITEM"]}, 400, "name"),
    ],
)
def test_bad_item_sets_are_refused_naming_the_field_and_write_nothing(
    client, admin_user, items, body, status, field
):
    item_set_from_items(name="pick", items=items[:1])
    body = (
        {**body, "item_ids": [items[0].pk if i == "ITEM" else i for i in body.get("item_ids", [])]}
        if "item_ids" in body
        else body
    )
    client.force_login(admin_user)
    answer = client.post(reverse("api_item_sets"), body, content_type="application/json")
    assert answer.status_code == status, answer.content
    assert field in answer.json()
    assert ItemSet.objects.count() == 1


def test_a_round_by_api_then_its_progress_per_annotator_and_overall(
    client, admin_user, items, annotator, other_annotator
):
    item_set = item_set_from_items(name="four", items=items)
    client.force_login(admin_user)
    body = {"name": "r1", "item_set": item_set.pk, "annotators": ["alice", "bob"], "annotators_per_item": 1}
    answer = client.post(reverse("api_rounds"), body, content_type="application/json")
    assert answer.status_code == 201, answer.content
    round_ = Round.objects.get(name="r1")
    assert answer.json()["progress"] == {"assigned": 4, "done": 0, "skipped": 0, "pending": 4, "percent": 0}
    first = Assignment.objects.filter(round=round_, annotator=annotator).order_by("position")
    Assignment.objects.filter(pk=first[0].pk).update(status="done")
    Assignment.objects.filter(pk=first[1].pk).update(status="skipped")
    detail = client.get(reverse("api_round", args=[round_.pk])).json()
    assert detail["progress"] == {"assigned": 4, "done": 1, "skipped": 1, "pending": 2, "percent": 50}
    by_name = {a["username"]: a for a in detail["annotators"]}
    assert by_name["alice"]["progress"]["done"] == 1 and by_name["alice"]["progress"]["pending"] == 0
    assert by_name["bob"]["progress"] == {"assigned": 2, "done": 0, "skipped": 0, "pending": 2, "percent": 0}
    assert detail["page"].endswith(reverse("manage_round", args=[round_.pk]))
    listed = client.get(reverse("api_rounds")).json()["results"]
    assert [(r["name"], r["pool_size"], r["progress"]["done"]) for r in listed] == [("r1", 2, 1)]
    assert client.get(reverse("api_round", args=[999999])).status_code == 404
    taken = client.post(reverse("api_rounds"), body, content_type="application/json")
    assert taken.status_code == 409 and "name" in taken.json()
    missing = client.post(
        reverse("api_rounds"), {**body, "name": "r2", "item_set": 999999}, content_type="application/json"
    )
    assert missing.status_code == 400 and "item_set" in missing.json()
    assert Round.objects.count() == 1


def test_pool_add_and_remove_move_pending_work_as_the_page_does(
    client, admin_user, items, annotator, other_annotator
):
    carl = User.objects.create_user("carl", password="carl-pw")
    carl.groups.add(Group.objects.get_or_create(name=ANNOTATOR)[0])
    item_set = item_set_from_items(name="four", items=items)
    client.force_login(admin_user)
    body = {"name": "r1", "item_set": item_set.pk, "annotators": ["alice", "bob"], "annotators_per_item": 1}
    round_id = client.post(reverse("api_rounds"), body, content_type="application/json").json()["id"]
    added = client.post(
        reverse("api_round_pool_add", args=[round_id]), {"annotator": "carl"}, content_type="application/json"
    )
    assert added.status_code == 200, added.content
    assert (
        added.json()["moved"] == 1
        and Assignment.objects.filter(round_id=round_id, annotator=carl).count() == 1
    )
    # who received and who gave, each by name, as the database says
    donor = Assignment.objects.get(round_id=round_id, annotator=carl)
    assert added.json()["received"] == {"carl": 1}
    assert sum(added.json()["given"].values()) == 1 and set(added.json()["given"]) <= {"alice", "bob"}
    assert {a["username"] for a in added.json()["round"]["annotators"] if a["in_pool"]} == {
        "alice",
        "bob",
        "carl",
    }
    again = client.post(
        reverse("api_round_pool_add", args=[round_id]),
        {"annotator": carl.pk},
        content_type="application/json",
    )
    assert again.status_code == 409 and "already in the pool" in again.json()["annotator"][0]
    nobody = client.post(
        reverse("api_round_pool_add", args=[round_id]),
        {"annotator": "mallory"},
        content_type="application/json",
    )
    assert nobody.status_code == 400 and "annotator" in nobody.json()
    removed = client.delete(reverse("api_round_pool_remove", args=[round_id, "carl"]))
    assert removed.status_code == 200 and removed.json()["moved"] == 1
    assert removed.json()["given"] == {"carl": 1} and sum(removed.json()["received"].values()) == 1
    assert set(removed.json()["received"]) <= {"alice", "bob"}
    assert Assignment.objects.get(pk=donor.pk).annotator.username in removed.json()["received"]
    assert not Assignment.objects.filter(round_id=round_id, annotator=carl).exists()
    assert Assignment.objects.filter(round_id=round_id).count() == 4
    assert client.delete(reverse("api_round_pool_remove", args=[round_id, "carl"])).status_code == 409
    assert client.delete(reverse("api_round_pool_remove", args=[round_id, "mallory"])).status_code == 404
    assert client.delete(reverse("api_round_pool_remove", args=[999999, "carl"])).status_code == 404
    by_id = client.delete(reverse("api_round_pool_remove", args=[round_id, str(other_annotator.pk)]))
    assert by_id.status_code == 200 and set(Round.objects.get(pk=round_id).pool.all()) == {annotator}


def test_a_token_reaches_the_admin_api_without_a_session(client, admin_user, annotator, other_annotator):
    key = token_create(user=admin_user).key
    body = {"file": _file(_jsonl(4)), "item_set": "s", "round": "r", "annotators": ["alice", "bob"]}
    answer = client.post(reverse("api_imports"), body, HTTP_AUTHORIZATION=f"Token {key}")
    assert answer.status_code == 201
    assert client.get(reverse("api_rounds"), HTTP_AUTHORIZATION=f"Token {key}").json()["count"] == 1
    assert client.get(reverse("api_rounds"), HTTP_AUTHORIZATION="Token " + "0" * 40).status_code == 401
    annotator_key = token_create(user=annotator).key
    assert client.get(reverse("api_rounds"), HTTP_AUTHORIZATION=f"Token {annotator_key}").status_code == 403


def test_a_prefilled_round_by_import_needs_a_parser_with_predictions_and_then_works(
    client, admin_user, annotator, other_annotator
):
    client.force_login(admin_user)
    _import(client, _jsonl(4), source="batch")
    for item in Item.objects.all():
        ParserPrediction.objects.create(item=item, parser="lex", explication=PRED, legal=True)
    answer = _import(
        client,
        _jsonl(4),
        source="batch",
        round="p",
        annotators=["alice", "bob"],
        mode="prefilled",
        prefill_parser="lex",
    )
    assert answer.status_code == 201, answer.content
    assert Round.objects.get(name="p").prefill_parser == "lex" and answer.json()["created"] == 0


def test_the_schema_lists_the_new_operations_with_their_status_codes(client, admin_user):
    client.force_login(admin_user)
    schema = client.get(reverse("api_schema"), {"format": "json"}).json()
    ops = schema["paths"]
    # at least these (a schema class may document more, such as 415 for every body)
    assert {"201", "400", "401", "403", "409", "415"} <= set(ops["/api/imports/"]["post"]["responses"])
    pool_remove = ops["/api/rounds/{id}/annotators/{user}/"]["delete"]["responses"]
    assert {"200", "401", "403", "404", "409"} <= set(pool_remove)
    assert {"201", "400", "401", "403", "409"} <= set(ops["/api/item-sets/"]["post"]["responses"])
    assert {"200", "401", "403", "404"} <= set(ops["/api/rounds/{id}/"]["get"]["responses"])
    assert {"201", "401"} <= set(ops["/api/token/"]["post"]["responses"])
    assert "multipart/form-data" in ops["/api/imports/"]["post"]["requestBody"]["content"]


def test_a_round_hands_items_out_in_turn_with_gapless_queue_positions(items, annotator, other_annotator):
    """What the loop round_create used to run gives, now that one INSERT ... SELECT does it: the
    i-th item of the set (in its order, not by id) to pool places (i * k + j) % n, each queue
    counting 0, 1, 2, ... without gaps."""
    from annotator.services import round_create

    third = User.objects.create_user("carl")
    pool = [other_annotator, third, annotator]
    ordered = list(reversed(items))
    round_ = round_create(
        name="turns", item_set=item_set_from_items(name="rev", items=ordered), annotators=pool
    )
    expected, positions = set(), [0, 0, 0]
    for i, item in enumerate(ordered):
        for j in range(2):
            place = (i * 2 + j) % 3
            expected.add((item.pk, pool[place].pk, positions[place]))
            positions[place] += 1
    got = set(Assignment.objects.filter(round=round_).values_list("item_id", "annotator_id", "position"))
    assert got == expected and len(got) == 8
    assert set(Assignment.objects.filter(round=round_).values_list("status", flat=True)) == {"pending"}


@pytest.mark.parametrize(
    "text, metadata, column, message",
    [
        ("a\u0000b", None, "text", "contains a NUL character"),
        ("I was \ud800 glad.", None, "text", "contains a lone surrogate ('\\ud800'), not text"),
        ("I was glad.", {"nested": ["x\u0000"]}, "round_number", "contains a NUL character"),
    ],
)
def test_text_no_database_can_hold_is_a_400_naming_line_and_column(
    client, admin_user, text, metadata, column, message
):
    client.force_login(admin_user)
    good = json.dumps({"text_id": "ok", "emotion": "joy", "text": "I was glad."})
    bad = {"text_id": "bad", "emotion": "joy", "text": text}
    if metadata is not None:
        bad["round_number"] = metadata
    answer = _import(client, f"{good}\n{json.dumps(bad)}\n".encode(), item_set="s")
    assert answer.status_code == 400, answer.content
    assert answer.json()["problems"] == [{"line": 2, "column": column, "message": message}]
    assert _nothing_written()


def test_a_small_file_into_a_large_source_finds_its_present_and_conflicting_rows(client, admin_user, items):
    """A source larger than twice the file is asked by id (imports.source_items); a smaller one
    is read whole: both see what is present, unchanged or different."""
    client.force_login(admin_user)
    sid, emotion, text, masked = TEXTS[0]
    same = json.dumps({"text_id": f"{sid}-0", "emotion": emotion, "text": text, "masked_text": masked})
    answer = _import(client, same.encode(), source="test", item_set="one")
    assert answer.status_code == 201 and (answer.json()["created"], answer.json()["unchanged"]) == (0, 1)
    assert list(ItemSet.objects.get(name="one").members.values_list("item_id", flat=True)) == [items[0].pk]
    changed = json.dumps({"text_id": f"{sid}-0", "emotion": emotion, "text": "Another text."})
    answer = _import(client, changed.encode(), source="test", item_set="two")
    assert answer.status_code == 400 and "refusing to overwrite" in answer.json()["file"][0]
    assert Item.objects.count() == 4 and not ItemSet.objects.filter(name="two").exists()
