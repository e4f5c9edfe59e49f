"""An admin starts a prefill job in the browser and watches its progress bar finish, with a real
Celery worker process on the embedded filesystem broker (the `make run` setup); the train form
shows the fields of the method chosen."""

import json

import pytest
from playwright.sync_api import expect

from annotator.imports import items_import
from annotator.models import Item, ParserPrediction
from annotator.sampling import item_set_from_items
from jobs.models import Job
from tests.browser.job_page import wait_until_done

pytestmark = pytest.mark.django_db(transaction=True)
N_ITEMS = 1500


@pytest.fixture
def big_set(db):
    lines = [
        json.dumps({"text_id": f"b{i}", "emotion": "joy", "text": f"I was so happy when I passed test {i}."})
        for i in range(N_ITEMS)
    ]
    items_import(data="\n".join(lines), fmt="jsonl", source="browser")
    return item_set_from_items(name="big", items=list(Item.objects.filter(source="browser")))


def test_an_admin_starts_a_prefill_and_watches_the_progress_bar_finish(
    page, live_server, login, admin_user, big_set, worker
):
    login("dana", "dana-pw")
    page.click("nav >> text=Jobs")
    page.click("#start-prefill summary")  # each kind's form behind its own disclosure
    page.select_option("#prefill-form select[name=target]", label=f"big ({N_ITEMS} items)")
    page.select_option("#prefill-form select[name=backend]", "lexical")
    page.click("#prefill-form button[type=submit]")

    job = Job.objects.get()
    expect(page).to_have_url(f"{live_server.url}/jobs/{job.pk}/")
    status = page.locator("#job-status")
    first = status.get_attribute("data-status")
    assert first in ("queued", "running"), first  # the page opened on a job still under way
    bar = page.locator("#job-progress")
    expect(bar).to_have_attribute("max", str(N_ITEMS))

    # the page polls every second; record what the bar showed
    seen = {value for value, _ in wait_until_done(page)}
    expect(bar).to_have_attribute("value", str(N_ITEMS))
    expect(page.locator("#job-progress-line")).to_contain_text(f"{N_ITEMS} / {N_ITEMS} items (100%)")
    expect(page.locator("#legality-share")).to_contain_text(
        f"{N_ITEMS} of {N_ITEMS} predictions legal (100%)"
    )
    assert min(seen) < N_ITEMS, "the bar was seen before it was full"
    assert ParserPrediction.objects.filter(job=job).count() == N_ITEMS

    page.click("text=← All jobs")
    expect(page.locator("#job-table")).to_contain_text("done")


def test_the_train_form_shows_the_fields_of_the_method_chosen(page, live_server, login, admin_user):
    login("dana", "dana-pw")
    page.click("nav >> text=Jobs")
    page.click("#start-train summary")
    form = page.locator("#train-form")
    rank, labels_from = form.locator("input[name=rank]"), form.locator("input[name=labels_from]")
    form.locator("select[name=method]").select_option("classifier")
    expect(rank).to_be_hidden()
    expect(form.locator("input[name=base_model]")).to_be_hidden()
    expect(labels_from).to_be_visible()
    form.locator("select[name=method]").select_option("lora")
    expect(rank).to_be_visible()
    expect(labels_from).to_be_hidden()
