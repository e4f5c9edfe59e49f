"""EntailmentJudgement now lives in the verification app (same table): adjudication forgets it in
Django's state only, after verification has taken it over."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("adjudication", "0005_gold_change_why_text"),
        ("verification", "0002_entailment_judgement_moves_here"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="EntailmentJudgement")],
            database_operations=[],
        ),
    ]
