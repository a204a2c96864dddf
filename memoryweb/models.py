"""Infrastructure rows: named counters, the live-update outbox and the task outbox. They refer to no model of the
memory core, which sits above this layer."""

from django.db import models
from django.utils import timezone


class Counter(models.Model):
    """A named running count (LLM fallbacks, redactions, embedding failures) read by diagnose."""

    name = models.CharField(max_length=100, unique=True)
    value = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"{self.name}={self.value}"


class LiveEvent(models.Model):
    """One live update for open dashboard pages, waiting in the outbox.

    In the embedded default the channel layer lives inside the web process, so a worker cannot
    reach a browser directly: `memoryweb.live.notify` writes a row here and the web process's
    poller forwards it to the layer. Rows are pruned by age, never by delivery, because every
    web process reads them with its own cursor. With channels_redis nothing is written here.
    """

    # the subject's id, not a foreign key: infrastructure sits below the memory core; the rows
    # are pruned by age. Null: an event for staff only, such as a sweep over all subjects.
    subject_id = models.BigIntegerField(null=True, blank=True)
    event = models.CharField(max_length=60)
    payload = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self):
        return f"{self.event} for subject {self.subject_id}"


class TaskIntent(models.Model):
    """A background task asked for and not yet handed to the broker: the task outbox.

    `memoryweb.outbox.enqueue` writes the row in the caller's transaction, so a committed
    write and the task it needs are saved together or not at all; after commit the row is
    handed to the broker and marked sent. A row the broker refused (it was down) stays unsent
    and is retried with backoff by the dispatcher (`outbox_dispatch`), and sent rows are pruned
    after a day. Distinct from `LiveEvent`: that outbox carries hints to open pages, read by
    every web process and pruned by age; this one carries work, delivered once each.
    """

    task = models.CharField(max_length=200, help_text='The Celery task name, e.g. "chat.turn_reflect".')
    args = models.JSONField(default=list, blank=True)
    kwargs = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # when the next delivery may be tried: now for a new row, later after a failure (backoff)
    # or while one dispatcher holds it (so two dispatchers never send the same row at once)
    due_at = models.DateTimeField(default=timezone.now)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["sent_at", "due_at"], name="taskintent_due")]

    def __str__(self):
        state = "sent" if self.sent_at else f"unsent after {self.attempts} attempts"
        return f"{self.task}{tuple(self.args)} ({state})"
