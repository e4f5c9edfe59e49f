"""The learning queue in the browser's pages, the API and the command: what each role may do, what
the database holds after each request, and a bad value refused by name with nothing written."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from jobs.models import Job
from learning.models import QueueEntry, QueuePolicy
from learning.services import queue_compute, queue_policy_set

pytestmark = pytest.mark.django_db


def url(round_, tail: str = "") -> str:
    return f"/adjudicate/rounds/{round_.pk}/queue/{tail}"


def test_an_admin_sets_the_order_and_the_job_computes_the_queue(
    client, admin_user, clf_round, django_capture_on_commit_callbacks
):
    client.force_login(admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            url(clf_round),
            {"order": "mixed", "random_share": "0.5", "seed": "3", "parser": "clf", "retrain_every": "0"},
        )
    assert response.status_code == 302, response.content
    policy = QueuePolicy.objects.get(round=clf_round)
    assert (policy.order, policy.random_share, policy.seed, policy.parser) == ("mixed", 0.5, 3, "clf")
    assert Job.objects.get(kind="ranking").status == "done"
    page = client.get(url(clf_round))
    html = page.content.decode()
    assert page.status_code == 200
    assert html.count('<tr data-rank="') == 4 and html.count('class="random"') == 2
    assert f"?item_set={policy.random_set.name.replace(' ', '%20').replace(':', '%3A')}" in html


def test_a_round_without_a_queue_offers_the_default_order_mixed(client, admin_user, clf_round):
    """docs/learning.md: mixed is the default; the form had started on its first choice, random."""
    client.force_login(admin_user)
    page = client.get(url(clf_round)).content.decode()
    assert not QueuePolicy.objects.filter(round=clf_round).exists()
    assert re.search(r'<option value="mixed"[^>]*selected', page), page[page.find('name="order"') :][:400]
    assert not re.search(r'<option value="random"[^>]*selected', page)


def test_a_bad_share_is_a_400_naming_it_and_nothing_is_written(client, admin_user, clf_round):
    client.force_login(admin_user)
    response = client.post(
        url(clf_round), {"order": "mixed", "random_share": "1.5", "seed": "0", "retrain_every": "0"}
    )
    assert response.status_code == 400
    assert 'data-field="random_share"' in response.content.decode()
    assert not QueuePolicy.objects.exists() and not Job.objects.exists()


def test_adjudicators_read_admins_write_annotators_see_nothing(client, adjudicator, annotator, clf_round):
    client.force_login(adjudicator)
    assert client.get(url(clf_round)).status_code == 200
    assert 'id="queue-form"' not in client.get(url(clf_round)).content.decode()
    assert client.post(url(clf_round), {"order": "random"}).status_code == 403
    assert client.post(url(clf_round, "recompute/")).status_code == 403
    client.force_login(annotator)
    assert client.get(url(clf_round)).status_code in (403, 404)
    assert not QueuePolicy.objects.exists() and not Job.objects.exists()


def test_retraining_a_round_without_gold_is_a_400_with_the_reason(client, admin_user, clf_round):
    queue_policy_set(round_=clf_round, user=admin_user, order="mixed")
    client.force_login(admin_user)
    response = client.post(url(clf_round, "retrain/"))
    assert response.status_code == 400
    assert "no resolved gold" in response.content.decode()
    assert not Job.objects.exists()


def test_the_csv_lists_every_item_by_rank(client, adjudicator, clf_round):
    policy = queue_policy_set(round_=clf_round, user=None, order="informative", parser="clf")
    queue_compute(policy=policy)
    client.force_login(adjudicator)
    response = client.get(f"/adjudicate/rounds/{clf_round.pk}/queue.csv")
    assert response["Content-Disposition"] == f'attachment; filename="queue-round-{clf_round.pk}.csv"'
    rows = response.content.decode().splitlines()
    assert rows[0].startswith("rank,item_id,source_id,score")
    ranks = [int(r.split(",")[0]) for r in rows[1:]]
    assert ranks == [0, 1, 2, 3]
    first = rows[1].split(",")
    assert int(first[1]) == QueueEntry.objects.get(policy=policy, rank=0).item_id


def test_the_agreement_page_reads_the_random_share_alone(client, adjudicator, submitted):
    policy = queue_policy_set(
        round_=submitted, user=None, order="mixed", random_share=0.5, seed=1, parser="lex"
    )
    queue_compute(policy=policy)
    policy.refresh_from_db()
    client.force_login(adjudicator)
    whole = client.get(f"/adjudicate/rounds/{submitted.pk}/")
    share = client.get(f"/adjudicate/rounds/{submitted.pk}/", {"item_set": policy.random_set.name})
    assert share.status_code == 200 and 'id="agreement-subset"' in share.content.decode()
    assert share.context["report"].items == 2 and whole.context["report"].items == 4
    refused = client.get(f"/adjudicate/rounds/{submitted.pk}/", {"item_set": "no such set"})
    assert refused.status_code == 400 and "no such set" in refused.content.decode()


# The API ---------------------------------------------------------------------------------------


def put(client, path, body):
    return client.put(path, json.dumps(body), content_type="application/json")


def test_the_api_sets_reads_and_pages_the_queue(
    client, admin_user, clf_round, django_capture_on_commit_callbacks
):
    client.force_login(admin_user)
    api = f"/api/rounds/{clf_round.pk}/queue/"
    assert client.get(api).status_code == 404
    with django_capture_on_commit_callbacks(execute=True):
        started = put(client, api, {"order": "informative", "parser": "clf"})
    assert started.status_code == 202, started.json()
    assert Job.objects.get(pk=started.json()["id"]).status == "done"
    body = client.get(api, {"limit": 2}).json()
    assert body["order"] == "informative" and body["stale"] is False
    assert [e["rank"] for e in body["entries"]] == [0, 1]
    assert body["entries"][0]["change"] == pytest.approx(0.45, abs=1e-4)
    assert client.get(api, {"offset": 3}).json()["entries"][0]["rank"] == 3
    assert client.get(api, {"limit": 5000}).status_code == 400
    # an offset beyond a 64-bit integer overflowed SQLite's OFFSET: a 500; superscript digits too
    for offset in ("9" * 25, "²", "-1", "x"):
        refused = client.get(api, {"offset": offset})
        assert refused.status_code == 400 and "offset" in str(refused.json()), offset


@pytest.mark.parametrize(
    "body",
    [
        {"order": "clever"},
        {"order": "mixed", "random_share": 2},
        {"order": "mixed", "colour": "red"},
        ["mixed"],
    ],
)
def test_a_bad_api_body_is_a_400_and_nothing_is_written(client, admin_user, clf_round, body):
    client.force_login(admin_user)
    response = put(client, f"/api/rounds/{clf_round.pk}/queue/", body)
    assert response.status_code == 400, response.content
    assert not QueuePolicy.objects.exists() and not Job.objects.exists()


def test_an_unknown_parser_through_the_api_is_named(client, admin_user, clf_round):
    client.force_login(admin_user)
    response = put(client, f"/api/rounds/{clf_round.pk}/queue/", {"order": "mixed", "parser": "ghost"})
    assert response.status_code == 400 and "ghost" in json.dumps(response.json())
    assert not QueuePolicy.objects.exists()


def test_an_adjudicator_reads_but_cannot_change_the_queue_through_the_api(client, adjudicator, clf_round):
    queue_compute(policy=queue_policy_set(round_=clf_round, user=None, order="random"))
    client.force_login(adjudicator)
    assert client.get(f"/api/rounds/{clf_round.pk}/queue/").status_code == 200
    assert put(client, f"/api/rounds/{clf_round.pk}/queue/", {"order": "mixed"}).status_code == 403
    assert client.post(f"/api/rounds/{clf_round.pk}/queue/recompute/").status_code == 403
    assert QueuePolicy.objects.get(round=clf_round).order == "random"


# The command -----------------------------------------------------------------------------------


def test_the_command_sets_computes_and_shows_the_queue(clf_round):
    out = StringIO()
    call_command(
        "learning_queue", "set", clf_round.name, "--order", "informative", "--parser", "clf", stdout=out
    )
    text = out.getvalue()
    assert "round prefilled: informative; computed from clf 1" in text
    assert QueueEntry.objects.filter(policy__round=clf_round).count() == 4
    shown = StringIO()
    call_command("learning_queue", "show", clf_round.name, "--json", "--top", "2", stdout=shown)
    data = json.loads(shown.getvalue())
    assert [e["rank"] for e in data["entries"]] == [0, 1] and data["order"] == "informative"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "nowhere"], "no round named 'nowhere'"),
        (["show", "prefilled"], "has no learning queue"),
        (["set", "prefilled", "--order", "mixed", "--share", "3"], "random share 3.0"),
        (["set", "prefilled", "--order", "mixed", "--parser", "ghost"], "parser 'ghost'"),
    ],
)
def test_the_command_refuses_bad_input_with_exit_2(clf_round, args, message):
    with pytest.raises(CommandError) as refused:
        call_command("learning_queue", *args)
    assert refused.value.returncode == 2 and message in str(refused.value)
    assert not QueuePolicy.objects.exists()
