"""The annotation form: its slots by group, with the one-line help beside each choice, and the page's key map.

The full guidelines page (templates/annotator/guidelines.html) explains each slot at length;
these one-liners are what an annotator reads while choosing.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from nsmcore.guidance import SLOT_HELP, VALUE_HELP
from nsmcore.schema import GROUPS, SLOTS

__all__ = ["KEYS", "SLOT_HELP", "VALUE_HELP", "slot_groups"]

KEYS: list[tuple[str, str]] = [
    (_("↑ ↓ or k j"), _("previous / next slot")),
    (_("1 to 6"), _("choose a value (then the next slot)")),
    (_("Enter"), _("submit and go to the next item")),
    ("r  n", _("write residue / notes (Esc to leave)")),
    ("t  u  o", _("flag two-construals / unrecoverable / out-of-scope")),
    (_("z or Ctrl+Z"), _("undo the last slot change")),
    ("x", _("skip this item (the next page can take it back)")),
]


def slot_groups(values: dict[str, str], prefill: dict[str, str] | None) -> list[dict[str, Any]]:
    """The form's slots by group, each with its values, current choice and prefill."""
    groups = []
    index = 0
    for group in GROUPS:
        slots = []
        for slot in SLOTS:
            if slot.group != group:
                continue
            current = values.get(slot.name, slot.default)
            pre = prefill.get(slot.name) if prefill else None
            slots.append(
                {
                    "name": slot.name,
                    "index": index,
                    "help": SLOT_HELP[slot.name],
                    "default": slot.default,
                    "current": current,
                    "prefill": pre,
                    "changed": pre is not None and pre != current,
                    "choices": [
                        {"value": v, "key": k + 1, "help": VALUE_HELP[slot.name][v]}
                        for k, v in enumerate(slot.values)
                    ],
                }
            )
            index += 1
        groups.append({"name": group, "slots": slots})
    return groups
