"""LineVerification moves here from jobs, keeping its table (jobs_lineverification): a change of
the model's home in Django's state only, nothing in the database."""

from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("jobs", "0005_verified_lines_per_construal"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="LineVerification",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("model", models.CharField(help_text="model id @ revision", max_length=300)),
                        ("text_sha", models.CharField(max_length=64)),
                        ("line", models.CharField(max_length=300)),
                        ("p_entailment", models.FloatField()),
                        ("p_neutral", models.FloatField(blank=True, null=True)),
                        ("p_contradiction", models.FloatField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        "db_table": "jobs_lineverification",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("model", "text_sha", "line"), name="verification_unique_pair"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
