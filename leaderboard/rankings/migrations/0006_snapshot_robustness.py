# Issue 23: how stable each board's ranking is, computed at rebuild.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("rankings", "0005_snapshot_rows_upgraded")]

    operations = [
        migrations.AddField(
            model_name="boardsnapshot",
            name="robustness",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="How stable the ranking is (rankings.board.build_robustness): rank frequencies with "
                "median and interval, the blob plot and its text, Kendall's tau-b of the bootstrap rankings, "
                "the ranking schemes.",
            ),
        ),
    ]
