"""The per-address quota (issue 21, item 7): on by default for challenges created from now on, off for the
challenges that exist, whose participants entered under the old rules (a lab behind one address would
otherwise lose its teams' quotas mid-challenge); their organizers can turn it on."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("challenges", "0008_task_kind_registered"),
    ]

    operations = [
        # existing rows get False; the AlterField below makes True the default of new challenges
        migrations.AddField(
            model_name="challenge",
            name="quota_per_address",
            field=models.BooleanField(default=False),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="challenge",
            name="quota_per_address",
            field=models.BooleanField(
                default=True,
                help_text="Submissions of every team from one network address share one team's limits.",
            ),
        ),
    ]
