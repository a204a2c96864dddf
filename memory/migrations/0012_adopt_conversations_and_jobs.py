"""Conversations, messages and job runs become the memory core's models (they are its input
records and the leases every periodic job takes); the counters move to the infrastructure app.

State only: the tables stay where they are and keep their rows. Migration 0013 renames them
once chat and consolidation have let go of the models.
"""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


def _fk(to, **kwargs):
    return models.ForeignKey(on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=to, **kwargs)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0011_pg_search_config"),
        ("chat", "0004_live_event"),
        ("consolidation", "0001_initial"),
    ]

    state_operations = [
        migrations.CreateModel(
            name="Conversation",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("external_id", models.CharField(blank=True, default="", max_length=200)),
                ("mode", models.CharField(blank=True, default="", max_length=50)),
                ("scope", models.CharField(blank=True, default="", max_length=200)),
                ("working_dir", models.CharField(blank=True, default="", max_length=500)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("updated_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "subject",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="conversations",
                        to="memory.subject",
                    ),
                ),
            ],
            options={
                "db_table": "chat_conversation",
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("external_id", ""), _negated=True),
                        fields=("subject", "external_id"),
                        name="conversation_external_id_unique",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="Message",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "role",
                    models.CharField(
                        choices=[("user", "User"), ("assistant", "Assistant"), ("system", "System")], max_length=20
                    ),
                ),
                ("text", models.TextField()),
                ("occurred_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("external_id", models.CharField(blank=True, default="", max_length=200)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "conversation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="messages",
                        to="memory.conversation",
                    ),
                ),
            ],
            options={
                "db_table": "chat_message",
                "ordering": ["occurred_at", "id"],
                "indexes": [models.Index(fields=["conversation", "occurred_at"], name="message_timeline")],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("external_id", ""), _negated=True),
                        fields=("conversation", "external_id"),
                        name="message_external_id_unique",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="JobRun",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(help_text='"consolidate", "consolidate_all", "votes_decay"', max_length=40),
                ),
                (
                    "key",
                    models.CharField(help_text='The lease key, e.g. "consolidate:subject:12".', max_length=200),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("running", "Running"),
                            ("done", "Done"),
                            ("failed", "Failed"),
                            ("abandoned", "Abandoned"),
                        ],
                        default="running",
                        max_length=12,
                    ),
                ),
                ("lease_owner", models.CharField(help_text="host:pid:token of the worker holding it", max_length=200)),
                ("lease_seconds", models.PositiveIntegerField()),
                ("lease_expires_at", models.DateTimeField()),
                ("heartbeat_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("stats", models.JSONField(blank=True, default=dict)),
                ("error", models.TextField(blank=True)),
                ("started_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "subject",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="job_runs",
                        to="memory.subject",
                    ),
                ),
            ],
            options={
                "db_table": "consolidation_jobrun",
                "indexes": [
                    models.Index(fields=["kind", "started_at"], name="jobrun_recent"),
                    models.Index(fields=["key", "status"], name="jobrun_key_status"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("status", "running")), fields=("key",), name="jobrun_one_running_per_key"
                    )
                ],
            },
        ),
        migrations.AlterField(
            model_name="profilefact",
            name="source_message",
            field=_fk("memory.message", blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="note", name="conversation", field=_fk("memory.conversation", blank=True, null=True)
        ),
        migrations.AlterField(
            model_name="note", name="source_message", field=_fk("memory.message", blank=True, null=True)
        ),
        migrations.AlterField(
            model_name="notesource", name="conversation", field=_fk("memory.conversation", blank=True, null=True)
        ),
        migrations.AlterField(
            model_name="notesource", name="message", field=_fk("memory.message", blank=True, null=True)
        ),
        migrations.AlterField(
            model_name="retrievalevent",
            name="conversation",
            field=_fk("memory.conversation", blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="contextdelivery",
            name="conversation",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="memory.conversation"
            ),
        ),
        migrations.AlterField(
            model_name="pendingmemory",
            name="source_message",
            field=_fk("memory.message", blank=True, null=True),
        ),
        migrations.DeleteModel(name="Counter"),
    ]

    operations = [migrations.SeparateDatabaseAndState(state_operations=state_operations)]
