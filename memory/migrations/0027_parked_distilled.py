"""Lessons and procedures can be parked by the person too (`parked_at`), as notes and facts
are since 0025: kept, never in any context.

The columns are added in place (ALTER TABLE … ADD COLUMN), as 0025 adds them: an AddField
would make SQLite rebuild memory_lesson and memory_procedure, and with them drop their
full-text triggers.
"""

from django.db import migrations, models

HELP = "Parked by the person: kept, never in any context or search."
TABLES = ("memory_lesson", "memory_procedure")


def _add(apps, schema_editor):
    kind = "timestamp with time zone" if schema_editor.connection.vendor == "postgresql" else "datetime"
    for table in TABLES:
        schema_editor.execute(f"ALTER TABLE {table} ADD COLUMN parked_at {kind} NULL")


def _drop(apps, schema_editor):
    for table in TABLES:
        schema_editor.execute(f"ALTER TABLE {table} DROP COLUMN parked_at")


class Migration(migrations.Migration):
    dependencies = [("memory", "0026_fts_vocabulary")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(_add, _drop)],
            state_operations=[
                migrations.AddField(
                    model_name="lesson",
                    name="parked_at",
                    field=models.DateTimeField(blank=True, null=True, help_text=HELP),
                ),
                migrations.AddField(
                    model_name="procedure",
                    name="parked_at",
                    field=models.DateTimeField(blank=True, null=True, help_text=HELP),
                ),
            ],
        ),
    ]
