"""A context build no longer carries a cache-hit flag: nothing ever set it, there is no cache yet."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0013_conversation_tables'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='retrievalevent',
            name='from_cache',
        ),
    ]
