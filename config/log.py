"""The production logging (config/settings/prod.py): errors and warnings to stderr, where gunicorn
and the process manager collect them, in one line each for what the site refuses on purpose."""

from __future__ import annotations

import logging
from typing import Any


class RefusalsWithoutTraceback(logging.Filter):
    """Django logs each 404 and 403 it answers from an exception (Http404, PermissionDenied) as a
    warning with that exception's traceback: a page of stack for a wrong address or a page outside
    one's role, which buries the real errors and lets anyone fill the log by asking for pages. The
    line stays (path and status); the traceback is kept only for a 5xx."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if record.exc_info and status is not None and status < 500:
            record.exc_info = None
            record.exc_text = None
        return True


def stderr_logging(level: str) -> dict[str, Any]:
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
        "filters": {"refusals": {"()": "config.log.RefusalsWithoutTraceback"}},
        "handlers": {
            "stderr": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["refusals"]}
        },
        "root": {"handlers": ["stderr"], "level": level},
    }
