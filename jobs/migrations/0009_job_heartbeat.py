"""A running job's heartbeat and the run that holds it (jobs.heartbeat): a job whose worker died
is seen stalled, and resumed, within seconds."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0008_export_kind"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="heartbeat_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="job",
            name="runner",
            field=models.CharField(
                blank=True,
                help_text="the run that holds the job: host/pid/token (empty: none)",
                max_length=100,
            ),
        ),
    ]
