"""An admin starts an EmoExpl export in the browser, watches its progress bar, and downloads the
archive, with a real Celery worker process verifying the lines with a tiny NLI model on the way."""

import json
import zipfile

import pytest
from playwright.sync_api import expect

from adjudication.gold.services import gold_sync
from annotator.imports import items_import
from annotator.model_output import pass_import
from annotator.models import Item, Round
from annotator.sampling import item_set_from_items
from annotator.services import round_create
from exports.models import Export
from jobs.models import Job
from nsmcore.tiny import build_tiny_nli
from tests.browser.job_page import wait_until_done
from tests.explications import PRED

pytestmark = pytest.mark.django_db(transaction=True)
N_ITEMS = 300


@pytest.fixture
def model_path(tmp_path):
    return str(build_tiny_nli(tmp_path / "nli", labels=("neutral", "entailment", "contradiction")))


@pytest.fixture
def worker_env(tmp_path, settings, model_path):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"  # the page serves downloads from where the worker writes
    settings.NSM_VERIFIER_MODEL = model_path
    return {
        "NSM_EXPORT_DIR": str(settings.NSM_EXPORT_DIR),
        "NSM_EXPORT_BATCH_SIZE": "5",
        "NSM_VERIFIER_DEVICE": "cpu",
    }


@pytest.fixture
def gold(db):
    """A silver round whose two passes agree on every item: all of it is gold."""
    rows = [
        json.dumps(
            {"text_id": f"g{i}", "emotion": "pride", "text": f"I was proud when I won race {i} at school."}
        )
        for i in range(N_ITEMS)
    ]
    items_import(data="\n".join(rows), fmt="jsonl", source="browser")
    item_set = item_set_from_items(name="gold-set", items=list(Item.objects.filter(source="browser")))
    round_ = round_create(name="gold-run", item_set=item_set, annotators=[], pass_kind=Round.PassKind.SILVER)
    annotations = "\n".join(json.dumps({"text_id": f"g{i}", **PRED}) for i in range(N_ITEMS))
    for name in ("pass-a", "pass-b"):
        pass_import(data=annotations, round_=round_, annotator_name=name, source="browser")
    assert gold_sync(round_) == N_ITEMS
    return round_


def test_an_admin_exports_the_gold_watches_it_and_downloads_the_archive(
    page, live_server, login, admin_user, gold, worker, model_path
):
    login("dana", "dana-pw")
    page.click("nav >> text=Exports")
    expect(page.locator("#export-table")).to_contain_text("No export yet.")
    page.select_option("select[name=round]", label="gold-run")
    expect(page.locator("input[name=verify]")).to_be_checked()
    page.fill("input[name=model]", model_path)
    page.click("#export-form button[type=submit]")

    job = Job.objects.get(kind="export")
    expect(page).to_have_url(f"{live_server.url}/jobs/{job.pk}/")
    bar = page.locator("#job-progress")
    seen = wait_until_done(page)
    expect(bar).to_have_attribute("value", str(N_ITEMS))
    assert any(value < N_ITEMS for value, _ in seen), (
        f"the bar was seen before it was full: {sorted(seen)[:5]}"
    )

    with page.expect_download() as info:
        page.click("#export-download")
    download = info.value
    export = Export.objects.get(job=job)
    assert download.suggested_filename == export.filename
    with zipfile.ZipFile(download.path()) as zf:
        records = zf.read("emoexpl.jsonl").decode().splitlines()
        manifest = json.loads(zf.read("manifest.json"))
    assert len(records) == N_ITEMS and manifest["verifier"]["model"] == model_path
    line = json.loads(records[0])["construals"][0]["lines"][0]
    assert 0 <= line["p_entailment"] <= 1 and line["entailed"] == (line["p_entailment"] >= 0.5)

    page.click("nav >> text=Exports")
    expect(page.locator("#export-table")).to_contain_text(export.filename)
    expect(page.locator("#export-table")).to_contain_text("dana")


def test_without_a_usable_model_an_admin_exports_unverified_and_finds_the_job_in_the_list(
    page, live_server, login, admin_user, gold, worker, settings
):
    settings.NSM_VERIFIER_MODEL = "nobody/no-such-nli-model"  # a hub name this machine has not cached
    settings.NSM_VERIFIER_DOWNLOAD = False
    login("dana", "dana-pw")
    page.click("nav >> text=Exports")
    expect(page.locator("#export-verify-off")).to_contain_text("NSM_VERIFIER_MODEL=nobody/no-such-nli-model")
    box = page.locator("input[name=verify]")
    expect(box).to_be_enabled()  # a model given under Model would verify
    expect(box).not_to_be_checked()
    page.select_option("select[name=round]", label="gold-run")
    page.click("#export-form button[type=submit]")

    job = Job.objects.get(kind="export")
    expect(page).to_have_url(f"{live_server.url}/jobs/{job.pk}/")
    wait_until_done(page)
    expect(page.locator("#job-status")).to_contain_text("Lines exported without verification.")
    assert Export.objects.get(job=job).verifier == ""

    page.click("text=← All jobs")
    row = page.locator(f"#job-{job.pk}")
    expect(row).to_contain_text("EmoExpl export")
    expect(row).to_contain_text("without verification")
    expect(row).to_contain_text("done")
    # the jobs page's verify form stays open (a model given there is used) and names the setting
    page.click("#start-verify summary")
    expect(page.locator("#verify-off")).to_contain_text("NSM_VERIFIER_MODEL=nobody/no-such-nli-model")
    expect(page.locator("#verify-form button[type=submit]")).to_be_enabled()
