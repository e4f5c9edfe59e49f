"""Renderer version 3 (issue 26): every line passes the prime grammar in every context, and each
line is worded in the frame its slot presupposes (tense, want, person, trigger)."""

import pytest

from nsmcore.grammar import check_line
from nsmcore.render import CONTEXT_SLOTS, RENDERER_VERSION, Context, contexts, lines_in, render, render_value
from nsmcore.schema import SLOTS, Explication


def texts(**slots) -> list[str]:
    return [line.text for line in render(Explication(**slots))]


def test_every_line_in_every_context_passes_the_grammar():
    found = {(line.text, tuple(check_line(line.text))) for c in contexts() for line in lines_in(c)}
    assert len({c for c in contexts()}) == 3 * 4 * 3 * 3
    assert [(text, problems) for text, problems in found if problems] == []
    assert len(found) > 150  # the frames multiply the lines


def test_inactive_values_render_nothing_and_unknown_values_are_refused():
    for slot in SLOTS:
        for value in slot.inactive:
            assert render_value(slot.name, value) is None
    with pytest.raises(ValueError, match="not a value of the schema"):
        render_value("trigger", "exploded")


def test_within_a_context_each_line_names_one_slot_value():
    for c in contexts():
        lines = [line.text for line in lines_in(c)]
        assert len(lines) == len(set(lines)), c


def test_render_gives_one_line_per_active_slot_in_schema_order():
    e = Explication(trigger="someone-did-something", agency="i", realization="happened", want="want",
                    evaluation="feel-good", eval_target="self")  # fmt: skip
    lines = render(e)
    assert [line.slot for line in lines] == [
        "experiencer", "trigger", "agency", "realization",
        "time_direction", "want", "evaluation", "eval_target",
    ]  # fmt: skip
    assert [line.text for line in lines] == [
        "I feel something",
        "someone did something",
        "I did something",
        "something I wanted to happen happened",
        "this happened before now",
        "I wanted to do something",
        "I feel something good because of this",
        "I think something about myself",
    ]
    assert RENDERER_VERSION == "3" and set(CONTEXT_SLOTS) <= {s.name for s in SLOTS}


def test_realization_names_a_wanted_thing_only_where_a_want_is_stated():
    # v2 wrote "something I thought about happened" on 109 of 156 silver items, the surprise and
    # disgust prototypes among them, and "what I wanted to do" for "My old dog died"
    surprise = texts(trigger="something-happened", realization="happened", knowledge="not-know")
    assert "this happened" in surprise and not any("thought about" in t for t in surprise)
    dog = texts(trigger="something-happened", realization="not-can", evaluation="feel-bad")
    assert "I could not do anything about this" in dog and not any("wanted" in t for t in dog)
    relief = texts(
        trigger="something-happened", want="not-want", realization="not-happened", evaluation="feel-good"
    )
    assert "something I did not want to happen did not happen" in relief
    assert "I did not want something to happen" in relief
    hope = texts(time_direction="after-now", want="want", realization="maybe")
    assert "maybe something I want to happen will happen" in hope


def test_a_future_event_gets_future_lines():
    fear = texts(trigger="something-happened", agency="someone-else", time_direction="after-now",
                 want="not-want", realization="maybe", eval_target="event", evaluation="feel-bad",
                 body="yes")  # fmt: skip
    assert "something will happen" in fear and "someone else will do something" in fear
    assert "I think something about what will happen" in fear
    assert "something is happening in my body because of this" in fear
    assert not any(t.endswith("happened") or " did " in f" {t} " for t in fear)


def test_the_experiencers_person_is_carried_through_every_line():
    lines = texts(experiencer="someone", agency="i", want="want", evaluation="feel-bad", eval_target="self",
                  knowledge="maybe-know", body="yes", intensity="very")  # fmt: skip
    assert lines[0] == "someone else feels something"
    assert not any(t.startswith("I ") or " my " in f" {t} " or "myself" in t for t in lines)
    assert "this person feels something bad because of this" in lines
    assert "something happened in this person's body because of this" in lines
    plural = texts(experiencer="people", evaluation="feel-good", intensity="small")
    assert plural == [
        "some people feel something",
        "this happened before now",
        "these people feel something good because of this",
        "these people feel something a little",
    ]


def test_lines_that_contradicted_each_other_in_version_2():
    # "someone did something" beside "no one did this"
    accident = texts(trigger="someone-did-something", agency="no-one")
    assert "no one wanted this to happen" in accident and "no one did this" not in accident
    # "I don't know if this is true" beside "this happened before now"
    assert "I don't know much about this" in texts(knowledge="maybe-know")
    # "for some time nothing happened" beside "I did something"
    bored = texts(trigger="nothing", agency="i")
    assert "for some time nothing happened to me" in bored and "I did something" in bored
    # "or" is not a prime: neither good nor bad is two clauses
    neither = texts(evaluation="neither")[-1]
    assert (
        neither == "I don't feel something good because of this, I don't feel something bad because of this"
    )
    assert not any(" or " in f" {line.text} " for c in contexts() for line in lines_in(c))


def test_the_default_context_is_the_default_explications():
    assert Context.of(Explication()) == Context()
    assert render_value("trigger", "something-happened") == "something happened"
    assert (
        render_value("trigger", "something-happened", Context(time_direction="now"))
        == "something is happening"
    )
