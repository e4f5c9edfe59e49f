"""Reading JSON that people send: one function, with the limits named.

Python's json module raises RecursionError on a document nested a few thousand levels deep and
ValueError on an integer of more than 4,300 digits (the interpreter's int-string limit); neither
says what is wrong in words a sender can act on, and a RecursionError escapes the ``except
ValueError`` that readers of JSON write. :func:`loads` turns both into :class:`JSONTooComplex`
(a ValueError), so a web request gets a 400 and a command an exit 2 naming the problem."""

from __future__ import annotations

import json
import sys
from typing import Any


class JSONTooComplex(ValueError):
    """JSON nested deeper, or holding a longer number, than can be read."""


def loads(text: str | bytes) -> Any:
    """``json.loads``, with the two documents it cannot read named; json.JSONDecodeError (also a
    ValueError) for text that is not JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise JSONTooComplex("JSON nested too deeply to read") from None
    except json.JSONDecodeError:
        raise
    except ValueError as error:
        if "digits" in str(error) or "int" in str(error):
            limit = sys.get_int_max_str_digits()
            raise JSONTooComplex(f"JSON number too long to read (more than {limit} digits)") from None
        raise
