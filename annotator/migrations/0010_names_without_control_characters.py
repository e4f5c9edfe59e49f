"""Round and item set names refuse control characters in every form, the Django admin's too (a
validator only: nothing changes in the database)."""

from django.db import migrations, models

import annotator.models


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0009_assignment_control"),
    ]

    operations = [
        migrations.AlterField(
            model_name="itemset",
            name="name",
            field=models.CharField(max_length=100, unique=True, validators=[annotator.models.printable_name]),
        ),
        migrations.AlterField(
            model_name="round",
            name="name",
            field=models.CharField(max_length=100, unique=True, validators=[annotator.models.printable_name]),
        ),
    ]
