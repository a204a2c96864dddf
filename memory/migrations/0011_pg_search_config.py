"""PostgreSQL: full text under the `memoryweb` text search configuration (Porter, no stop words),
and the notes' tsvector as a stored generated column.

The four GIN indexes are dropped and created over the new expressions (schema.PG_VECTORS; for
notes over the column `search_vector`, schema.PG_STORED); schema.install creates the
configuration first. SQLite needs nothing: FTS5 already uses porter.
"""

from django.db import migrations

from memory.search import schema

# the tables indexed at this point (a later index is installed by its own migration)
TABLES = ("memory_note", "memory_profilefact", "memory_lesson", "memory_procedure")

# the expressions before this migration, for going back
OLD_POSTGRES = {
    "memory_note": "to_tsvector('english', content || ' ' || tags::text)",
    "memory_profilefact": "to_tsvector('english', key || ' ' || value || ' ' || keywords::text)",
    "memory_lesson": "to_tsvector('english', text || ' ' || tags::text)",
    "memory_procedure": "to_tsvector('english', title || ' ' || steps::text)",
}


def forwards(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    schema.uninstall(connection, TABLES)
    schema.install(connection, TABLES)


def backwards(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    schema.uninstall(connection, TABLES)
    with connection.cursor() as cursor:
        for table, expression in OLD_POSTGRES.items():
            cursor.execute(f"CREATE INDEX IF NOT EXISTS {table}_fts ON {table} USING GIN ({expression})")


class Migration(migrations.Migration):
    dependencies = [("memory", "0010_note_fts_subject")]

    operations = [migrations.RunPython(forwards, backwards)]
