"""The task outbox: `enqueue` is the only way code asks for a background task.

    enqueue("chat.turn_reflect", run.pk)

The intent is written as a `TaskIntent` row in the caller's transaction, so the write that
needs the task and the task are committed together or not at all. After commit the row is
handed to the broker and marked sent. When the broker is down the request still succeeds: the
row stays unsent (the failure is logged and counted as `outbox.undelivered`) and the
dispatcher retries it with backoff — the beat task `memoryweb.outbox_dispatch`, and a loop in
every worker (`DispatcherLoop`, started when the worker is ready), which needs no broker to
run. Delivery is at least once: a dispatcher that dies between handing a row over and marking
it sent hands it over again, so every task must be safe to run twice (they are).

Two dispatchers never send the same row at once: each first claims the row by moving its
`due_at` forward with a conditional UPDATE, and only the one whose UPDATE matched sends it.

Under CELERY_TASK_ALWAYS_EAGER (tests, debugging) the task runs after commit in the caller's
process, as `.delay()` did, and its exceptions propagate.

Not to be confused with the live-update outbox (`memoryweb.live`, `LiveEvent`): that one
carries refresh hints to open pages and loses nothing that matters when it fails.
"""

import logging
import threading
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from memoryweb.celery import app as celery_app
from memoryweb.counters import counter_add
from memoryweb.models import TaskIntent

logger = logging.getLogger(__name__)

CLAIM = timedelta(minutes=2)  # a claimed row is due again this long after its dispatcher died
BACKOFF_FIRST_SECONDS = 5
BACKOFF_CAP_SECONDS = 300
RETENTION = timedelta(days=1)  # sent rows are pruned after this long
BATCH = 200


def enqueue(task_name: str, *args, **kwargs) -> TaskIntent:
    """Ask for `task_name(*args, **kwargs)` once the current transaction commits (at once
    outside one). The arguments must be JSON-serialisable. Returns the outbox row."""
    intent = TaskIntent.objects.create(task=task_name, args=list(args), kwargs=kwargs)
    transaction.on_commit(lambda: intent_dispatch(intent.pk))
    return intent


def backoff(attempts: int) -> timedelta:
    """How long an undelivered row waits after its `attempts`-th failed delivery."""
    return timedelta(seconds=min(BACKOFF_CAP_SECONDS, BACKOFF_FIRST_SECONDS * 2 ** max(attempts - 1, 0)))


def _task(name: str):
    app = celery_app
    if name not in app.tasks:
        app.loader.import_default_modules()  # every app's tasks module (autodiscovery)
    return app.tasks[name]


SENT, HELD, REFUSED = "sent", "held", "refused"


def intent_dispatch(pk: int) -> str:
    """Hand one due row to the broker and mark it sent: SENT; HELD when another dispatcher
    holds it, it was sent already or it is not due; REFUSED when the broker refused it (it is
    due again after the backoff). Never raises for a broker failure."""
    now = timezone.now()
    claimed = TaskIntent.objects.filter(pk=pk, sent_at__isnull=True, due_at__lte=now).update(
        due_at=now + CLAIM
    )
    if not claimed:
        return HELD
    intent = TaskIntent.objects.get(pk=pk)
    if celery_app.conf.task_always_eager:  # "sent" is running it here, as .delay() did
        TaskIntent.objects.filter(pk=pk).update(sent_at=timezone.now(), attempts=intent.attempts + 1)
        _task(intent.task).apply_async(args=intent.args, kwargs=intent.kwargs)
        return SENT
    try:
        _task(intent.task).apply_async(args=intent.args, kwargs=intent.kwargs)
    except Exception as exc:
        attempts = intent.attempts + 1
        logger.warning("task %s (outbox %s) not delivered, attempt %s: %s", intent.task, pk, attempts, exc)
        try:
            TaskIntent.objects.filter(pk=pk, sent_at__isnull=True).update(
                attempts=attempts,
                due_at=timezone.now() + backoff(attempts),
                last_error=f"{type(exc).__name__}: {exc}"[:2000],
            )
            counter_add("outbox.undelivered")
        except Exception:  # the database failed too: the claim runs out and it is retried
            logger.warning("outbox %s: cannot record the failed delivery", pk, exc_info=True)
        return REFUSED
    TaskIntent.objects.filter(pk=pk).update(
        sent_at=timezone.now(), attempts=intent.attempts + 1, last_error=""
    )
    return SENT


def outbox_dispatch(*, limit: int = BATCH) -> dict:
    """Deliver the rows that are due, oldest first, and prune sent rows past their retention.
    Stops at the first refused delivery (the broker is down: the rest would fail too).
    Returns how many were sent, how many are still unsent, and how many were pruned."""
    now = timezone.now()
    due = TaskIntent.objects.filter(sent_at__isnull=True, due_at__lte=now).order_by("pk")
    sent = 0
    for pk in list(due.values_list("pk", flat=True)[:limit]):
        outcome = intent_dispatch(pk)
        if outcome == REFUSED:
            break
        sent += outcome == SENT
    pruned, _ = TaskIntent.objects.filter(sent_at__lt=now - RETENTION).delete()
    return {"sent": sent, "unsent": TaskIntent.objects.filter(sent_at__isnull=True).count(), "pruned": pruned}


class DispatcherLoop:
    """Runs `outbox_dispatch` every `interval` seconds in a daemon thread of the worker's
    main process, until `stop`. It needs no broker message to run, so rows written while the
    broker was down are delivered once it is back even when beat's own ticks were lost."""

    def __init__(self, interval: float | None = None):
        self.interval = float(interval if interval is not None else settings.MEMORYWEB_OUTBOX_POLL_SECONDS)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="outbox-dispatcher", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    close_old_connections()
                    outbox_dispatch()
                except Exception:  # a locked or unreachable database: try again next tick
                    logger.warning("outbox dispatcher: tick failed", exc_info=True)
                self._stop.wait(self.interval)
        finally:
            connection.close()
