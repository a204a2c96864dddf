"""The sweeper of the consolidation app's job runs (consolidations, the periodic sweep, vote
decay): a run whose worker stopped heartbeating is marked abandoned by `leases_reclaim` and its
work queued again; a queued "consolidate now" whose task message was lost is sent again.

A consolidation writes whole clusters, each in its own transaction, so a redo picks up the
clusters the dead run had not written (consolidated notes are no longer candidates).
"""

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from memory.leases import lease_queue, leases_queued_undelivered, leases_reclaim
from memory.models import JobRun, JobStatus
from memoryweb.counters import counter_add
from memoryweb.live import notify
from memoryweb.outbox import enqueue

logger = logging.getLogger(__name__)

MAX_REDOS = 3  # a key whose run killed its worker this often within REDO_WINDOW waits for its next tick
REDO_WINDOW = timedelta(hours=1)
# how the work of each kind is asked for again
PERIODIC = {"consolidate_all": "consolidation.consolidate_all", "votes_decay": "consolidation.votes_decay"}
# runs of one subject, redone as a queued run of the same kind: kind → the task taking
# (subject id, job run id). "summaries" is chat's (chat.summaries.pipeline), named, not imported
PER_SUBJECT = {"consolidate": "consolidation.consolidate_subject", "summaries": "chat.summaries_subject"}


def _redo(run: JobRun) -> bool:
    recent = JobRun.objects.filter(
        key=run.key, status=JobStatus.ABANDONED, finished_at__gte=timezone.now() - REDO_WINDOW
    ).count()
    if recent >= MAX_REDOS:
        logger.error("%s abandoned %s times within %s: left to its next tick", run.key, recent, REDO_WINDOW)
        counter_add("jobs.given_up")
        return False
    if run.kind in PER_SUBJECT and run.subject_id is not None:
        queued = lease_queue(run.key, kind=run.kind, subject=run.subject, profile=run.profile)
        if run.stats.get("force"):
            JobRun.objects.filter(pk=queued.pk).update(stats={"force": True})
        notify(run.subject_id, "job.queued", {"id": queued.pk, "kind": queued.kind})
        enqueue(PER_SUBJECT[run.kind], run.subject_id, queued.pk)
        return True
    if run.kind in PERIODIC:
        enqueue(PERIODIC[run.kind])
        return True
    return False


def runs_reclaim() -> dict:
    """Reclaim the runs of dead workers and redo their work; send again the tasks of queued
    runs no worker took. Safe to repeat and to race (see `leases_reclaim`)."""
    stats = {"abandoned": 0, "requeued": 0, "redispatched": 0}
    for run in leases_reclaim():
        stats["abandoned"] += 1
        with transaction.atomic():
            stats["requeued"] += _redo(run)
    for run in leases_queued_undelivered():
        if run.kind in PER_SUBJECT and run.subject_id is not None:
            enqueue(PER_SUBJECT[run.kind], run.subject_id, run.pk)
            stats["redispatched"] += 1
    return stats
