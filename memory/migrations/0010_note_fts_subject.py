"""The notes full-text index gains a `subject_id` column (SQLite), so MATCH narrows to one subject.

The FTS5 table and its triggers are dropped, created with the columns of schema.FTS_TABLES and
re-filled from memory_note. PostgreSQL needs nothing: its GIN index is over the note text and
the subject filter uses the subject index.
"""

from django.db import migrations

from memory.search import schema

TABLES = ("memory_note",)

# the layout before this migration, for going back
OLD_SQLITE = [
    "CREATE VIRTUAL TABLE memory_note_fts USING fts5(content, tags, content='memory_note', "
    "content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE TRIGGER memory_note_fts_ai AFTER INSERT ON memory_note BEGIN "
    "INSERT INTO memory_note_fts(rowid, content, tags) VALUES (new.id, new.content, new.tags); END",
    "CREATE TRIGGER memory_note_fts_ad AFTER DELETE ON memory_note BEGIN "
    "INSERT INTO memory_note_fts(memory_note_fts, rowid, content, tags) "
    "VALUES ('delete', old.id, old.content, old.tags); END",
    "CREATE TRIGGER memory_note_fts_au AFTER UPDATE OF content, tags ON memory_note BEGIN "
    "INSERT INTO memory_note_fts(memory_note_fts, rowid, content, tags) "
    "VALUES ('delete', old.id, old.content, old.tags); "
    "INSERT INTO memory_note_fts(rowid, content, tags) VALUES (new.id, new.content, new.tags); END",
]


def _rebuild(cursor) -> None:
    cursor.execute("INSERT INTO memory_note_fts(memory_note_fts) VALUES ('rebuild')")


def forwards(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "sqlite":
        return
    schema.uninstall(connection, TABLES)
    schema.install(connection, TABLES)
    with connection.cursor() as cursor:
        _rebuild(cursor)


def backwards(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "sqlite":
        return
    schema.uninstall(connection, TABLES)
    with connection.cursor() as cursor:
        for sql in OLD_SQLITE:
            cursor.execute(sql)
        _rebuild(cursor)


class Migration(migrations.Migration):
    dependencies = [("memory", "0009_embeddings")]

    operations = [migrations.RunPython(forwards, backwards)]
