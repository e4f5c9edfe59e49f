"""The Exports page's two start forms side by side: each with ids of its own, every control labelled."""

from __future__ import annotations

import pytest

from tests.jobs.test_job_pages import id_problems


@pytest.fixture(autouse=True)
def _export_dir(settings, tmp_path):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"


def test_the_export_forms_have_ids_of_their_own_and_label_every_control(client, admin_user, gold_round):
    """Both forms name a round: with Django's default ids both were id_round, and the raw export's
    label focused the gold export's select."""
    client.force_login(admin_user)
    page = client.get("/exports/").content.decode()
    assert 'id="export-form"' in page and 'id="raw-export-form"' in page
    assert id_problems(page) == []
    # a refused form, shown again with a 400, keeps its ids apart from the other form's
    for url, data in (("/exports/", {"round": "0"}), ("/exports/raw/", {"round": "0"})):
        response = client.post(url, data)
        assert response.status_code == 400, url
        assert id_problems(response.content.decode()) == [], url
