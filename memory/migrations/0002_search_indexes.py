from django.db import migrations

from memory.search import schema

# the tables this migration indexed when it was written; later ones come with their own migration
TABLES = ("memory_note", "memory_profilefact")


def forwards(apps, schema_editor):
    schema.install(schema_editor.connection, TABLES)


def backwards(apps, schema_editor):
    schema.uninstall(schema_editor.connection, TABLES)


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial")]

    operations = [migrations.RunPython(forwards, backwards)]
