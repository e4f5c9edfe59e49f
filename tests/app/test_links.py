"""No page of the whole site links its reader to a page that refuses them, and none answers a
server error: for each role, every page reachable from home in a populated project is opened."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.urls import reverse

from tests.crawl import crawl

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
        "outsider": {reverse("rule_set"), reverse("guidelines")},
    }[persona]
    assert expected <= opened, expected - opened
