import logging

from celery import shared_task
from celery.signals import worker_ready
from django.db import connection

from chat.reflect import idle_turns_reflect, reflections_reclaim, turn_reflect

logger = logging.getLogger(__name__)


@shared_task(name="chat.turn_reflect")
def turn_reflect_task(run_id: int) -> dict:
    """Reflect on a turn (see chat.reflect.turn_reflect). Safe to run twice: only a queued run
    is claimed."""
    return turn_reflect(run_id=run_id)


@shared_task(name="chat.reflections_reclaim")
def reflections_reclaim_task() -> dict:
    """The sweeper: redo the reflections whose worker died (chat.reflect.reflections_reclaim).
    Safe to repeat: each run is reclaimed once."""
    return reflections_reclaim()


@shared_task(name="chat.idle_turns_reflect")
def idle_turns_reflect_task() -> dict:
    """Reflect on the conversations whose last turn no reply closed (chat.reflect.idle_turns_reflect)."""
    return idle_turns_reflect()


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
