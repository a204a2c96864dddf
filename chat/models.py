"""Reflection runs over conversations (the conversations and messages are memory's input records)."""

from django.db import models
from django.utils import timezone


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

    conversation = models.ForeignKey(
        "memory.Conversation", on_delete=models.CASCADE, related_name="reflections"
    )
    through_message = models.ForeignKey("memory.Message", on_delete=models.CASCADE, related_name="+")
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
