"""One-line descriptions of each slot and value: shown beside the annotation form's choices and
written into the parsers' instruction prompt, so annotators and parsers read the same words."""

from __future__ import annotations

SLOT_HELP: dict[str, str] = {
    "experiencer": "whose feeling the text is about",
    "trigger": "what set the episode off",
    "agency": "who did the thing that matters",
    "realization": "status of the thing wanted or feared",
    "time_direction": "where the thing lies relative to the feeling",
    "want": "the writer's wish about the thing",
    "evaluation": "the feeling's valence as the text supports it",
    "eval_target": "what the evaluation is about",
    "knowledge": "the writer's knowledge state that matters",
    "others_know": "whether others can know about it",
    "body": "a bodily reaction is stated",
    "intensity": "explicit intensity marking",
}

VALUE_HELP: dict[str, dict[str, str]] = {
    "experiencer": {"i": "the writer", "someone": "one other person", "people": "a group"},
    "trigger": {
        "something-happened": "an event with no clear human doer",
        "someone-did-something": "a person did something (the writer too)",
        "nothing": "the point is that nothing happened",
        "none": "no trigger named",
    },
    "agency": {
        "i": "the writer did it",
        "someone-else": "another person did it",
        "no-one": "explicitly nobody's doing",
        "none": "not stated or not relevant",
    },
    "realization": {
        "happened": "it did happen",
        "not-happened": "an expected or feared thing did not occur",
        "can": "the writer can do or achieve it",
        "not-can": "the writer cannot: loss, impossibility",
        "maybe": "it might happen",
        "none": "not stated",
    },
    "time_direction": {
        "before-now": "already happened (also when told in the present tense)",
        "now": "ongoing at the moment of feeling",
        "after-now": "anticipated, not yet happened",
    },
    "want": {"want": "wanted it", "not-want": "did not want it", "none": "no wish stated"},
    "evaluation": {
        "feel-good": "positive",
        "feel-bad": "negative (also a bare negative life event)",
        "neither": "no valence supported",
    },
    "eval_target": {
        "self": "the writer's own conduct, worth or ability",
        "other": "another person",
        "event": "the event or situation as a whole",
        "object": "a thing: food, a smell, an object",
        "none": "not stated",
    },
    "knowledge": {
        "know": "knew or came to know, and it matters",
        "not-know": "explicitly unexpected ('out of nowhere')",
        "maybe-know": "unsure",
        "none": "not stated",
    },
    "others_know": {"can-know": "others saw, found out or could", "none": "not stated"},
    "body": {"yes": "nausea, shaking, crying, heart racing...", "no": "no bodily reaction stated"},
    "intensity": {"very": "extremely, so much, terrified", "plain": "no marking", "small": "a bit, slightly"},
}
