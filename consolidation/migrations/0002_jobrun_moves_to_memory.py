"""JobRun now belongs to the memory core (state only: memory 0012 adopted its table)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("consolidation", "0001_initial"),
        ("memory", "0012_adopt_conversations_and_jobs"),
    ]

    operations = [migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel(name="JobRun")])]
