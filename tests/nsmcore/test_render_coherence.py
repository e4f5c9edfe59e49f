"""The renderer's lines hold together: no two lines of one explication contradict each other.

A line is read as the set of plain clauses it asserts (with their polarity): "X did not happen"
asserts not-"X happened", "X happened before now" also asserts "X happened", "no one did X"
asserts not-"someone did X", "I can't do X" asserts not-"I can do X". Two lines contradict when one
asserts a clause the other denies. Every pair of values of two different slots occurs together in
some explication (the space is the full product of the value sets), so checking every such pair of
lines checks every explication of the space.
"""

from __future__ import annotations

import itertools
import re

import pytest

from nsmcore.render import LINES, RENDERER_VERSION, render
from nsmcore.schema import SLOTS, Explication

_TIME = re.compile(r" (before now|now|after now)$")


def assertions(line: str) -> set[tuple[bool, str]]:
    """The (polarity, clause) pairs a line asserts."""
    text = line.lower().rstrip(".")
    out = {(True, text)}
    stripped = _TIME.sub("", text)
    if stripped != text:
        out.add((True, stripped))
    patterns = [
        (r"^(.+) (?:did not|didn't) happen$", r"\1 happened"),
        (r"^(.+) can't (.+)$", r"\1 can \2"),
        (r"^(.+) (?:did not|didn't) want (.+)$", r"\1 wanted \2"),
        (r"^(.+) (?:did not|didn't) know (.+)$", r"\1 knew \2"),
        (r"^(.+) (?:don't|doesn't) feel (.+)$", r"\1 feel \2"),
        (r"^no one (.+)$", r"someone \1"),
        (r"^(?:for some time )?nothing happened$", "something happened"),
    ]
    for clause in list(out):
        for pattern, positive in patterns:
            if re.match(pattern, clause[1]):
                out.add((False, re.sub(pattern, positive, clause[1])))
    # "neither good nor bad" denies both valences
    if text == "i don't feel something good or bad because of this":
        for valence in ("good", "bad"):
            out.add((False, f"i feel something {valence} because of this"))
    return out


def contradicts(a: str, b: str) -> bool:
    sa, sb = assertions(a), assertions(b)
    return any((not polarity, clause) in sb for polarity, clause in sa)


@pytest.mark.parametrize(
    "a, b",
    [
        # the version-1 relief prototype: "this" named the trigger in one line and the feared
        # thing in the other
        ("this did not happen", "this happened before now"),
        ("I can do this", "I can't do this"),
        ("someone did something", "no one did something"),
        ("I feel something bad because of this", "I don't feel something good or bad because of this"),
        ("I wanted this to happen", "I did not want this to happen"),
    ],
)
def test_the_check_finds_known_contradictions(a, b):
    assert contradicts(a, b) and contradicts(b, a)


def test_no_two_lines_of_any_explication_contradict_each_other():
    lines = [(slot, text) for slot, values in LINES.items() for text in values.values()]
    pairs = itertools.combinations(lines, 2)
    found = [(a, b) for (slot_a, a), (slot_b, b) in pairs if slot_a != slot_b and contradicts(a, b)]
    assert found == []


def test_relief_prototype_names_the_feared_thing_apart_from_the_event():
    relief = Explication(
        trigger="something-happened", want="not-want", realization="not-happened", evaluation="feel-good"
    )
    texts = [line.text for line in render(relief)]
    assert "something I thought about did not happen" in texts
    assert "I did not want something to happen" in texts
    assert not any(contradicts(a, b) for a, b in itertools.combinations(texts, 2))


def test_want_uses_the_papers_frame_and_the_version_says_the_wording_changed():
    assert LINES["want"]["want"] == "I wanted to do something"
    assert LINES["realization"]["not-can"] == "I can't do what I wanted to do"
    assert RENDERER_VERSION == "2"


def test_this_only_points_at_what_the_text_tells():
    """'this' is the situation the text describes (the premise the verifier reads); a line never
    uses it for something another line introduced, such as the thing wanted or feared."""
    for slot in SLOTS:
        for value, text in LINES[slot.name].items():
            if slot.name in {"realization", "want"}:
                assert "this" not in text.split(), (slot.name, value, text)
