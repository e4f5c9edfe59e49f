"""The annotation form: its slots by group, with the one-line help beside each choice, and the page's key map.

The full guidelines page (templates/annotator/guidelines.html) explains each slot at length;
these one-liners are what an annotator reads while choosing.
"""

from __future__ import annotations

from typing import Any

from django.utils.html import format_html_join
from django.utils.safestring import SafeString, mark_safe
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
                    "choices_html": _choices_html(slot.name, slot.values, current, slot.default),
                }
            )
            index += 1
        groups.append({"name": group, "slots": slots})
    return groups


CHECKED = mark_safe(" checked")
DEFAULT_MARK = mark_safe('<span class="muted">*</span>')
# one choice: its help (as the label's title), the slot, the value, checked, the key, the value,
# the default's mark, the help; the whitespace is the template loop's that this replaces
CHOICE = (
    '\n          <label class="choice" title="{}"><input type="radio" name="{}" value="{}"{}>'
    '<kbd>{}</kbd> {}{}<span class="help">{}</span></label>\n        '
)


def _choices_html(name: str, values: tuple[str, ...], current: str, default: str) -> SafeString:
    """A slot's radio buttons, each with its key, its value and its help, as the annotation page
    shows them, escaped as the template escaped them (tests/annotator/test_annotation_choices.py
    compares the two). Built here rather than by a loop in the template, whose nodes were about 500
    of the page's 700: the page in-process took 5.21 ms of CPU against 5.67 (medians of five
    alternating pairs, 2026-11-29), its function calls 34,300 against 39,900."""
    helps = VALUE_HELP[name]
    rows = []
    for key, v in enumerate(values, start=1):
        checked = CHECKED if v == current else ""
        rows.append((helps[v], name, v, checked, key, v, DEFAULT_MARK if v == default else "", helps[v]))
    return format_html_join("", CHOICE, rows)
