from django.db import migrations

from memory.search import schema


def forwards(apps, schema_editor):
    schema.install(schema_editor.connection)


def backwards(apps, schema_editor):
    schema.uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial")]

    operations = [migrations.RunPython(forwards, backwards)]
