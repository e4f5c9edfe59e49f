"""Export and VerifiedLines move here from jobs, keeping their tables (jobs_export,
jobs_verifiedlines): a change of the models' home in Django's state only, nothing in the database."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("adjudication", "0005_gold_change_why_text"),
        ("annotator", "0006_hashed_api_tokens"),
        ("jobs", "0009_job_heartbeat"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Export",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "kind",
                            models.CharField(
                                choices=[("emoexpl", "EmoExpl gold archive"), ("raw", "raw annotations")],
                                default="emoexpl",
                                max_length=16,
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("filename", models.CharField(max_length=200)),
                        ("bytes", models.PositiveBigIntegerField()),
                        ("sha256", models.CharField(help_text="of the archive", max_length=64)),
                        ("jsonl_sha256", models.CharField(max_length=64)),
                        ("records", models.PositiveIntegerField()),
                        ("lines", models.PositiveIntegerField(default=0)),
                        (
                            "verifier",
                            models.CharField(
                                blank=True, help_text="model @ revision; empty: not verified", max_length=400
                            ),
                        ),
                        ("rule_set_version", models.CharField(max_length=32)),
                        ("manifest", models.JSONField()),
                        (
                            "created_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "job",
                            models.OneToOneField(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="export",
                                to="jobs.job",
                            ),
                        ),
                        (
                            "round",
                            models.ForeignKey(
                                blank=True,
                                help_text="empty: the whole gold corpus",
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="exports",
                                to="annotator.round",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "jobs_export",
                        "ordering": ["-created_at", "-id"],
                    },
                ),
                migrations.CreateModel(
                    name="VerifiedLines",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("model", models.CharField(help_text="model id @ revision", max_length=300)),
                        ("threshold", models.FloatField()),
                        (
                            "text_sha",
                            models.CharField(
                                help_text="sha256 of the premise the lines were checked against",
                                max_length=64,
                            ),
                        ),
                        (
                            "slots_key",
                            models.CharField(
                                help_text="sha256 of the explication and its rendered lines", max_length=64
                            ),
                        ),
                        (
                            "scores",
                            models.TextField(
                                help_text="each line's probabilities as exported, joined by U+001E"
                            ),
                        ),
                        ("scored", models.PositiveSmallIntegerField()),
                        ("entailed", models.PositiveSmallIntegerField()),
                        (
                            "construal",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="verified_lines",
                                to="adjudication.goldconstrual",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "jobs_verifiedlines",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("construal", "model", "threshold"), name="verified_lines_unique"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
