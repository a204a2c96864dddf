"""Conversation and Message now belong to the memory core (state only: memory 0012 adopted
their tables), and the live-update outbox moves to the infrastructure app (its rows are
transient hints, pruned by age, so the old table is dropped rather than copied)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0004_live_event"),
        ("memory", "0012_adopt_conversations_and_jobs"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="reflectionrun",
                    name="conversation",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="reflections",
                        to="memory.conversation",
                    ),
                ),
                migrations.AlterField(
                    model_name="reflectionrun",
                    name="through_message",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="memory.message"
                    ),
                ),
                migrations.DeleteModel(name="Message"),
                migrations.DeleteModel(name="Conversation"),
            ]
        ),
        migrations.DeleteModel(name="LiveEvent"),
    ]
