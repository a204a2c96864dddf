"""pgvector on PostgreSQL, where the server has it (memory/search/vectors/index.py).

Created here, in the migration's transaction, instead of on first use: a first use inside a
request (or a test) that rolls back would take the extension with it, and a process that saw
it created would then write to a type that no longer exists. A server without pgvector, or a
role that may not create it, leaves vector search brute force, as before. SQLite: nothing."""

from django.db import migrations

CREATE = """
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
        CREATE EXTENSION IF NOT EXISTS vector;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'pgvector is available but this role may not create it: vector search stays brute force';
END
$$;
"""


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


class Migration(migrations.Migration):
    dependencies = [("memory", "0021_admin_keys_metrics")]

    operations = [migrations.RunPython(create, migrations.RunPython.noop, elidable=False)]
