"""Exports of a second kind share the history: a round's raw annotations (jobs.raw_export) beside
the EmoExpl gold archive. Every existing row is a gold archive."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0007_job_engine"),
    ]

    operations = [
        migrations.AddField(
            model_name="export",
            name="kind",
            field=models.CharField(
                choices=[("emoexpl", "EmoExpl gold archive"), ("raw", "raw annotations")],
                default="emoexpl",
                max_length=16,
            ),
        ),
    ]
