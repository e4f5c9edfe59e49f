"""The path converter of the site's ids, ``<id:name>``: an integer of at most 18 digits. A row's
id is a 64-bit integer, so a longer number is no path of the site (Django's 404); handed on to a
query it was a 500 (SQLite cannot bind it, PostgreSQL refuses it; issue 24). Every app's URLconf
uses it for its integers, and AnnotatorConfig.ready registers it before any URLconf is read."""

from django.urls.converters import IntConverter

#: digits of the largest id a path takes (2**63 - 1 has 19)
ID_DIGITS = 18


class IdConverter(IntConverter):
    regex = f"[0-9]{{1,{ID_DIGITS}}}"
