"""Issue 25: one date format site-wide. Templates name the format (DATETIME_FORMAT, DATE_FORMAT,
TIME_FORMAT) and config/formats defines it once, so no page writes a date its own way."""

import re
from datetime import UTC, datetime
from pathlib import Path

from django.template import Context, Template
from django.utils import translation

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
NAMED = {"DATETIME_FORMAT", "DATE_FORMAT", "TIME_FORMAT"}


def test_templates_write_dates_only_in_the_named_formats():
    found = {
        (path.relative_to(TEMPLATES).as_posix(), fmt)
        for path in TEMPLATES.rglob("*.html")
        for fmt in re.findall(r'\|(?:date|time):"([^"]*)"', path.read_text())
    }
    assert found and {fmt for _, fmt in found} <= NAMED, sorted(f for f in found if f[1] not in NAMED)


def test_the_named_formats_are_iso_dates_and_24_hour_times():
    at = datetime(2026, 3, 4, 17, 5, 9, tzinfo=UTC)
    page = Template(
        '{{ at|date:"DATETIME_FORMAT" }} | {{ at|date:"DATE_FORMAT" }} | {{ at|date:"TIME_FORMAT" }}'
    )
    for language in ("en", "en-us"):
        with translation.override(language):
            assert page.render(Context({"at": at})) == "2026-03-04 17:05 | 2026-03-04 | 17:05", language
