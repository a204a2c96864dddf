from django.db import migrations

from memory.search import schema

TABLES = ("memory_lesson", "memory_procedure")


def forwards(apps, schema_editor):
    schema.install(schema_editor.connection, TABLES)


def backwards(apps, schema_editor):
    schema.uninstall(schema_editor.connection, TABLES)


class Migration(migrations.Migration):
    dependencies = [("memory", "0006_lessons_procedures")]

    operations = [migrations.RunPython(forwards, backwards)]
