"""The adopted models' tables take the memory app's names (rows kept; the foreign keys that
point at them follow the rename), and a job run can be queued ("consolidate now" answers with
its id before a worker takes it) or skipped (another run of its key was in progress)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0012_adopt_conversations_and_jobs"),
        ("chat", "0005_conversations_move_to_memory"),
        ("consolidation", "0002_jobrun_moves_to_memory"),
    ]

    operations = [
        migrations.AlterModelTable(name="conversation", table=None),
        migrations.AlterModelTable(name="message", table=None),
        migrations.AlterModelTable(name="jobrun", table=None),
        migrations.AlterField(
            model_name="jobrun",
            name="status",
            field=models.CharField(
                choices=[
                    ("queued", "Queued"),
                    ("running", "Running"),
                    ("done", "Done"),
                    ("failed", "Failed"),
                    ("abandoned", "Abandoned"),
                    ("skipped", "Skipped"),
                ],
                default="running",
                max_length=12,
            ),
        ),
    ]
