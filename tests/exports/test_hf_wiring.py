"""The Hugging Face datasets folder in the browser, the API and the shell: the export's checkbox
writes a zip beside the archive that the page and the API give (admins only); ``export_corpus
--hf-folder`` writes the folder, ``--push-to-hub`` uploads it with the token from HF_TOKEN (a mocked
HfApi: tests never push); bad options exit 2 before anything is written; a failed folder leaves
no archive and no history row."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import datasets
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from exports import hf
from exports.export import export_start
from exports.models import Export
from jobs.models import Job
from jobs.services import job_run

HF_LABEL = "Also write a Hugging Face datasets folder"


@pytest.fixture(autouse=True)
def _export_dir(settings, tmp_path):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"


def load(folder: Path, cache_dir: Path, config: str = "gold") -> datasets.DatasetDict:
    return datasets.load_dataset(str(folder), config, cache_dir=str(cache_dir))


def test_the_page_starts_an_export_with_the_folder_and_gives_its_zip(
    client, gold_round, admin_user, annotator, outsider, django_capture_on_commit_callbacks, tmp_path
):
    client.force_login(admin_user)
    page = client.get("/exports/").content.decode()
    assert HF_LABEL in page and 'name="hf"' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/exports/", {"round": gold_round.pk, "model": "", "hf": "on"})
    assert response.status_code == 302
    job = Job.objects.get()
    assert job.params["hf"] is True and job.status == "done", job.error
    export = Export.objects.get(job=job)
    zipped = export.path.with_name(export.path.stem + "-hf.zip")
    assert export.hf_path == zipped and zipped.is_file()

    detail = client.get(response["Location"]).content.decode()
    link = reverse("export_hf_download", args=[export.pk])
    assert f'id="export-hf-{export.pk}" href="{link}"' in detail
    listing = client.get("/exports/").content.decode()
    assert f'href="{link}"' in listing and "Hugging Face datasets folder" in listing

    download = client.get(link)
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"
    assert download["Content-Disposition"] == f'attachment; filename="{zipped.name}"'
    body = b"".join(download.streaming_content)
    assert body == zipped.read_bytes()
    folder = tmp_path / "unzipped"
    zipfile.ZipFile(io.BytesIO(body)).extractall(folder)
    gold = load(folder, tmp_path / "cache")
    assert gold["train"].num_rows == export.records == 4

    api = client.get(reverse("api_exports")).json()["results"][0]
    assert api["hf_download"] == f"http://testserver/api/exports/{export.pk}/hf.zip"
    by_api = client.get(api["hf_download"], HTTP_ACCEPT="application/json")
    assert by_api.status_code == 200 and b"".join(by_api.streaming_content) == body

    for user in (annotator, outsider):
        client.force_login(user)
        assert client.get(link).status_code == 403
        assert client.get(reverse("api_export_hf", args=[export.pk])).status_code == 403


def test_an_export_without_the_folder_has_no_zip(client, gold_round, admin_user):
    job = export_start(user=admin_user, round_=gold_round, verify=False, enqueue=False)
    assert "hf" not in job.params  # stored only when asked for
    job_run(job.pk)
    export = Export.objects.get()
    assert not export.hf_path.exists()
    client.force_login(admin_user)
    assert "export-hf-" not in client.get("/exports/").content.decode()
    assert client.get(reverse("api_exports")).json()["results"][0]["hf_download"] is None
    page = client.get(reverse("export_hf_download", args=[export.pk]))
    assert page.status_code == 404
    by_api = client.get(reverse("api_export_hf", args=[export.pk]))
    assert by_api.status_code == 404 and "no Hugging Face datasets folder" in by_api.json()["detail"]
    assert client.get(reverse("api_export_hf", args=[999_999])).status_code == 404


def test_the_api_starts_an_export_with_the_folder(client, gold_round, admin_user):
    client.force_login(admin_user)
    body = {"round": gold_round.pk, "verify": False, "hf": True}
    response = client.post(reverse("api_job_export"), body, content_type="application/json")
    assert response.status_code == 201, response.content
    job = Job.objects.get(pk=response.json()["id"])
    assert job.params == {"verify": False, "model": "", "hf": True}
    job_run(job.pk)
    assert Export.objects.get(job=job).hf_path.is_file()
    bad = client.post(reverse("api_job_export"), {**body, "hf": "maybe"}, content_type="application/json")
    assert bad.status_code == 400 and "hf" in bad.json()


def test_a_folder_that_cannot_be_written_leaves_no_archive_and_no_history(
    gold_round, admin_user, monkeypatch, settings
):
    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(hf, "hf_folder_fill", broken)
    job = export_start(user=admin_user, round_=gold_round, verify=False, hf=True, enqueue=False)
    with pytest.raises(OSError):
        job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "disk full" in job.error
    assert not Export.objects.exists()
    assert list(Path(settings.NSM_EXPORT_DIR).iterdir()) == []  # the archive went with the folder


@pytest.mark.django_db(transaction=True)  # the command runs the job in a thread, on its own connection
def test_the_command_writes_the_folder_and_pushes_it_with_the_token(gold_round, tmp_path, monkeypatch):
    out = io.StringIO()
    folder = tmp_path / "emoexpl-hf"
    call_command(
        "export_corpus", "--round", gold_round.name, "--no-verify", "--hf-folder", str(folder), stdout=out
    )
    assert f"Hugging Face datasets folder in {folder} (gold/train 4, raw/train 8)" in out.getvalue()
    assert load(folder, tmp_path / "cache")["train"].num_rows == 4
    assert "license: other" in (folder / "README.md").read_text()

    calls: list[tuple] = []

    class FakeApi:
        def __init__(self, token=None):
            calls.append(("init", token))

        def create_repo(self, **kwargs):
            calls.append(("create_repo", kwargs))

        def upload_folder(self, **kwargs):
            uploaded = Path(kwargs["folder_path"])
            files = sorted(p.relative_to(uploaded).as_posix() for p in uploaded.rglob("*") if p.is_file())
            calls.append(("upload_folder", {**kwargs, "files": files}))

    monkeypatch.setattr("huggingface_hub.HfApi", FakeApi)
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    out = io.StringIO()
    call_command(
        "export_corpus", "--round", gold_round.name, "--no-verify", "--push-to-hub", "lab/emoexpl",
        "--license", "cc-by-4.0", "--private", stdout=out,
    )  # fmt: skip
    assert (
        "pushed to https://huggingface.co/datasets/lab/emoexpl (gold/train 4, raw/train 8)" in out.getvalue()
    )
    assert calls[0] == ("init", "hf_secret")
    assert calls[1] == (
        "create_repo",
        {"repo_id": "lab/emoexpl", "repo_type": "dataset", "private": True, "exist_ok": True},
    )
    name, upload = calls[2]
    assert name == "upload_folder" and (upload["repo_id"], upload["repo_type"]) == ("lab/emoexpl", "dataset")
    assert upload["files"] == ["README.md", "gold/train.jsonl", "raw/train.jsonl"]
    assert not Path(upload["folder_path"]).exists()  # a temporary folder, gone after the push


def _refused(*args: str) -> CommandError:
    with pytest.raises(CommandError) as caught:
        call_command("export_corpus", "--no-verify", *args)
    assert caught.value.returncode == 2, caught.value
    return caught.value


def test_bad_options_exit_2_before_anything_is_written(gold_round, tmp_path, monkeypatch):
    afile = tmp_path / "a-file"
    afile.write_text("x")
    assert "a-file is a file, not a folder" in str(_refused("--hf-folder", str(afile)))
    full = tmp_path / "full"
    full.mkdir()
    (full / "mine.txt").write_text("x")
    assert "is not empty" in str(_refused("--hf-folder", str(full)))
    message = str(_refused("--hf-folder", str(tmp_path / "new"), "--format", "xml"))
    assert "unknown format 'xml'; formats: jsonl, parquet" in message
    monkeypatch.setattr(hf, "parquet_available", lambda: False)
    assert "need pyarrow" in str(_refused("--hf-folder", str(tmp_path / "new"), "--format", "parquet"))
    assert "--format goes with --hf-folder or --push-to-hub" in str(_refused("--format", "jsonl"))
    assert "licence 'CC BY'" in str(_refused("--hf-folder", str(tmp_path / "new"), "--license", "CC BY"))
    assert "leave out --background" in str(_refused("--hf-folder", str(tmp_path / "new"), "--background"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert "set HF_TOKEN" in str(_refused("--push-to-hub", "lab/emoexpl"))
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    assert "'not a repo' is not a Hub repository id" in str(_refused("--push-to-hub", "not a repo"))
    assert not Job.objects.exists() and not Export.objects.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "full"]
