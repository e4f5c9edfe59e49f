"""VerifiedLines becomes one row per gold construal (read in the export's own query, in order)
holding each line's probabilities only. It is a cache: the old table is dropped and the next
export rebuilds the rows from LineVerification."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("adjudication", "0003_agreement_snapshot"),
        ("jobs", "0004_verified_lines"),
    ]

    operations = [
        migrations.DeleteModel(name="VerifiedLines"),
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
                        help_text="sha256 of the premise the lines were checked against", max_length=64
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
                    models.TextField(help_text="each line's probabilities as exported, joined by U+001E"),
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
                "constraints": [
                    models.UniqueConstraint(
                        fields=("construal", "model", "threshold"), name="verified_lines_unique"
                    )
                ],
            },
        ),
    ]
