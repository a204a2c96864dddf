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

Batched tasks (`BATCHED`: task name -> most items per message). Their rows are not handed over
one by one: a commit that wrote one starts a `BATCH_WINDOW_SECONDS` wait in the process, and
then one message carries the single argument of every due row of that task (up to the size),
as a list (`batch_dispatch`; the dispatcher does the same). Storing 2,000 notes queued 1,869
`memory.note_link` tasks before; notes stored close together now share one. The rows stay in
the database until sent, so a process that dies during the wait loses nothing: the
dispatcher sends them.

Under CELERY_TASK_ALWAYS_EAGER (tests, debugging) the task runs after commit in the caller's
process, as `.delay()` did, and its exceptions propagate (a batched task too, one row a call).

Not to be confused with the live-update outbox (`memoryweb.live`, `LiveEvent`): that one
carries refresh hints to open pages and loses nothing that matters when it fails.
"""

import importlib
import logging
import random
import threading
from datetime import timedelta

from django.apps import apps
from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import F
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
BATCHED = {"memory.note_link": 50}  # task -> most rows one message carries (module docstring)
BATCH_WINDOW_SECONDS = 0.5


def enqueue(task_name: str, *args, **kwargs) -> TaskIntent:
    """Ask for `task_name(*args, **kwargs)` once the current transaction commits (at once
    outside one). The arguments must be JSON-serialisable. Returns the outbox row."""
    intent = TaskIntent.objects.create(task=task_name, args=list(args), kwargs=kwargs)
    if task_name in BATCHED and len(args) == 1 and not kwargs:
        transaction.on_commit(lambda: _batch_soon(task_name, intent.pk))
    else:
        transaction.on_commit(lambda: intent_dispatch(intent.pk))
    return intent


_batch_lock = threading.Lock()
_batch_timers: dict[str, threading.Timer] = {}


def _batch_soon(task_name: str, pk: int) -> None:
    """After a commit that wrote a row of a batched task: send that task's due rows together
    once the window has passed (one wait at a time per task and process)."""
    if celery_app.conf.task_always_eager:
        intent_dispatch(pk)
        return
    with _batch_lock:
        if task_name in _batch_timers:
            return
        timer = _batch_timers[task_name] = threading.Timer(BATCH_WINDOW_SECONDS, _batch_flush, [task_name])
    timer.daemon = True
    timer.start()


def _batch_flush(task_name: str) -> None:
    with _batch_lock:
        _batch_timers.pop(task_name, None)
    try:
        while batch_dispatch(task_name)[0] == SENT:
            pass
    except Exception:  # a locked or unreachable database: the dispatcher sends them later
        logger.warning("outbox: batch of %s not sent", task_name, exc_info=True)
    finally:
        connection.close()


def backoff(attempts: int) -> timedelta:
    """How long an undelivered row waits after its `attempts`-th failed delivery."""
    return timedelta(seconds=min(BACKOFF_CAP_SECONDS, BACKOFF_FIRST_SECONDS * 2 ** max(attempts - 1, 0)))


def _task(name: str):
    app = celery_app
    if name not in app.tasks:
        _import_tasks_modules()
    return app.tasks[name]


def _import_tasks_modules() -> None:
    """Import every installed app's `tasks` module, as Celery's autodiscovery would, but without
    `app.loader.import_default_modules()`: its signal makes Celery's Django fixup call
    `django.setup()` again, which re-runs the LOGGING dictConfig (dropping every handler added
    since start-up) in a web process that merely queued a task."""
    for config in apps.get_app_configs():
        module = f"{config.name}.tasks"
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


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


def batch_dispatch(task_name: str) -> tuple[str, int]:
    """Hand the oldest due rows of a batched task (up to its size in `BATCHED`) to the broker
    as one message whose argument is the list of their arguments, and mark them sent. Returns
    (SENT, rows), (HELD, 0) when none is due, or (REFUSED, 0) when the broker refused it (the
    rows are due again after the backoff). Never raises for a broker failure."""
    now = timezone.now()
    due = list(
        TaskIntent.objects.filter(task=task_name, sent_at__isnull=True, due_at__lte=now)
        .order_by("pk")
        .values_list("pk", flat=True)[: BATCHED[task_name]]
    )
    if not due:
        return HELD, 0
    # A claim time of our own marks the rows this dispatcher won; another one racing for the
    # same rows marks with another and finds only those it won.
    held_until = now + CLAIM + timedelta(microseconds=random.randrange(1, 10**6))
    TaskIntent.objects.filter(pk__in=due, sent_at__isnull=True, due_at__lte=now).update(due_at=held_until)
    rows = list(TaskIntent.objects.filter(pk__in=due, sent_at__isnull=True, due_at=held_until).order_by("pk"))
    if not rows:
        return HELD, 0
    pks = [row.pk for row in rows]
    try:
        _task(task_name).apply_async(args=[[row.args[0] for row in rows]])
    except Exception as exc:
        logger.warning("task %s (outbox %s…, %s rows) not delivered: %s", task_name, pks[0], len(pks), exc)
        try:
            for row in rows:
                TaskIntent.objects.filter(pk=row.pk, sent_at__isnull=True).update(
                    attempts=row.attempts + 1,
                    due_at=timezone.now() + backoff(row.attempts + 1),
                    last_error=f"{type(exc).__name__}: {exc}"[:2000],
                )
            counter_add("outbox.undelivered", len(rows))
        except Exception:  # the database failed too: the claim runs out and they are retried
            logger.warning("outbox: cannot record the failed delivery of %s", pks, exc_info=True)
        return REFUSED, 0
    TaskIntent.objects.filter(pk__in=pks).update(
        sent_at=timezone.now(), attempts=F("attempts") + 1, last_error=""
    )
    return SENT, len(rows)


def outbox_dispatch(*, limit: int = BATCH) -> dict:
    """Deliver the rows that are due, oldest first, and prune sent rows past their retention.
    Stops at the first refused delivery (the broker is down: the rest would fail too).
    Returns how many were sent, how many are still unsent, and how many were pruned."""
    now = timezone.now()
    sent = 0
    for task_name in BATCHED:
        while sent < limit:
            outcome, rows = batch_dispatch(task_name)
            if outcome != SENT:
                break
            sent += rows
    due = TaskIntent.objects.filter(sent_at__isnull=True, due_at__lte=now).order_by("pk")
    for pk in list(due.values_list("pk", flat=True)[: max(limit - sent, 0)]):
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
