"""A GET writes nothing: every page of the site, opened by each role, issues no INSERT, UPDATE or
DELETE (the gold pages used to open gold records on every view). Sessions are the framework's
bookkeeping (a page that shows a message once clears it there), not the project's rows."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.urls import reverse

from adjudication.gold.services import convention_propose
from adjudication.models import GoldItem
from tests.crawl import crawl

WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
NOT_OURS = ("django_session",)


def _writes_during(client, seeds: list[str], ignore=NOT_OURS) -> tuple[dict[str, int], list[str]]:
    writes: list[str] = []

    def record(execute, sql, params, many, context):
        if WRITE.match(sql) and not any(table in sql for table in ignore):
            writes.append(f"{context['cursor'].__class__.__name__}: {sql[:160]}")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        status, _ = crawl(client, seeds, area=("/",))
    return status, writes


@pytest.mark.parametrize("state", ["submitted", "gold_round"])
@pytest.mark.parametrize("persona", ["annotator", "adjudicator", "admin_user"])
def test_no_page_writes_on_get(client, request, persona, state, adjudicator, one_job_of_each_kind):
    round_ = request.getfixturevalue(state)  # submitted: every item waits for a gold record
    convention_propose(
        user=adjudicator, round_=round_, slot="agency", value_a="i", value_b="someone-else", chosen="i",
        rule="The writer's own act takes agency=i.",
    )  # fmt: skip
    gold_before = GoldItem.objects.count()
    client.force_login(request.getfixturevalue(persona))
    seeds = [reverse("home")]
    if persona != "annotator":
        seeds += [reverse("gold_list", args=[round_.pk]), reverse("judgements", args=[round_.pk])]
    status, writes = _writes_during(client, seeds)
    assert writes == [], "\n".join(writes)
    assert GoldItem.objects.count() == gold_before
    opened = {url for url, code in status.items() if code == 200}
    if persona == "adjudicator":  # the crawl did reach the pages that used to write
        assert {reverse("gold_list", args=[round_.pk]), reverse("judgements", args=[round_.pk])} <= opened


def test_the_crawl_sees_a_write_when_a_get_makes_one(client, adjudicator, submitted, monkeypatch):
    """The check itself can fail: a page that opens gold records on a GET is caught."""
    from adjudication.gold import views as gold_views
    from adjudication.gold.services import gold_sync

    real = gold_views.gold_awaiting

    def writing(round_):
        gold_sync(round_)
        return real(round_)

    monkeypatch.setattr(gold_views, "gold_awaiting", writing)
    client.force_login(adjudicator)
    _, writes = _writes_during(client, [reverse("gold_list", args=[submitted.pk])])
    assert any("adjudication_golditem" in w for w in writes)


def test_the_agreement_page_stores_no_snapshot_the_export_does(client, adjudicator, submitted):
    """The agreement page computes the round's analysis on GET and writes nothing; the snapshot the
    export reads is stored by agreement_snapshot_save, a named step of the export job, and reading
    the summary stores nothing."""
    from adjudication.agreement.analysis import agreement_snapshot_save, agreement_summary
    from adjudication.models import AgreementSnapshot

    client.force_login(adjudicator)
    _, writes = _writes_during(client, [reverse("agreement", args=[submitted.pk])])
    assert writes == []
    assert not AgreementSnapshot.objects.exists()
    summary = agreement_summary(submitted)
    assert not AgreementSnapshot.objects.exists()
    agreement_snapshot_save(submitted)
    assert AgreementSnapshot.objects.get(round=submitted).summary == summary == agreement_summary(submitted)
