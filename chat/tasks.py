from celery import shared_task

from chat.reflect import turn_reflect


@shared_task(name="chat.turn_reflect")
def turn_reflect_task(run_id: int) -> dict:
    """Reflect on a turn (see chat.reflect.turn_reflect). Safe to run twice: only a queued run
    is claimed."""
    return turn_reflect(run_id=run_id)
