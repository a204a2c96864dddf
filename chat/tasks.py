import logging

from celery import shared_task
from celery.signals import worker_ready
from django.db import connection

from chat.reflect import idle_turns_reflect, reflections_reclaim, turn_reflect
from chat.summaries.pipeline import subjects_due, summaries_run
from chat.topics import topics_refresh
from memory.models import JobRun, Subject
from memory.services.audit import Actor
from memoryweb.errors import FeatureDisabled
from memoryweb.outbox import enqueue
from memoryweb.profiles import DEFAULT_PROFILE, profile_active

logger = logging.getLogger(__name__)


@shared_task(name="chat.turn_reflect")
def turn_reflect_task(run_id: int) -> dict:
    """Reflect on a turn (see chat.reflect.turn_reflect). Safe to run twice: only a queued run
    is claimed."""
    return turn_reflect(run_id=run_id)


@shared_task(name="chat.topics_refresh")
def topics_refresh_task(conversation_id: int) -> dict:
    """Recompute a conversation's topic working set (see chat.topics.topics_refresh). Safe to
    run twice, late or twice at once: the rows follow from the messages alone."""
    return topics_refresh(conversation_id=conversation_id)


@shared_task(name="chat.reflections_reclaim")
def reflections_reclaim_task() -> dict:
    """The sweeper: redo the reflections whose worker died (chat.reflect.reflections_reclaim).
    Safe to repeat: each run is reclaimed once."""
    return reflections_reclaim()


@shared_task(name="chat.idle_turns_reflect")
def idle_turns_reflect_task() -> dict:
    """Reflect on the conversations whose last turn no reply closed (chat.reflect.idle_turns_reflect)."""
    return idle_turns_reflect()


@shared_task(name="chat.summaries_all")
def summaries_all_task() -> dict:
    """The periodic tick of the session-summary pipeline: start `summaries_subject` for every
    subject with a conversation due (memory.backend "local"). Safe to repeat: each subject's
    run takes its lease, and an extracted conversation is due again only after new messages."""
    started = [subject.pk for subject in subjects_due()]
    for subject_id in started:
        enqueue("chat.summaries_subject", subject_id)
    return {"subjects": len(started)}


@shared_task(name="chat.summaries_subject")
def summaries_subject_task(subject_id: int, job_run_id: int | None = None) -> dict:
    """One session-summary run of a subject: the periodic tick's, or a queued one (enqueue,
    rebuild: `job_run_id`, whose stats say whether to force). Safe to repeat: a queued run is
    claimed once; a subject deleted or switched off meanwhile is nothing to do."""
    subject = Subject.objects.select_related("app").filter(pk=subject_id).first()
    if subject is None:
        return {"missing": True}
    queued = JobRun.objects.filter(pk=job_run_id).first() if job_run_id else None
    force = bool(queued and (queued.stats or {}).get("force"))
    try:
        with profile_active(queued.profile if queued is not None else DEFAULT_PROFILE):
            run = summaries_run(
                subject=subject, actor=Actor.task("summaries_subject"), force=force, queued=queued
            )
    except FeatureDisabled as exc:
        return {"skipped": exc.message}
    return {"skipped": True} if run is None else {"job_run": run.pk, "status": run.status, **run.stats}


@worker_ready.connect
def _reclaim_at_start(**_kwargs) -> None:
    """A worker that starts (say, after the last one was killed) sweeps at once, before the
    first beat tick."""
    try:
        logger.info("reflections reclaimed at worker start: %s", reflections_reclaim())
    except Exception:
        logger.warning("reflections could not be reclaimed at worker start", exc_info=True)
    finally:
        connection.close()
