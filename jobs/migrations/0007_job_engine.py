"""The job's model or parser is its engine, for every kind (a verifier's model was stored in
fields named for the parser); and the kinds are registered by their modules, not listed as choices.
Renames keep every row's value."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0006_lineverification_moves_to_verification"),
    ]

    operations = [
        migrations.RenameField(model_name="job", old_name="parser_name", new_name="engine"),
        migrations.RenameField(model_name="job", old_name="parser_version", new_name="engine_version"),
        migrations.AlterField(
            model_name="job",
            name="engine",
            field=models.CharField(
                blank=True,
                help_text="the model or parser the job ran with (empty: not loaded yet)",
                max_length=300,
            ),
        ),
        migrations.AlterField(
            model_name="job",
            name="engine_version",
            field=models.CharField(blank=True, help_text="its version or revision", max_length=100),
        ),
        migrations.AlterField(
            model_name="job",
            name="kind",
            field=models.CharField(help_text="a registered kind of job (jobs.kinds)", max_length=16),
        ),
        migrations.AlterField(
            model_name="job",
            name="params",
            field=models.JSONField(
                blank=True, default=dict, help_text="the kind's parameters as JSON; read them as typed_params"
            ),
        ),
    ]
