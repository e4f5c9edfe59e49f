"""An admin ticks "Also write a Hugging Face datasets folder" on the Exports page, a real worker
process writes the archive and the zipped folder beside it, and the admin downloads the folder
from the job's page and finds it in the history."""

import zipfile

import pytest
import yaml
from playwright.sync_api import expect

from exports.models import Export
from jobs.models import Job
from tests.browser.job_page import wait_until_done

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def worker_env(tmp_path, settings):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"  # the page serves downloads from where the worker writes
    return {"NSM_EXPORT_DIR": str(settings.NSM_EXPORT_DIR)}


def test_an_admin_exports_with_a_datasets_folder_and_downloads_it(
    page, live_server, login, admin_user, gold_round, worker
):
    login("dana", "dana-pw")
    page.click("nav >> text=Exports")
    page.wait_for_load_state()
    page.select_option("select[name=round]", label="prefilled")
    page.uncheck("input[name=verify]")
    box = page.get_by_label("Also write a Hugging Face datasets folder")
    expect(box).not_to_be_checked()
    box.check()
    page.click("#export-form button[type=submit]")

    job = Job.objects.get(kind="export")
    expect(page).to_have_url(f"{live_server.url}/jobs/{job.pk}/")
    wait_until_done(page)
    export = Export.objects.get(job=job)
    link = page.locator(f"#export-hf-{export.pk}")
    expect(link).to_have_text("Hugging Face datasets folder")
    with page.expect_download() as info:
        link.click()
    download = info.value
    assert download.suggested_filename == export.path.stem + "-hf.zip"
    with zipfile.ZipFile(download.path()) as zf:
        assert zf.namelist() == ["README.md", "gold/train.jsonl", "raw/train.jsonl"]
        card = zf.read("README.md").decode()
        assert len(zf.read("gold/train.jsonl").decode().splitlines()) == 4
    meta = yaml.safe_load(card.removeprefix("---\n").partition("\n---\n")[0])
    assert [c["config_name"] for c in meta["configs"]] == ["gold", "raw"]

    page.click("nav >> text=Exports")
    page.wait_for_load_state()
    expect(page.locator("#export-table")).to_contain_text("Hugging Face datasets folder")
