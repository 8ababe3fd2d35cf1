# The rank robustness of a snapshot is built on first read and kept per snapshot, not at every rebuild.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("rankings", "0006_snapshot_robustness")]

    operations = [
        migrations.AlterField(
            model_name="boardsnapshot",
            name="robustness",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="What the test set resolves (rankings.board.build_resolution) and the scores the board "
                "read; the rank robustness itself is built on first read (RobustnessReport). Snapshots written "
                "before that hold the whole robustness here.",
            ),
        ),
        migrations.CreateModel(
            name="RobustnessReport",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("data", models.JSONField(help_text="Everything but the blob plot.")),
                (
                    "svg",
                    models.TextField(
                        blank=True,
                        help_text="The blob plot, drawn on the first read of the page that shows it (the costly "
                        "part); null: not drawn yet, empty: nothing to draw (a board over BLOB_MAX_ENTRIES, or no "
                        "robustness).",
                        null=True,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "snapshot",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="robustness_report",
                        to="rankings.boardsnapshot",
                    ),
                ),
            ],
        ),
    ]
