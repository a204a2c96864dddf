from pathlib import Path

from celery import shared_task


@shared_task(name="memoryweb.tasks.ping")
def ping(path: str) -> str:
    """Write "pong" to the file at `path`: proves a worker takes tasks off the broker.

    Overwrites the file, so it is safe to repeat.
    """
    Path(path).write_text("pong")
    return "pong"
