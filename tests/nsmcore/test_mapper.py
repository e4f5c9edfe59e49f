import json
import random

import numpy as np
import pytest

from nsmcore.mapper import (
    ILLEGAL,
    NO_RULE,
    SCHEMA_RESIDUE,
    RuleSetError,
    encode,
    first_rule,
    load_rule_set,
    parse_rule_set,
    route,
    route_batch,
    route_codes,
)
from nsmcore.schema import SLOTS, Explication
from tests.explications import PRIDE

# The SPEC's table, transcribed here independently of the rule set file, so that a typo in
# either one fails these tests.
SPEC_TABLE = [
    ("relief", {"want": {"not-want"}, "realization": {"not-happened"}, "evaluation": {"feel-good"}}),
    ("surprise", {"knowledge": {"not-know"}, "realization": {"happened"}}),
    ("fear", {"evaluation": {"feel-bad"}, "time_direction": {"after-now"}, "realization": {"maybe"}}),
    ("boredom", {"trigger": {"nothing"}, "want": {"want", "not-want"}, "evaluation": {"feel-bad"}}),
    (
        "disgust",
        {
            "evaluation": {"feel-bad"},
            "body": {"yes"},
            "want": {"not-want"},
            "eval_target": {"object", "other"},
        },
    ),
    ("shame", {"evaluation": {"feel-bad"}, "eval_target": {"self"}, "others_know": {"can-know"}}),
    ("guilt", {"evaluation": {"feel-bad"}, "eval_target": {"self"}, "agency": {"i"}}),
    ("pride", {"evaluation": {"feel-good"}, "eval_target": {"self"}, "agency": {"i"}}),
    ("trust", {"evaluation": {"feel-good"}, "eval_target": {"other"}, "knowledge": {"know"}}),
    ("anger", {"evaluation": {"feel-bad"}, "agency": {"someone-else"}, "eval_target": {"other"}}),
    ("sadness", {"evaluation": {"feel-bad"}, "realization": {"not-can"}}),
    ("joy", {"evaluation": {"feel-good"}, "trigger": {"something-happened", "someone-did-something"}}),
    ("no-emotion", {"evaluation": {"neither"}}),
]


def spec_fired(e: Explication) -> list[str]:
    return [emotion for emotion, conds in SPEC_TABLE if all(getattr(e, s) in ok for s, ok in conds.items())]


def random_explication(rng: random.Random, **fixed: str) -> Explication:
    values = {slot.name: rng.choice(slot.values) for slot in SLOTS}
    return Explication(**{**values, **fixed})


def test_paper_example_i_got_the_management_position_routes_to_pride_rule_7():
    r = route(PRIDE)
    assert (r.label, r.rule_index, r.abstention_type, r.rule_set_version) == ("pride", 7, None, "1")
    assert r.fired == ("pride", "joy")  # joy also holds; the specific rule wins by priority
    assert r.multi_rule


def test_paper_example_guilt_flips_to_shame_through_others_know_alone():
    guilt = Explication(evaluation="feel-bad", eval_target="self", agency="i", others_know="none")
    assert route(guilt).label == "guilt"
    shame = guilt.replace(others_know="can-know")
    assert route(shame).label == "shame"
    assert route(shame).fired == ("shame", "guilt")


def test_rule_set_v1_is_the_spec_table_in_priority_order():
    rule_set = load_rule_set("1")
    assert [(r.emotion, {s: set(v) for s, v in r.conditions.items()}) for r in rule_set.rules] == SPEC_TABLE


@pytest.mark.parametrize("k", range(13))
def test_each_rule_fires_when_its_conditions_hold_and_not_when_any_one_fails(k):
    emotion, conditions = SPEC_TABLE[k]
    rng = random.Random(k)
    for _ in range(50):
        satisfying = {s: rng.choice(sorted(ok)) for s, ok in conditions.items()}
        e = random_explication(rng, **satisfying)
        assert emotion in route(e).fired
        for slot, ok in conditions.items():
            outside = [v for v in next(x for x in SLOTS if x.name == slot).values if v not in ok]
            broken = e.replace(**{slot: rng.choice(outside)})
            assert emotion not in route(broken).fired, (emotion, slot)


def test_routing_matches_the_spec_table_on_random_explications():
    rng = random.Random(7)
    for _ in range(5000):
        e = random_explication(rng)
        expected = spec_fired(e)
        r = route(e)
        assert list(r.fired) == expected
        assert r.label == (expected[0] if expected else "abstain")
        assert r.rule_index == ([x[0] for x in SPEC_TABLE].index(expected[0]) if expected else None)


def test_abstention_precedence_is_illegal_then_residue_then_no_rule():
    no_rule = Explication(evaluation="feel-bad")
    assert route(no_rule).abstention_type == NO_RULE
    assert route(no_rule).fired == ()

    with_residue = PRIDE.replace(residue="vicarious pride")
    r = route(with_residue)
    assert (r.label, r.abstention_type, r.rule_index) == ("abstain", SCHEMA_RESIDUE, None)
    assert r.fired == ("pride", "joy")  # still reported, for distributional scoring

    illegal = {**with_residue.as_dict(), "want": "wish"}
    r = route(illegal)
    assert (r.label, r.abstention_type) == ("abstain", ILLEGAL)
    assert r.errors[0].slot == "want"
    assert r.as_dict()["errors"][0]["allowed"] == ["want", "not-want", "none"]


