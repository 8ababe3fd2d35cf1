"""Issue 11: a task's positive class and class-stratified resampling.

Tasks that exist already keep the resampling their stored scores were computed with ("none"): a board
pairs the replicates of its entries, so one task's scores must all come from one resample matrix. New
tasks default to "auto" (stratified by class for class-based metrics).
"""

from django.db import migrations, models

STRATIFY_CHOICES = [
    ("auto", "By true class for class-based metrics (ROC AUC, AP, kappa, macro averages)"),
    ("class", "By true class for every classification metric"),
    ("none", "Not stratified"),
]
STRATIFY_HELP = "Resample within each true class, so every resample keeps every class (issue 11)."


class Migration(migrations.Migration):
    dependencies = [("challenges", "0002_team_invite_code")]

    operations = [
        migrations.AddField(
            model_name="task",
            name="positive_label",
            field=models.CharField(
                blank=True,
                help_text="The positive class of a binary-score metric (ROC AUC, AP, log loss, Brier); empty: "
                "the second label in sorted order.",
                max_length=200,
            ),
        ),
        migrations.AddField(
            model_name="task",
            name="stratify",
            field=models.CharField(
                choices=STRATIFY_CHOICES, default="none", help_text=STRATIFY_HELP, max_length=8
            ),
        ),
        migrations.AlterField(
            model_name="task",
            name="stratify",
            field=models.CharField(
                choices=STRATIFY_CHOICES, default="auto", help_text=STRATIFY_HELP, max_length=8
            ),
        ),
    ]
