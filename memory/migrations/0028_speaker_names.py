"""A posted message can carry its speaker's name (`Message.name`), and the evidence unit of a
named turn keeps it (`Evidence.name`) in its full-text index: the index is dropped, the column
added and the index created as schema.FTS_TABLES and PG_VECTORS have it now (SQLite: re-filled
from memory_evidence; PostgreSQL: the stored tsvector recomputed over name and text). Going
back restores the index of 0017 (schema.LAYOUT_0027).

The columns are added in place (ALTER TABLE … ADD COLUMN, as 0025 adds its own): an AddField
of a NOT NULL column would make SQLite rebuild memory_message and memory_evidence.
"""

from django.db import migrations, models

from memory.search import schema

TABLES = ("memory_evidence",)
NAME = "varchar(64) NOT NULL DEFAULT ''"

def _refill(connection) -> None:
    """SQLite: fill the new FTS5 table from memory_evidence (PostgreSQL computed its generated
    column when it was added)."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO memory_evidence_fts(memory_evidence_fts) VALUES ('rebuild')")


def forwards(apps, schema_editor):
    connection = schema_editor.connection
    schema.uninstall(connection, TABLES)
    schema_editor.execute(f"ALTER TABLE memory_message ADD COLUMN name {NAME}")
    schema_editor.execute(f"ALTER TABLE memory_evidence ADD COLUMN name {NAME}")
    schema.install(connection, TABLES)
    _refill(connection)


def backwards(apps, schema_editor):
    connection = schema_editor.connection
    schema.uninstall(connection, TABLES)
    schema_editor.execute("ALTER TABLE memory_message DROP COLUMN name")
    schema_editor.execute("ALTER TABLE memory_evidence DROP COLUMN name")
    schema.install(connection, TABLES, schema.LAYOUT_0027)
    _refill(connection)


class Migration(migrations.Migration):
    dependencies = [("memory", "0027_parked_distilled")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forwards, backwards)],
            state_operations=[
                migrations.AddField(
                    model_name="message",
                    name="name",
                    field=models.CharField(blank=True, default="", max_length=64),
                ),
                migrations.AddField(
                    model_name="evidence",
                    name="name",
                    field=models.CharField(blank=True, default="", help_text="The message's.", max_length=64),
                ),
            ],
        ),
    ]
