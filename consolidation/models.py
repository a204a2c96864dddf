"""The consolidation data model: job runs with their leases, and clusters the distiller declined.
Fields, choices, constraints and pure methods only."""

from django.db import models
from django.db.models import Q
from django.utils import timezone


class JobStatus(models.TextChoices):
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    ABANDONED = "abandoned"  # its lease expired (the worker died) and another run took over


class JobRun(models.Model):
    """One run of a periodic job, and the lease it holds while it runs.

    At most one run per `key` is running at a time (a partial unique constraint), so two
    workers cannot both hold a lease; a run whose lease expired is marked abandoned by the
    worker that takes the key over (consolidation/leases.py).
    """

    kind = models.CharField(max_length=40, help_text='"consolidate", "consolidate_all", "votes_decay"')
    key = models.CharField(max_length=200, help_text='The lease key, e.g. "consolidate:subject:12".')
    subject = models.ForeignKey(
        "memory.Subject", null=True, blank=True, on_delete=models.CASCADE, related_name="job_runs"
    )
    status = models.CharField(max_length=12, choices=JobStatus.choices, default=JobStatus.RUNNING)
    lease_owner = models.CharField(max_length=200, help_text="host:pid:token of the worker holding it")
    lease_seconds = models.PositiveIntegerField()
    lease_expires_at = models.DateTimeField()
    heartbeat_at = models.DateTimeField(default=timezone.now)
    stats = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["key"], condition=Q(status="running"), name="jobrun_one_running_per_key"
            )
        ]
        indexes = [
            models.Index(fields=["kind", "started_at"], name="jobrun_recent"),
            models.Index(fields=["key", "status"], name="jobrun_key_status"),
        ]

    def __str__(self):
        return f"{self.key} ({self.status})"


class DeclinedCluster(models.Model):
    """A cluster of notes the distiller found no lesson in.

    It is not offered again while its members stay the same: a new note joining the cluster
    changes its signature. Without this, a cluster that yields nothing would take one of the
    `maxClustersPerTick` slots on every tick and starve the others.
    """

    subject = models.ForeignKey("memory.Subject", on_delete=models.CASCADE, related_name="+")
    signature = models.CharField(max_length=64, help_text="SHA-256 of the sorted note ids.")
    size = models.PositiveIntegerField()
    distiller = models.CharField(max_length=120, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subject", "signature"], name="declined_cluster_once")]

    def __str__(self):
        return f"declined cluster of {self.size} notes (subject {self.subject_id})"
