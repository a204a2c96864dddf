"""The consolidation app's periodic and on-demand jobs. Each calls the service of the same name
and is safe to run twice (see the services for why)."""

from celery import shared_task

from consolidation.services import consolidate_all, consolidate_now, votes_decay
from memory.models import Subject
from memory.services.audit import Actor
from memoryweb.errors import FeatureDisabled


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
