"""No page of the whole site links its reader to a page that refuses them, and none answers a
server error: for each role, every page reachable from home in a populated project is opened."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.urls import reverse

from tests.crawl import crawl
from tests.security import inline_code

SITE = ("/",)


@pytest.mark.parametrize("persona", ["annotator", "adjudicator", "admin_user", "outsider"])
def test_no_page_links_its_reader_to_a_refused_page_or_errs(
    client, request, persona, gold_round, one_job_of_each_kind
):
    user = request.getfixturevalue(persona)
    client.force_login(user)
    status, refused = crawl(client, [reverse("home")], area=SITE)
    first = {link: page for page, link, _ in reversed(refused)}  # one example page per refused link
    assert not refused, "\n".join(f"{page} (and others) links to {link}: 403" for link, page in first.items())
    errors = {url: code for url, code in status.items() if code >= 500}
    assert not errors, errors
    opened = {urlsplit(url).path for url, code in status.items() if code == 200}
    # the crawl reached each role's own pages through the menus
    expected = {
        "annotator": {reverse("queue"), reverse("round_items", args=[gold_round.pk])},
        "adjudicator": {reverse("gold_list", args=[gold_round.pk]), reverse("conventions")},
        "admin_user": {reverse(name) for name in ("jobs", "exports", "manage_rounds", "manage_users")},
        "outsider": {reverse("home")},  # no role, no access: home says so
    }[persona]
    assert expected <= opened, expected - opened


@pytest.mark.parametrize("persona", ["annotator", "adjudicator", "admin_user"])
def test_no_page_needs_what_the_content_security_policy_refuses(
    client, request, persona, gold_round, one_job_of_each_kind
):
    """The policy (config/settings/base.py) allows no inline script, event handler or style: a
    page that used one would break in the browser, silently."""
    client.force_login(request.getfixturevalue(persona))
    pages: dict[str, str] = {}
    crawl(client, [reverse("home")], area=SITE, pages=pages)
    assert len(pages) > 5
    found = {url: problems for url, html in pages.items() if (problems := inline_code(html))}
    assert not found, found
    policy = client.get(reverse("home"))["Content-Security-Policy"]
    expected = ("default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'")
    assert all(directive in policy for directive in expected), policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