def test_whitespace_only_residue_is_empty():
    assert route(PRIDE.replace(residue="   ")).label == "pride"


@pytest.mark.parametrize("garbage", [None, "pride", [], {}, {"evaluation": "feel-good"}])
def test_route_never_raises_on_garbage(garbage):
    assert route(garbage).abstention_type == ILLEGAL


def test_batch_routing_gives_the_same_answers_as_single_routing():
    rng = random.Random(11)
    objs: list[object] = [random_explication(rng) for _ in range(3000)]
    objs += [
        PRIDE.replace(residue="nested time"),
        {"want": "x"},
        PRIDE.as_dict() | {"trigger": "someone-did"},
    ]
    assert route_batch(objs) == [route(o) for o in objs]


def test_route_codes_matches_single_routing_and_marks_no_rule_as_minus_one():
    rng = random.Random(3)
    explications = [random_explication(rng) for _ in range(2000)]
    winners, masks = route_codes(encode(explications))
    rules = load_rule_set().rules
    for e, k, mask in zip(explications, winners, masks, strict=True):
        r = route(e)
        assert k == (-1 if r.rule_index is None else r.rule_index)
        assert [rules[i].emotion for i in range(13) if int(mask) >> i & 1] == list(r.fired)


def test_route_codes_refuses_the_wrong_shape():
    with pytest.raises(ValueError, match=r"shape \(n, 12\)"):
        route_codes(np.zeros((3, 11), dtype=np.int8))


def test_first_rule_is_the_lowest_set_bit():
    masks = np.array([0, 1, 0b1010, 1 << 62, (1 << 63) | (1 << 5)], dtype=np.uint64)
    assert first_rule(masks).tolist() == [-1, 0, 1, 62, 5]


def _doc() -> dict:
    return load_rule_set("1").canonical() | {"description": "x"}


def test_content_hash_follows_meaning_not_formatting():
    base = load_rule_set("1")
    reworded = parse_rule_set(_doc() | {"description": "another description"})
    assert reworded.content_hash == base.content_hash
    doc = _doc()
    doc["rules"][11]["conditions"]["trigger"] = ["someone-did", "something-happened"]  # alias, order
    assert parse_rule_set(doc).content_hash == base.content_hash
    doc["rules"][12]["conditions"]["evaluation"] = ["neither", "feel-good"]
    assert parse_rule_set(doc).content_hash != base.content_hash
    assert len(base.content_hash) == 64
    # issue 26: one hash for one rule set: the version name is not part of what the rules say
    # (reports and manifests gave v1's hash with the name, the database without it)
    assert parse_rule_set(_doc() | {"version": "1-renamed"}).content_hash == base.content_hash


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.pop("version"), "'version' must be a non-empty string"),
        (lambda d: d.update(rules=[]), "'rules' must be a non-empty list"),
        (lambda d: d["rules"][2]["conditions"].update(mood=["x"]), "rule 2 (fear): unknown slot 'mood'"),
        (
            lambda d: d["rules"][0]["conditions"].update(want=["wish"]),
            "rule 0 (relief): want='wish' is not an allowed value; allowed: want, not-want, none",
        ),
        (lambda d: d["rules"][1].update(emotion="relief"), "rule 1: emotion 'relief' is repeated"),
        (lambda d: d["rules"][3].update(conditions={}), "rule 3 (boredom): 'conditions' must be"),
    ],
)
def test_bad_rule_sets_are_refused_with_a_message_naming_the_problem(mutate, message):
    doc = _doc()
    mutate(doc)
    with pytest.raises(RuleSetError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_rule_set(doc)


def test_load_rule_set_from_a_file_and_unknown_versions(tmp_path):
    path = tmp_path / "v2.json"
    doc = _doc() | {"version": "2"}
    doc["rules"] = doc["rules"][::-1]
    path.write_text(json.dumps(doc))
    reversed_set = load_rule_set(path)
    assert reversed_set.version == "2"
    assert route(PRIDE, reversed_set).label == "joy"  # joy now outranks pride
    with pytest.raises(RuleSetError, match="bundled: 1"):
        load_rule_set("99")
    with pytest.raises(RuleSetError, match="no such file"):
        load_rule_set(tmp_path / "missing.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(RuleSetError, match="not valid JSON"):
        load_rule_set(tmp_path / "broken.json")


def test_route_batch_checks_repeated_explications_once_with_the_same_answers():
    from nsmcore.mapper import route, route_batch
    from tests.explications import PRIDE

    sad = PRIDE.replace(evaluation="feel-bad", eval_target="event")
    objs = [
        PRIDE.slots(),
        sad,
        PRIDE.slots(),
        {**PRIDE.slots(), "body": 3},
        sad,
        {"trigger": "x"},
        PRIDE.slots(),
    ]
    assert route_batch(objs) == [route(o) for o in objs]
