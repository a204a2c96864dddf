"""The consolidation app's periodic and on-demand jobs. Each calls the service of the same name
and is safe to run twice (see the services for why)."""

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.db import connection

from consolidation.services import consolidate_all, consolidate_now, runs_reclaim, votes_decay
from memory.models import Subject
from memory.services.audit import Actor
from memoryweb.errors import FeatureDisabled

logger = logging.getLogger(__name__)


@shared_task(name="consolidation.consolidate_all")
def consolidate_all_task() -> dict:
    """The periodic tick: start `consolidate_subject` for every subject with linked candidate
    notes. Safe to repeat: each subject's run takes its lease, and consolidated notes are no
    longer candidates."""
    run = consolidate_all()
    return {"skipped": True} if run is None else {"job_run": run.pk, **run.stats}


@shared_task(name="consolidation.consolidate_subject")
def consolidate_subject_task(subject_id: int, job_run_id: int | None = None) -> dict:
    """One consolidation tick for one subject: the periodic sweep's, or the queued run of a
    "consolidate now" (`job_run_id`), started on commit. Safe to repeat: a queued run is claimed
    once; a subject deleted meanwhile is nothing to do."""
    subject = Subject.objects.select_related("app").filter(pk=subject_id).first()
    if subject is None:
        return {"missing": True}
    try:
        run = consolidate_now(subject=subject, actor=Actor.task("consolidate_subject"), job_run_id=job_run_id)
    except FeatureDisabled as exc:  # switched off since the run was asked for
        return {"skipped": exc.message}
    return {"skipped": True} if run is None else {"job_run": run.pk, "status": run.status, **run.stats}


@shared_task(name="consolidation.votes_decay")
def votes_decay_task() -> dict:
    """Decay every vote score by its app's `voting.signalDecay`. A repeat within a few hours of
    the last tick (a redelivered message) is skipped, so each period decays once."""
    run = votes_decay(actor=Actor.task("votes_decay"))
    return {"skipped": True} if run is None else {"job_run": run.pk, **run.stats}


@shared_task(name="consolidation.runs_reclaim")
def runs_reclaim_task() -> dict:
    """The sweeper: mark the job runs of dead workers abandoned and redo their work, and send
    again the lost tasks of queued runs (consolidation.services.reclaim). Safe to repeat."""
    return runs_reclaim()


@worker_ready.connect
def _reclaim_at_start(**_kwargs) -> None:
    """A worker that starts (say, after the last one was killed) sweeps at once, before the
    first beat tick."""
    try:
        logger.info("job runs reclaimed at worker start: %s", runs_reclaim())
    except Exception:
        logger.warning("job runs could not be reclaimed at worker start", exc_info=True)
    finally:
        connection.close()
