"""The renderer's lines hold together: no two lines of one explication contradict each other.

A line is read as the set of plain clauses it asserts (with their polarity): "X did not happen"
asserts not-"X happened", "X happened before now" also asserts "X happened", "no one did X"
asserts not-"someone did X", "I can't do X" asserts not-"I can do X", and a line of two sentences
asserts what each does. Two lines contradict when one asserts a clause the other denies.

Version 3 words a line by its context (experiencer, trigger, time, want: nsmcore.render.Context),
so the check runs in each of the 108 contexts over every line an explication with that context can
hold; every pair of values of two other slots occurs together in some explication of it, so this
checks every explication of the space (issue 26 added the cases version 2 missed).
"""

from __future__ import annotations

import itertools
import re
from functools import cache

import pytest

from nsmcore.render import contexts, lines_in, render
from nsmcore.schema import Explication

_TIME = re.compile(r" (before now|now|after now)$")
_NEGATIONS = [
    (r"^(.+) (?:did not|didn't) happen(.*)$", r"\1 happened\2"),
    (r"^(.+) is not happening(.*)$", r"\1 is happening\2"),
    (r"^(.+) will not happen(.*)$", r"\1 will happen\2"),
    (r"^(.+) can't do anything (.+)$", r"\1 can do something \2"),
    (r"^(.+) could not do anything (.+)$", r"\1 could do something \2"),
    (r"^(.+) can't (.+)$", r"\1 can \2"),
    (r"^(.+) could not (.+)$", r"\1 could \2"),
    (r"^(.+) (?:did not|didn't) want (.+)$", r"\1 wanted \2"),
    (r"^(.+) don't want (.+)$", r"\1 want \2"),
    (r"^(.+) doesn't want (.+)$", r"\1 wants \2"),
    (r"^(.+) (?:did not|didn't) know (.+)$", r"\1 knew \2"),
    (r"^(.+) don't (feel|know) (.+)$", r"\1 \2 \3"),
    (r"^(.+) doesn't (feel|know) (.+)$", r"\1 \2s \3"),
    (r"^no one (did|is doing|will do) this$", r"someone \1 something"),
    (r"^no one (.+)$", r"someone \1"),
    (r"^(?:for some time )?nothing (happened|is happening|will happen)(.*)$", r"something \1\2"),
]
# what doing something entails: something happens (then, now or later)
_DOING = [(r"^.+ did something$", "something happened"), (r"^.+ (?:am|is|are) doing something$",
          "something is happening"), (r"^.+ will do something$", "something will happen")]  # fmt: skip


@cache
def assertions(line: str) -> frozenset[tuple[bool, str]]:
    """The (polarity, clause) pairs a line asserts."""
    out: set[tuple[bool, str]] = set()
    for sentence in line.lower().rstrip(".").split(", "):
        out.add((True, sentence))
        stripped = _TIME.sub("", sentence)
        if stripped != sentence:
            out.add((True, stripped))
            out.add((True, "the speaker knows that this happens"))  # a line placing the event in time
        for pattern, entailed in _DOING:
            if re.match(pattern, sentence):
                out.add((True, entailed))
        if re.search(r"(?:don't|doesn't) know if this is true$", sentence):
            out.add((False, "the speaker knows that this happens"))
    for polarity, clause in list(out):
        for pattern, positive in _NEGATIONS:
            if polarity and re.match(pattern, clause):
                out.add((False, re.sub(pattern, positive, clause)))
                break
    return frozenset(out)


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
        ("I could do something about this", "I could not do anything about this"),
        ("something I wanted to happen will happen", "something I wanted to happen will not happen"),
        (
            "I feel something bad because of this",
            "I don't feel something good because of this, I don't feel something bad because of this",
        ),
        ("I wanted this to happen", "I did not want this to happen"),
        ("this person wants to do something", "this person doesn't want to do something"),
        # what version 2 wrote side by side (issue 26)
        ("someone did something", "no one did this"),
        ("for some time nothing happened", "I did something"),
        ("I don't know if this is true", "this happened before now"),
    ],
)
def test_the_check_finds_known_contradictions(a, b):
    assert contradicts(a, b) and contradicts(b, a)


def test_no_two_lines_of_any_explication_contradict_each_other():
    found = []
    for context in contexts():
        lines = lines_in(context)
        found += [
            (context, a.text, b.text)
            for a, b in itertools.combinations(lines, 2)
            if a.slot != b.slot and contradicts(a.text, b.text)
        ]
    assert found == []


def test_relief_prototype_names_the_feared_thing_apart_from_the_event():
    relief = Explication(
        trigger="something-happened", want="not-want", realization="not-happened", evaluation="feel-good"
    )
    texts = [line.text for line in render(relief)]
    assert "something I did not want to happen did not happen" in texts
    assert "I did not want something to happen" in texts
    assert not any(contradicts(a, b) for a, b in itertools.combinations(texts, 2))


def test_this_only_points_at_what_the_text_tells():
    """'this' is the situation the text describes (the premise the verifier reads); a line never
    uses it for something another line introduced, such as the thing wanted or feared: where a want
    is stated, the realization and want lines name it as "something" or "what I wanted to do"."""
    for context in contexts():
        if context.want == "none":
            continue
        for line in lines_in(context):
            if line.slot == "want" or (line.slot == "realization" and line.value not in {"can", "not-can"}):
                words = line.text.replace("this person", "").split()  # the experiencer, carried
                assert "this" not in words, (context, line)
