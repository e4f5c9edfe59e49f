"""Export and VerifiedLines now live in the exports app (same tables): jobs forgets them in
Django's state only, after exports has taken them over."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0009_job_heartbeat"),
        ("exports", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="verifiedlines", name="construal"),
                migrations.DeleteModel(name="Export"),
                migrations.DeleteModel(name="VerifiedLines"),
            ],
            database_operations=[],
        ),
    ]
