"""The renderer: one prime-language proposition per active slot.

Each line is a short declarative sentence in NSM primes that can stand alone as an NLI hypothesis
against the event description. Lines are written in the first person, as the paper's frames
are; the experiencer line says whose feeling it is (another experiencer is out of the schema's
first-person scope and is flagged by annotators). "this" always means the situation the text
tells; the thing wanted or feared is named in its own line ("something I thought about"), so no
two lines of one explication contradict each other (docs/renderer.md has each slot's frame and
referent). The wording is versioned with RENDERER_VERSION because the verifier's cached
judgements are keyed by the exact line text and exports record it.
"""

from __future__ import annotations

from dataclasses import dataclass

from nsmcore.schema import SLOT_BY_NAME, SLOTS, Explication

RENDERER_VERSION = "2"

LINES: dict[str, dict[str, str]] = {
    "experiencer": {
        "i": "I feel something",
        "someone": "someone else feels something",
        "people": "some people feel something",
    },
    "trigger": {
        "something-happened": "something happened",
        "someone-did-something": "someone did something",
        "nothing": "for some time nothing happened",
    },
    "agency": {
        "i": "I did something",
        "someone-else": "someone else did something",
        "no-one": "no one did this",
    },
    "realization": {
        "happened": "something I thought about happened",
        "not-happened": "something I thought about did not happen",
        "can": "I can do what I wanted to do",
        "not-can": "I can't do what I wanted to do",
        "maybe": "maybe something I thought about will happen",
    },
    "time_direction": {
        "before-now": "this happened before now",
        "now": "this is happening now",
        "after-now": "I think about something that can happen after now",
    },
    "want": {
        "want": "I wanted to do something",
        "not-want": "I did not want something to happen",
    },
    "evaluation": {
        "feel-good": "I feel something good because of this",
        "feel-bad": "I feel something bad because of this",
        "neither": "I don't feel something good or bad because of this",
    },
    "eval_target": {
        "self": "I think something about myself",
        "other": "I think something about someone else",
        "event": "I think something about what happened",
        "object": "I think something about this thing",
    },
    "knowledge": {
        "know": "I know something about this",
        "not-know": "I did not know before that this would happen",
        "maybe-know": "I don't know if this is true",
    },
    "others_know": {
        "can-know": "other people can know this",
    },
    "body": {
        "yes": "something happened in my body because of this",
    },
    "intensity": {
        "very": "I feel something very much",
        "small": "I feel something a little",
    },
}


@dataclass(frozen=True)
class Line:
    slot: str
    value: str
    text: str

    def as_dict(self) -> dict[str, str]:
        return {"slot": self.slot, "value": self.value, "text": self.text}


def is_active(slot: str, value: str) -> bool:
    return value not in SLOT_BY_NAME[slot].inactive


def render_value(slot: str, value: str) -> str | None:
    """The line one slot value renders, or None for an inactive value."""
    if not is_active(slot, value):
        return None
    return LINES[slot][value]


def render(explication: Explication) -> list[Line]:
    """The prime-language lines of an explication, in schema order."""
    lines = []
    for slot in SLOTS:
        value = getattr(explication, slot.name)
        text = render_value(slot.name, value)
        if text is not None:
            lines.append(Line(slot.name, value, text))
    return lines
