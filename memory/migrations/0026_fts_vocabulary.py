"""An fts5vocab table beside every FTS5 index (SQLite): the words the index holds, so that a
prefix typed in the dashboard's search can be matched against them (memory.search.lexical:
the porter tokenizer stems a query prefix too, and "kay" stemmed is "kai", a prefix of no
word "kayak"). PostgreSQL needs nothing: its prefix search also asks the `simple`
configuration, which does not stem.
"""

from django.db import migrations

from memory.search import schema


def forwards(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "sqlite":
        return
    # creates what is missing: the vocabulary tables (the index layout of its time: 0028 changed it)
    schema.install(connection, layout=schema.LAYOUT_0027)


def backwards(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        for fts in schema.FTS_TABLES:
            cursor.execute(f"DROP TABLE IF EXISTS {schema.vocabulary_table(fts)}")


class Migration(migrations.Migration):
    dependencies = [("memory", "0025_parked")]

    operations = [migrations.RunPython(forwards, backwards)]
