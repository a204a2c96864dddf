"""Reflection runs over conversations (the conversations and messages are memory's input records)."""

from django.db import models
from django.utils import timezone


class RunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    SUPERSEDED = "superseded"
    FAILED = "failed"
    ABANDONED = "abandoned"  # its worker stopped heartbeating mid-run; a new run redoes it


class ReflectionRun(models.Model):
    """One reflection over a conversation's new messages, up to `through_message`.

    A newer run for the same conversation supersedes older ones still queued or running: the
    newer one covers their messages too, and an older run that finds itself superseded writes
    nothing.

    While a worker runs it, `owner` names the worker and `heartbeat_at` is touched every
    MEMORYWEB_HEARTBEAT_SECONDS; a running run whose heartbeat went stale lost its worker and is
    reclaimed (abandoned, and its messages queued again) by `reflections_reclaim`. For a queued
    run, `heartbeat_at` is when its task was last sent.
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
    owner = models.CharField(max_length=200, blank=True, help_text="host:pid:token of the worker running it")
    heartbeat_at = models.DateTimeField(default=timezone.now)
    profile = models.CharField(max_length=20, default="normal", help_text="the operational profile")

    class Meta:
        indexes = [
            models.Index(fields=["conversation", "status"], name="reflection_open"),
            models.Index(fields=["status", "heartbeat_at"], name="reflection_heartbeat"),
        ]

    def __str__(self):
        return f"reflection {self.pk} of c:{self.conversation_id} ({self.status})"
