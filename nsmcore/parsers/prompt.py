"""The instruction prompt every model backend reads: the guidelines' slot and value descriptions,
the text, and (for slot-by-slot scoring) the slots chosen so far."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from nsmcore.guidance import SLOT_HELP, VALUE_HELP
from nsmcore.schema import SLOTS

PROMPT_VERSION = "1"

INSTRUCTION = (
    "You annotate an event description with an NSM emotion explication: twelve slots, each with "
    "a closed set of values. A slot keeps its default (marked *) unless the text gives explicit "
    "support for another value. Describe the writer's event and appraisal; do not name an emotion."
)


def guidelines_block() -> str:
    lines = []
    for slot in SLOTS:
        values = ", ".join(
            f"{v}{'*' if v == slot.default else ''} ({VALUE_HELP[slot.name][v]})" for v in slot.values
        )
        lines.append(f"- {slot.name}: {SLOT_HELP[slot.name]}. Values: {values}")
    return "\n".join(lines)


def slot_prefix() -> str:
    """The part of every slot prompt that does not depend on the text: computed once per model."""
    return f"{INSTRUCTION}\n\nSlots:\n{GUIDELINES}\n\n"


def slot_suffix(text: str, chosen: Mapping[str, str]) -> str:
    """The rest: the text, everything chosen so far, then ``<next slot>:``."""
    so_far = "".join(f"{name}: {value}\n" for name, value in chosen.items())
    nxt = SLOTS[len(chosen)].name
    return f"Text: {text.strip()}\n\nExplication:\n{so_far}{nxt}:"


def slot_prompt(text: str, chosen: Mapping[str, str]) -> str:
    return slot_prefix() + slot_suffix(text, chosen)


def chat_messages(text: str, *, with_schema: bool) -> list[dict[str, str]]:
    """System and user messages for a chat server. Without a schema (free decoding) the user
    message spells out the JSON shape, since nothing else constrains the reply."""
    system = f"{INSTRUCTION}\n\nSlots:\n{GUIDELINES}"
    user = f"Text: {text.strip()}\n\nReply with one JSON object with the twelve slots as keys"
    user += "." if with_schema else f", for example:\n{json.dumps(_example())}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _example() -> dict[str, Any]:
    return {slot.name: slot.default for slot in SLOTS}


GUIDELINES = guidelines_block()
