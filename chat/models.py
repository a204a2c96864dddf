"""Conversations and their messages."""

from django.db import models
from django.db.models import Q
from django.utils import timezone


class Conversation(models.Model):
    subject = models.ForeignKey("memory.Subject", on_delete=models.CASCADE, related_name="conversations")
    external_id = models.CharField(max_length=200, blank=True, default="")
    mode = models.CharField(max_length=50, blank=True, default="")
    scope = models.CharField(max_length=200, blank=True, default="")
    working_dir = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "external_id"],
                condition=~Q(external_id=""),
                name="conversation_external_id_unique",
            )
        ]

    def __str__(self):
        return f"c:{self.pk} {self.external_id}"


class Role(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"


class Message(models.Model):
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=20, choices=Role.choices)
    text = models.TextField()
    occurred_at = models.DateTimeField(default=timezone.now)
    external_id = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "external_id"],
                condition=~Q(external_id=""),
                name="message_external_id_unique",
            )
        ]
        indexes = [models.Index(fields=["conversation", "occurred_at"], name="message_timeline")]
        ordering = ["occurred_at", "id"]

    def __str__(self):
        return f"{self.role}: {self.text[:40]}"


class RunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    SUPERSEDED = "superseded"
    FAILED = "failed"


class ReflectionRun(models.Model):
    """One reflection over a conversation's new messages, up to `through_message`.

    A newer run for the same conversation supersedes older ones still queued or running: the
    newer one covers their messages too, and an older run that finds itself superseded writes
    nothing.
    """

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="reflections")
    through_message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=12, choices=RunStatus.choices, default=RunStatus.QUEUED)
    stats = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["conversation", "status"], name="reflection_open")]

    def __str__(self):
        return f"reflection {self.pk} of c:{self.conversation_id} ({self.status})"


class LiveEvent(models.Model):
    """One live update for open dashboard pages, waiting in the outbox.

    In the embedded default the channel layer lives inside the web process, so a worker cannot
    reach a browser directly: `chat.notify.notify` writes a row here and the web process's
    poller forwards it to the layer. Rows are pruned by age, never by delivery, because every
    web process reads them with its own cursor. With channels_redis nothing is written here.
    """

    subject = models.ForeignKey(
        "memory.Subject", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )  # null: an event for staff only, such as a sweep over all subjects
    event = models.CharField(max_length=60)
    payload = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self):
        return f"{self.event} for subject {self.subject_id}"
