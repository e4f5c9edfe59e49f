"""Record the packaged default rule set (settings.NSM_RULE_SET) as the first, active version, so
a fresh database and the demo route exactly as before."""

from django.db import migrations


def record_packaged(apps, schema_editor):
    from rules.rulesets import initial_version_fields, packaged_rule_set

    RuleSetVersion = apps.get_model("rules", "RuleSetVersion")
    RuleSetActivation = apps.get_model("rules", "RuleSetActivation")
    if RuleSetVersion.objects.exists():
        return
    row = RuleSetVersion.objects.create(status="active", **initial_version_fields(packaged_rule_set()))
    RuleSetActivation.objects.create(version=row, how="initial")


class Migration(migrations.Migration):
    dependencies = [("rules", "0001_initial")]

    operations = [migrations.RunPython(record_packaged, migrations.RunPython.noop)]
