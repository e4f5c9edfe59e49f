"""LineVerification now lives in the verification app (same table): jobs forgets it in Django's
state only, after verification has taken it over."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0005_verified_lines_per_construal"),
        ("verification", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="LineVerification")],
            database_operations=[],
        ),
    ]
