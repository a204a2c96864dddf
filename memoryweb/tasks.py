from pathlib import Path

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown

from memoryweb.outbox import DispatcherLoop, outbox_dispatch


@shared_task(name="memoryweb.tasks.ping")
def ping(path: str) -> str:
    """Write "pong" to the file at `path`: proves a worker takes tasks off the broker.

    Overwrites the file, so it is safe to repeat.
    """
    Path(path).write_text("pong")
    return "pong"


@shared_task(name="memoryweb.outbox_dispatch")
def outbox_dispatch_task() -> dict:
    """Deliver the task outbox rows the broker refused earlier (memoryweb.outbox). Safe to
    repeat: each row is claimed before it is sent."""
    return outbox_dispatch()


_loops: list[DispatcherLoop] = []


@worker_ready.connect
def _dispatcher_start(**_kwargs) -> None:
    """Every worker runs the outbox dispatcher in a thread, so undelivered rows reach the
    broker once it is back even when no beat tick can reach the worker."""
    loop = DispatcherLoop()
    loop.start()
    _loops.append(loop)


@worker_shutdown.connect
def _dispatcher_stop(**_kwargs) -> None:
    while _loops:
        _loops.pop().stop()
