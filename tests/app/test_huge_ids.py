"""An id no row can have (beyond a 64-bit integer) in any path of the site is a 404, never a 500:
SQLite cannot even bind such a number, and a query that handed it on raised OverflowError (found
by a new user's walk through every route, issue 24). Every route with an integer is asked with
each of its integers huge in turn, the others naming rows that exist, so a lookup behind a
first one that succeeds is reached too."""

import re

from django.contrib.auth.models import Group
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from adjudication.models import GoldItem
from annotator.roles import ADJUDICATOR, ADMIN, ANNOTATOR
from webhooks.services import webhook_create

HUGE = str(2**64 + 1)


def _routes(patterns, prefix: str = "") -> list[str]:
    out = []
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            out += _routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern) and re.search(r"<(?:int|id):", route):
            out.append(route)
    return out


def _paths(route: str, ids: dict[str, int]) -> list[str]:
    """The route with each integer huge in turn, the others the ids of rows that exist."""
    names = re.findall(r"<(?:int|id):(\w+)>", route)
    out = []
    for huge in range(len(names)):
        path = route
        for k, name in enumerate(names):
            value = HUGE if k == huge else str(ids.get(f"{route.split('/')[0]}:{name}", ids.get(name, 1)))
            path = re.sub(rf"<(?:int|id):{name}>", value, path, count=1)
        out.append("/" + re.sub(r"<(?:str|slug):\w+>", "x", path))
    return out


def test_a_huge_id_in_any_path_is_a_404_not_a_500(gold_round, admin_user):
    for role in (ANNOTATOR, ADJUDICATOR):
        admin_user.groups.add(Group.objects.get_or_create(name=role)[0])
    assert admin_user.groups.filter(name=ADMIN).exists()
    gold = GoldItem.objects.filter(round=gold_round).first()
    hook = webhook_create(user=admin_user, url="https://example.org/hook", events=["*"])
    ids = {"round_id": gold_round.pk, "item_id": gold.item_id, "webhooks:pk": hook.pk, "api:pk": hook.pk}
    client = Client(raise_request_exception=False)
    client.force_login(admin_user)
    routes = _routes(get_resolver().url_patterns)
    assert len(routes) > 60 and "work/a/<id:assignment_id>/" in routes
    # the site's integers are ids (annotator.converters), which a longer number cannot match
    assert [route for route in routes if "<int:" in route] == []
    answers = {
        (method, path): getattr(client, method)(path).status_code
        for route in routes
        for path in _paths(route, ids)
        for method in ("get", "post")  # an empty POST: the lookup comes before reading a body
    }
    failed = [
        f"{method.upper()} {path}: {status}" for (method, path), status in answers.items() if status >= 500
    ]
    assert not failed, "\n".join(failed)
    assert ("get", f"/adjudicate/rounds/{gold_round.pk}/gold/{HUGE}/") in answers
    assert ("post", f"/api/webhooks/{hook.pk}/deliveries/{HUGE}/redeliver/") in answers
