"""Infrastructure rows: named counters and the live-update outbox. They refer to no model of the
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
