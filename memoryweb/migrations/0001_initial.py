"""The infrastructure app's rows: the counters (adopted from the memory app with their rows,
then renamed) and the live-update outbox (new; chat 0005 drops the old one)."""

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("memory", "0012_adopt_conversations_and_jobs"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Counter",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID"),
                        ),
                        ("name", models.CharField(max_length=100, unique=True)),
                        ("value", models.BigIntegerField(default=0)),
                        ("updated_at", models.DateTimeField(default=django.utils.timezone.now)),
                    ],
                    options={"db_table": "memory_counter"},
                )
            ]
        ),
        migrations.AlterModelTable(name="counter", table=None),
        migrations.CreateModel(
            name="LiveEvent",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("subject_id", models.BigIntegerField(blank=True, null=True)),
                ("event", models.CharField(max_length=60)),
                ("payload", models.JSONField(blank=True, default=dict)),
                ("created_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
            ],
        ),
    ]
