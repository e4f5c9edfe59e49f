import pytest

from nsmcore.schema import (
    SLOT_BY_NAME,
    SLOT_NAMES,
    SLOTS,
    SPACE_SIZE,
    Explication,
    ExplicationError,
    from_codes,
    validate,
)
from tests.explications import PRED

PRIDE = PRED


def test_schema_has_twelve_slots_in_three_groups_with_the_spec_sizes():
    assert len(SLOTS) == 12
    assert [s.group for s in SLOTS].count("event") == 5
    assert [s.group for s in SLOTS].count("appraisal") == 4
    assert [s.group for s in SLOTS].count("expression") == 3
    assert SPACE_SIZE == 1_866_240


def test_defaults_are_the_starred_values():
    defaults = {s.name: s.default for s in SLOTS}
    assert defaults == {
        "experiencer": "i",
        "trigger": "none",
        "agency": "none",
        "realization": "none",
        "time_direction": "before-now",
        "want": "none",
        "evaluation": "neither",
        "eval_target": "none",
        "knowledge": "none",
        "others_know": "none",
        "body": "no",
        "intensity": "plain",
    }
    assert Explication().slots() == defaults


def test_from_dict_reads_a_full_object():
    e = Explication.from_dict({**PRIDE, "residue": "", "notes": "paper figure 1"})
    assert e.agency == "i"
    assert e.notes == "paper figure 1"


def test_explication_is_immutable_and_replace_makes_a_new_one():
    e = Explication.from_dict(PRIDE)
    with pytest.raises(AttributeError):
        e.agency = "none"  # type: ignore[misc]
    edited = e.replace(others_know="can-know")
    assert e.others_know == "none"
    assert edited.others_know == "can-know"


def test_someone_did_alias_is_accepted_on_input_and_never_emitted():
    e = Explication.from_dict({**PRIDE, "trigger": "someone-did"})
    assert e.trigger == "someone-did-something"
    assert "someone-did" not in e.as_dict().values()


def test_bad_value_error_names_slot_value_and_allowed_values():
    with pytest.raises(ExplicationError) as caught:
        Explication.from_dict({**PRIDE, "want": "wish"})
    [problem] = caught.value.problems
    assert problem.slot == "want"
    assert problem.value == "wish"
    assert problem.allowed == ("want", "not-want", "none")
    assert "'wish'" in str(caught.value) and "not-want" in str(caught.value)


def test_missing_and_unknown_keys_are_each_reported():
    obj = {k: v for k, v in PRIDE.items() if k != "body"}
    obj["bodily"] = "yes"
    problems = validate(obj)
    by_slot = {p.slot: p for p in problems}
    assert set(by_slot) == {"body", "bodily"}
    assert "missing" in by_slot["body"].message
    assert by_slot["body"].allowed == ("yes", "no")
    assert "unknown key" in by_slot["bodily"].message


def test_every_problem_is_reported_at_once():
    obj = {**PRIDE, "want": 3, "intensity": "VERY", "residue": 5}
    assert {p.slot for p in validate(obj)} == {"want", "intensity", "residue"}


def test_non_object_is_refused_with_its_type():
    [problem] = validate(["i"])
    assert "expected a JSON object, got list" in problem.message


def test_constructor_refuses_bad_values_too():
    with pytest.raises(ExplicationError, match="evaluation"):
        Explication(evaluation="happy")


def test_codes_round_trip_through_from_codes():
    e = Explication.from_dict(PRIDE)
    assert from_codes(e.codes()) == e
    assert e.codes()[SLOT_NAMES.index("agency")] == SLOT_BY_NAME["agency"].values.index("i")
