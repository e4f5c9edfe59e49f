import pytest

from nsmcore.grammar import check_line
from nsmcore.render import LINES, render, render_value
from nsmcore.schema import SLOTS, Explication


@pytest.mark.parametrize("slot, value", [(s.name, v) for s in SLOTS for v in s.values if v not in s.inactive])
def test_each_active_slot_value_renders_a_line_that_passes_the_grammar(slot, value):
    line = render_value(slot, value)
    assert line
    assert check_line(line) == [], line


def test_inactive_values_render_nothing():
    for slot in SLOTS:
        for value in slot.inactive:
            assert render_value(slot.name, value) is None
    assert set(LINES) == {s.name for s in SLOTS}


def test_lines_are_distinct_so_each_names_one_slot_value():
    texts = [text for values in LINES.values() for text in values.values()]
    assert len(texts) == len(set(texts))


def test_render_gives_one_line_per_active_slot_in_schema_order():
    e = Explication(
        trigger="someone-did-something",
        agency="i",
        realization="happened",
        want="want",
        evaluation="feel-good",
        eval_target="self",
    )
    lines = render(e)
    assert [line.slot for line in lines] == [
        "experiencer",
        "trigger",
        "agency",
        "realization",
        "time_direction",
        "want",
        "evaluation",
        "eval_target",
    ]
    assert lines[2].text == "I did something"
    assert lines[6].as_dict() == {
        "slot": "evaluation",
        "value": "feel-good",
        "text": "I feel something good because of this",
    }
