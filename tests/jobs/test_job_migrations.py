"""Migrations of the jobs app keep every existing row: the rename of a job's parser fields to engine
fields, and the export history's move to the exports app."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = ("jobs", "0006_lineverification_moves_to_verification")
AFTER = ("jobs", "0007_job_engine")


@pytest.mark.django_db(transaction=True)
def test_a_job_row_keeps_its_parser_as_its_engine_across_the_migration():
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    old_apps = executor.loader.project_state([BEFORE]).apps
    OldJob = old_apps.get_model("jobs", "Job")
    old = OldJob.objects.create(
        kind="verify", status="done", scope_key="set:1|gold|m", params={"source": "gold", "model": "m",
        "text_field": "text"}, parser_name="/models/nli", parser_version="rev-7", total=3, done=3,
    )  # fmt: skip

    executor = MigrationExecutor(connection)  # a fresh graph: the one above has 0007 unapplied
    executor.migrate(executor.loader.graph.leaf_nodes())
    new_apps = executor.loader.project_state([AFTER]).apps
    job = new_apps.get_model("jobs", "Job").objects.get(pk=old.pk)
    assert (job.engine, job.engine_version) == ("/models/nli", "rev-7")
    assert (job.kind, job.params["source"], job.done) == ("verify", "gold", 3)
    with connection.cursor() as cursor:
        columns = {c.name for c in connection.introspection.get_table_description(cursor, "jobs_job")}
    assert {"engine", "engine_version"} <= columns and not {"parser_name", "parser_version"} & columns


@pytest.mark.django_db(transaction=True)
def test_an_export_row_moves_to_the_exports_app_with_its_job_and_file():
    """Export leaves jobs for exports in Django's state only: the table and its rows stay."""
    before = ("jobs", "0009_job_heartbeat")
    executor = MigrationExecutor(connection)
    executor.migrate([before, ("exports", None)])
    old_apps = executor.loader.project_state([before]).apps
    job = old_apps.get_model("jobs", "Job").objects.create(kind="export", status="done", scope_key="all")
    old = old_apps.get_model("jobs", "Export").objects.create(
        job=job, filename="emoexpl.zip", bytes=10, sha256="a" * 64, jsonl_sha256="b" * 64, records=2,
        rule_set_version="v1", manifest={"records": 2},
    )  # fmt: skip

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    new_apps = executor.loader.project_state(executor.loader.graph.leaf_nodes()).apps
    export = new_apps.get_model("exports", "Export").objects.get(pk=old.pk)
    assert (export.filename, export.records, export.job_id, export.manifest) == (
        "emoexpl.zip",
        2,
        job.pk,
        {"records": 2},
    )
    with pytest.raises(LookupError):
        new_apps.get_model("jobs", "Export")
