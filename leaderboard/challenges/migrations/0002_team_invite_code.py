import secrets

from django.db import migrations, models

import leaderboard.challenges.models


def fill_codes(apps, schema_editor):
    Team = apps.get_model("challenges", "Team")
    for team in Team.objects.filter(invite_code__isnull=True):
        team.invite_code = secrets.token_urlsafe(12)
        team.save(update_fields=["invite_code"])


class Migration(migrations.Migration):
    dependencies = [("challenges", "0001_initial")]

    operations = [
        # Three steps, so existing teams each get their own code before the column becomes unique.
        migrations.AddField(
            model_name="team",
            name="invite_code",
            field=models.CharField(max_length=32, null=True, editable=False),
        ),
        migrations.RunPython(fill_codes, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="team",
            name="invite_code",
            field=models.CharField(
                default=leaderboard.challenges.models.new_invite_code,
                editable=False,
                max_length=32,
                unique=True,
            ),
        ),
    ]
