"""A comment's text: what a body may hold (one check for the form, the API and the command), the
``@username`` mentions in it, and its HTML (escaped, mentions marked, lines kept)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

from discussion.models import BODY_MAX

#: control characters (C0, DEL, C1), the newline excepted
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
#: what a body may be, as the API's schema states it (ECMA and Python read it alike): no control
#: character but the newline, and at least one character that is not white space. The server checks
#: it with body_problem, which names the problem (and takes a linear time where this expression
#: backtracks: a long body ending in a control character).
BODY_PATTERN = (
    r"^[^\u0000-\u0009\u000b-\u001f\u007f-\u009f]*"
    r"[^\s\u0000-\u001f\u007f-\u009f]"
    r"[^\u0000-\u0009\u000b-\u001f\u007f-\u009f]*$"
)
#: ``@name``: Django's username characters but '@' (a mention ends at the next one), not inside a
#: word or an e-mail address
MENTION = re.compile(r"(?<![\w@.+-])@([\w.+-]+)")


def normalise_newlines(text: str) -> str:
    """A browser sends a textarea's lines ended by CR LF: the body keeps LF alone."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def body_problem(body: object) -> str:
    """Why ``body`` cannot be a comment, or "" when it can."""
    if not isinstance(body, str):
        return _("write the comment as text")
    if not body.strip():
        return _("write something: the comment is blank")
    if len(body) > BODY_MAX:
        return _("a comment holds at most %(max)s characters; this one has %(n)s") % {
            "max": BODY_MAX,
            "n": len(body),
        }
    control = CONTROL.search(body)
    if control:
        return _(
            "a comment holds no control characters but line breaks; character %(at)s is U+%(code)04X"
        ) % {"at": control.start() + 1, "code": ord(control.group())}
    return ""


def mention_candidates(body: str) -> list[str]:
    """The names ``@...`` in ``body``, in order, each with its form without a sentence's last
    dot (``@carol.`` may name carol or carol.)."""
    names: list[str] = []
    for match in MENTION.finditer(body):
        for name in (match.group(1), match.group(1).rstrip(".")):
            if name and name not in names:
                names.append(name)
    return names


def mentioned(body: str, existing: Iterable[str]) -> list[str]:
    """The names of ``existing`` users that ``body`` mentions, in the order written; a longer
    name wins over its prefix (``@carol.b`` names carol.b when both exist)."""
    known = set(existing)
    found: list[str] = []
    for match in MENTION.finditer(body):
        whole = match.group(1)
        for name in (whole, whole.rstrip(".")):
            if name in known:
                if name not in found:
                    found.append(name)
                break
    return found


def body_html(body: str, mentions: Iterable[str]) -> SafeString:
    """The body escaped, the mentions of users marked, its lines kept."""
    names = set(mentions)

    def mark(match: re.Match[str]) -> str:
        whole = match.group(1)
        for name in (whole, whole.rstrip(".")):
            if name in names:
                rest = whole[len(name) :]
                return f'<strong class="mention">@{escape(name)}</strong>{escape(rest)}'
        return escape(match.group(0))

    pieces: list[str] = []
    last = 0
    for match in MENTION.finditer(body):
        pieces.append(escape(body[last : match.start()]))
        pieces.append(mark(match))
        last = match.end()
    pieces.append(escape(body[last:]))
    return mark_safe("".join(pieces).replace("\n", "<br>"))
