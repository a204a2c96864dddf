"""Clusters the distiller declined. Fields, constraints and pure methods only."""

from django.db import models
from django.utils import timezone


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
