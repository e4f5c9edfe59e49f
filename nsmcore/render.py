"""The renderer: one prime-language proposition per active slot, true of its slot and of the
slots it presupposes.

Each line is a short declarative sentence in NSM primes that can stand alone as an NLI hypothesis
against the event description. Version 3 (issue 26) words a line in the frame its slot
presupposes, read from four *context* slots:

- **experiencer** carries the person through every line: *I*, *this person* (introduced by
  "someone else feels something") or *these people* (introduced by "some people feel something");
- **time_direction** sets the tense of the event lines: before-now past, now present, after-now
  future ("something will happen", not "something happened", for an event not yet come);
- **want** decides the realization's frame: only a stated want makes a line about "something I
  wanted to happen" or "what I wanted to do"; without one the line speaks of *this* (the
  situation the text tells) or of what the person thought would happen;
- **trigger** keeps agency from contradicting it ("no one wanted this to happen", not "no one did
  this", beside "someone did something").

"this" always means the situation the text tells. No line uses "or" (not a prime): neither good nor
bad is two clauses. The wording is versioned with RENDERER_VERSION because the verifier's cached
judgements are keyed by the exact line text and exports record it (docs/renderer.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from nsmcore.schema import SLOT_BY_NAME, SLOTS, Explication

RENDERER_VERSION = "3"

#: the slots a line's frame reads besides its own
CONTEXT_SLOTS: tuple[str, ...] = ("experiencer", "trigger", "time_direction", "want")


class Context(NamedTuple):  # a tuple: made and hashed once per explication rendered
    experiencer: str = "i"
    trigger: str = "none"
    time_direction: str = "before-now"
    want: str = "none"

    @classmethod
    def of(cls, explication: Explication) -> Context:
        return cls(*(getattr(explication, name) for name in CONTEXT_SLOTS))


@dataclass(frozen=True)
class Person:
    subject: str  # I / this person / these people
    object: str  # me / this person / these people
    reflexive: str
    possessive: str  # my body / this person's body / these people's bodies
    body: str
    third: bool  # takes feels/thinks/doesn't/is
    be: str  # am / is / are

    def verb(self, base: str) -> str:
        """``feel`` -> "I feel", "this person feels"."""
        return f"{self.subject} {base}s" if self.third else f"{self.subject} {base}"

    def do_not(self) -> str:
        return f"{self.subject} doesn't" if self.third else f"{self.subject} don't"


PERSONS = {
    "i": Person("I", "me", "myself", "my", "body", False, "am"),
    "someone": Person("this person", "this person", "this person", "this person's", "body", True, "is"),
    "people": Person(
        "these people", "these people", "these people", "these people's", "bodies", False, "are"
    ),
}
EXPERIENCER = {
    "i": "I feel something",
    "someone": "someone else feels something",
    "people": "some people feel something",
}
TENSES = {"before-now": "past", "now": "present", "after-now": "future"}


def happen(subject: str, tense: str, *, negated: bool = False, rest: str = "") -> str:
    """``subject`` happened / is happening / will happen (or not), with ``rest`` after the verb."""
    verb = {
        ("past", False): "happened",
        ("past", True): "did not happen",
        ("present", False): "is happening",
        ("present", True): "is not happening",
        ("future", False): "will happen",
        ("future", True): "will not happen",
    }[(tense, negated)]
    return " ".join(filter(None, (subject, verb, rest)))


def do(subject: str, tense: str, be: str = "is", what: str = "something") -> str:
    return {"past": f"{subject} did {what}", "present": f"{subject} {be} doing {what}"}.get(
        tense, f"{subject} will do {what}"
    )


def _wanted(p: Person, tense: str, negated: bool = False) -> str:
    """What the person wanted (or did not want) to happen, as "something" with its relative clause."""
    if tense == "past":
        return f"something {p.subject} {'did not want' if negated else 'wanted'} to happen"
    return f"something {p.do_not() + ' want' if negated else p.verb('want')} to happen"


def _realization(value: str, c: Context, p: Person, tense: str) -> str:
    if value in {"can", "not-can"}:
        can = ("could" if tense == "past" else "can") if value == "can" else (
            "could not" if tense == "past" else "can't"
        )  # fmt: skip
        if c.want == "want":
            wanted = f"{p.subject} wanted" if tense == "past" else p.verb("want")
            return f"{p.subject} {can} do what {wanted} to do"
        return f"{p.subject} {can} do {'something' if value == 'can' else 'anything'} about this"
    if value == "maybe":  # an uncertain outcome lies ahead whatever the event's time (the guidelines)
        tense = "future"
    if c.want in {"want", "not-want"}:
        thing = _wanted(p, tense, negated=c.want == "not-want")
    else:
        thing = {"happened": "this", "maybe": "something"}.get(
            value, f"something {p.subject} thought would happen"
        )
    if value == "maybe":
        return "maybe " + happen(thing, tense)
    return happen(thing, tense, negated=value == "not-happened")


def _line(slot: str, value: str, c: Context) -> str:
    p, tense = PERSONS[c.experiencer], TENSES[c.time_direction]
    lines: dict[str, Callable[[], str]] = {
        "experiencer": lambda: EXPERIENCER[value],
        "trigger": lambda: {
            "something-happened": lambda: happen("something", tense),
            "someone-did-something": lambda: do("someone", tense),
            "nothing": lambda: "for some time " + happen("nothing", tense, rest=f"to {p.object}"),
        }[value](),
        "agency": lambda: {
            "i": lambda: do(p.subject, tense, p.be),
            "someone-else": lambda: do("someone else", tense),
            "no-one": lambda: (
                ("no one wanted this to happen" if tense == "past" else "no one wants this to happen")
                if c.trigger == "someone-did-something"
                else do("no one", tense, what="this")
            ),
        }[value](),
        "realization": lambda: _realization(value, c, p, tense),
        "time_direction": lambda: {
            "before-now": "this happened before now",
            "now": "this is happening now",
            "after-now": f"{p.verb('think')} about something that can happen after now",
        }[value],
        "want": lambda: (
            (
                f"{p.subject} wanted to do something"
                if tense == "past"
                else f"{p.verb('want')} to do something"
            )
            if value == "want"
            else (
                f"{p.subject} did not want something to happen"
                if tense == "past"
                else f"{p.do_not()} want something to happen"
            )
        ),
        "evaluation": lambda: (
            f"{p.verb('feel')} something {'good' if value == 'feel-good' else 'bad'} because of this"
            if value != "neither"
            else ", ".join(f"{p.do_not()} feel something {v} because of this" for v in ("good", "bad"))
        ),
        "eval_target": lambda: (
            f"{p.verb('think')} something about "
            + {
                "self": p.reflexive,
                "other": "someone else",
                "event": {"past": "what happened", "present": "what is happening"}.get(
                    tense, "what will happen"
                ),
                "object": "this thing",
            }[value]
        ),
        "knowledge": lambda: {
            "know": f"{p.verb('know')} something about this",
            "not-know": f"{p.subject} did not know before that this "
            + ("can happen" if tense == "future" else "would happen"),
            "maybe-know": f"{p.do_not()} know "
            + ("if this will happen" if tense == "future" else "much about this"),
        }[value],
        "others_know": lambda: "other people can know this",
        "body": lambda: happen(
            "something",
            "past" if tense == "past" else "present",
            rest=f"in {p.possessive} {p.body} because of this",
        ),
        "intensity": lambda: (
            f"{p.verb('feel')} something " + ("very much" if value == "very" else "a little")
        ),
    }
    return lines[slot]()


@dataclass(frozen=True)
class Line:
    slot: str
    value: str
    text: str

    def as_dict(self) -> dict[str, str]:
        return {"slot": self.slot, "value": self.value, "text": self.text}


def is_active(slot: str, value: str) -> bool:
    return value not in SLOT_BY_NAME[slot].inactive


def render_value(slot: str, value: str, context: Context | None = None) -> str | None:
    """The line one slot value renders in ``context`` (the default explication's: I, before now,
    no want, no trigger), or None for an inactive value."""
    if not is_active(slot, value):
        return None
    if slot not in SLOT_BY_NAME or value not in SLOT_BY_NAME[slot].values:
        raise ValueError(f"{slot}={value!r} is not a value of the schema")
    return _line(slot, value, context or Context())


def render(explication: Explication) -> list[Line]:
    """The prime-language lines of an explication, in schema order."""
    table = lines_of(Context.of(explication))
    lines = []
    for slot in SLOTS:
        value = getattr(explication, slot.name)  # a value of the slot: Explication checked it
        if value not in slot.inactive:
            lines.append(Line(slot.name, value, table[slot.name, value]))
    return lines


# The lines of one context, kept once computed: a pure function over a closed space (108 contexts
# of about 30 lines), so rendering is one lookup per line (without it version 3 rendered 3x
# slower than version 2's fixed table).
@cache
def lines_of(context: Context) -> dict[tuple[str, str], str]:
    """Every active (slot, value)'s line in ``context``."""
    return {
        (slot.name, value): _line(slot.name, value, context)
        for slot in SLOTS
        for value in slot.values
        if value not in slot.inactive
    }


def contexts() -> Iterator[Context]:
    """Every context a line can be rendered in (108)."""
    for experiencer in SLOT_BY_NAME["experiencer"].values:
        for trigger in SLOT_BY_NAME["trigger"].values:
            for time_direction in SLOT_BY_NAME["time_direction"].values:
                for want in SLOT_BY_NAME["want"].values:
                    yield Context(experiencer, trigger, time_direction, want)


def lines_in(context: Context) -> list[Line]:
    """Every line an explication with this context can hold: all values of the other slots, and
    the context slots' own values only."""
    own = {name: getattr(context, name) for name in CONTEXT_SLOTS}
    return [
        Line(slot.name, value, text)
        for slot in SLOTS
        for value in ((own[slot.name],) if slot.name in own else slot.values)
        if (text := render_value(slot.name, value, context)) is not None
    ]
