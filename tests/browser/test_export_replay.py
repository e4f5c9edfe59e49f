"""An admin replays a stored export from the Exports page: the result box says identical, names the
item and slot once a stored annotation revision has changed, and the export's page shows its recipe."""

import pytest
from playwright.sync_api import expect

from annotator.models import AnnotationRevision
from exports.export import export_start
from exports.models import Export
from jobs.services import job_run
from tests.browser.accessibility import axe_violations, describe
from tests.explications import PRED

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def export(gold_round, admin_user, settings, tmp_path):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"
    job = export_start(user=admin_user, round_=gold_round, verify=False, enqueue=False)
    job_run(job.pk)
    return Export.objects.get(job_id=job.pk)


def test_an_admin_replays_an_export_and_sees_the_differences(page, live_server, login, export):
    login("dana", "dana-pw")
    page.click("nav >> text=Exports")
    page.wait_for_load_state()
    page.click(f"#replay-{export.pk}")
    verdict = page.locator("#replay-result #replay-verdict")
    expect(verdict).to_contain_text("identical")
    expect(page.locator("#replay-result")).to_contain_text(export.sha256)

    other = "no" if PRED["body"] == "yes" else "yes"
    AnnotationRevision.objects.filter(annotation__assignment__item__source_id="t4-0").update(
        slots={**PRED, "body": other}
    )
    page.click(f"#replay-{export.pk}")
    expect(verdict).to_contain_text("differs")
    row = page.locator("#replay-differences tbody tr", has_text="test:t4-0").filter(has_text="explication")
    expect(row.first).to_contain_text("body")
    violations = axe_violations(page)  # the history with its replay buttons and the result's table
    assert not violations, describe(violations)

    page.click(f"#export-table a[href='/exports/{export.pk}/']")
    page.wait_for_load_state()
    expect(page.locator("#recipe-rounds")).to_contain_text("prefilled")
    expect(page.locator("#export-recipe")).to_contain_text("version 1, 13 rules")
    violations = axe_violations(page)
    assert not violations, describe(violations)
