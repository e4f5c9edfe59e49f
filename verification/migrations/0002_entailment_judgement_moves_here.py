"""EntailmentJudgement moves here from adjudication, keeping its table
(adjudication_entailmentjudgement), its constraint and its index: a change of the model's home in
Django's state only, nothing in the database."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("verification", "0001_initial"),
        ("adjudication", "0005_gold_change_why_text"),
        ("annotator", "0009_assignment_control"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="EntailmentJudgement",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("text_field", models.CharField(max_length=16)),
                        (
                            "text_sha",
                            models.CharField(
                                help_text="sha256 of the text read, as the verifier caches it", max_length=64
                            ),
                        ),
                        ("slot", models.CharField(max_length=32)),
                        ("value", models.CharField(max_length=32)),
                        ("line", models.CharField(max_length=300)),
                        ("entailed", models.BooleanField()),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "item",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="annotator.item",
                            ),
                        ),
                        (
                            "judge",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "adjudication_entailmentjudgement",
                        "indexes": [models.Index(fields=["text_sha", "line"], name="judgement_pair_idx")],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("item", "text_field", "line", "judge"), name="judgement_one_per_judge"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
