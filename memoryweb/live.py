"""Live updates for open dashboard pages. `notify` is the only way sync code reaches a socket:

    notify(subject.pk, "pending.created", {"id": pending.pk})

Delivery starts after the current transaction commits (at once outside one), so a page never
refreshes before the change is visible, and a rolled-back change announces nothing. A live
update is a hint to refresh; losing one must not undo the write that caused it, so delivery
errors are logged and counted (`live.undelivered`), never raised.

Where the event goes depends on the channel layer (DESIGN §2):

- embedded default, `InMemoryChannelLayer`: the layer lives inside the web process, so a
  Celery worker cannot reach it. `notify` writes a `LiveEvent` row (the outbox), and the web
  process runs one `OutboxPoller` per event loop — started by the first websocket that
  connects, stopped when the last one closes — that reads new rows every `POLL_SECONDS` and
  sends them to the layer. Rows are pruned by age when new ones are written: several web
  processes may read the same rows, each with its own cursor.
- production, channels_redis (`REDIS_URL`): the layer is shared by every process, so `notify`
  sends to it directly and nothing is written.

Each event goes to the group of its subject (`subject_group`); an event without a subject
(a sweep over all subjects) goes to `STAFF_GROUP`. The consumer (memory/dashboard/consumers.py) checks
ownership again for every event before it forwards one.
"""

import asyncio
import logging
import time
import weakref
from datetime import timedelta
from typing import Any

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from memoryweb.counters import counter_add
from memoryweb.models import LiveEvent

logger = logging.getLogger(__name__)

# What happened, as live.js maps it to a DOM event (mw:pending, mw:jobs, mw:memory).
EVENTS = (
    "pending.created",  # a candidate memory waits for the person's decision
    "pending.decided",  # approved, rejected or expired
    "job.queued",  # a run was asked for ("consolidate now") and waits for a worker
    "job.finished",  # a consolidation or decay run ended (done, failed or skipped)
    "memory.changed",  # a fact, note, lesson or procedure was written or removed
    "documents.changed",  # a session-summary run or a mental model wrote new document versions
)
STAFF_GROUP = "live.staff"
MESSAGE_TYPE = "live.event"  # handled by LiveConsumer.live_event

POLL_SECONDS = 0.5
RETENTION = timedelta(minutes=10)
BATCH = 500
# An id below the cursor that was not there when a later one was read belongs to a
# transaction that had not committed yet (PostgreSQL sequences); it is looked for again for
# this long before it is taken for a rolled-back insert.
GAP_SECONDS = 10.0
MAX_GAPS = 1000


def subject_group(subject_id: int | None) -> str:
    return STAFF_GROUP if subject_id is None else f"live.subject.{int(subject_id)}"


def live_message(subject_id: int | None, event: str, payload: dict) -> dict[str, Any]:
    return {"type": MESSAGE_TYPE, "subject_id": subject_id, "event": event, "payload": payload}


def outbox_in_use() -> bool:
    """Whether the channel layer is process-local, so events travel through the outbox."""
    backend = str(settings.CHANNEL_LAYERS.get("default", {}).get("BACKEND", ""))
    return backend.endswith(".InMemoryChannelLayer")


def notify(subject_id: int | None, event: str, payload: dict | None = None) -> None:
    """Tell the pages open on `subject_id` (None: staff pages) that `event` happened, once the
    current transaction commits. `payload` must be JSON-serialisable and hold ids and
    statuses, never memory content. Safe to repeat: a page only refreshes once more."""
    if event not in EVENTS:
        raise ValueError(f"unknown live event {event!r}; expected one of {', '.join(EVENTS)}")
    data = dict(payload or {})
    transaction.on_commit(lambda: _deliver(subject_id, event, data))


_last_prune = [0.0]  # monotonic time of this process's last pruning of the outbox
PRUNE_EVERY_SECONDS = 30.0


def _deliver(subject_id: int | None, event: str, payload: dict) -> None:
    try:
        if outbox_in_use():
            now = timezone.now()
            if time.monotonic() - _last_prune[0] >= PRUNE_EVERY_SECONDS:
                _last_prune[0] = time.monotonic()
                LiveEvent.objects.filter(created_at__lt=now - RETENTION).delete()
            LiveEvent.objects.create(subject_id=subject_id, event=event, payload=payload, created_at=now)
        else:
            layer = get_channel_layer()
            async_to_sync(layer.group_send)(
                subject_group(subject_id), live_message(subject_id, event, payload)
            )
    except Exception:
        logger.warning("live event %s for subject %s not delivered", event, subject_id, exc_info=True)
        # imported here: the memory services call notify, so a module-level import of the
        # services package from this module would be circular

        try:
            counter_add("live.undelivered")
        except Exception:  # the database itself is what failed
            pass


class OutboxPoller:
    """Forwards new outbox rows to this process's channel layer while sockets are open.

    `attach` returns once the cursor is set, so every event committed after a socket has
    connected reaches it; older rows are not replayed.
    """

    def __init__(self, interval: float = POLL_SECONDS):
        self.interval = interval
        self.listeners = 0
        self.last_pk: int | None = None  # None: no row seen yet, so no id can be missing
        self.gaps: dict[int, float] = {}  # id → when it was first missed (monotonic)
        self._task: asyncio.Task | None = None
        self._ready: asyncio.Event | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def attach(self) -> None:
        self.listeners += 1
        if not self.running:
            self._ready = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run(self._ready))
        assert self._ready is not None
        await self._ready.wait()

    def detach(self) -> None:
        self.listeners = max(0, self.listeners - 1)
        if self.listeners == 0 and self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self, ready: asyncio.Event) -> None:
        try:
            self.last_pk = await database_sync_to_async(_latest_pk)()
            self.gaps = {}
        except Exception:
            logger.warning("live outbox: cannot read the cursor; starting from the beginning", exc_info=True)
        ready.set()
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.poll_once()
            except asyncio.CancelledError:
                raise
            except Exception:  # a locked database, a dropped connection: try again next tick
                logger.warning("live outbox: poll failed", exc_info=True)

    async def poll_once(self) -> int:
        """Send the rows committed since the last poll; returns how many."""
        rows = await database_sync_to_async(self.read_new)()
        layer = get_channel_layer()
        for row in rows:
            await layer.group_send(
                subject_group(row.subject_id), live_message(row.subject_id, row.event, row.payload)
            )
        return len(rows)

    def read_new(self) -> list[LiveEvent]:
        """The rows after the cursor, and missed ones that have committed since; moves the cursor."""
        query = Q(pk__gt=self.last_pk or 0)
        if self.gaps:
            query |= Q(pk__in=list(self.gaps))
        rows = list(LiveEvent.objects.filter(query).order_by("pk")[:BATCH])
        now = time.monotonic()
        seen = {row.pk for row in rows}
        for pk in seen:
            self.gaps.pop(pk, None)
        top = max(seen, default=0)
        if top > (self.last_pk or 0):
            if self.last_pk is not None and top - self.last_pk <= MAX_GAPS:
                for pk in range(self.last_pk + 1, top):
                    if pk not in seen:
                        self.gaps[pk] = now
            self.last_pk = top
        self.gaps = {pk: t for pk, t in self.gaps.items() if now - t < GAP_SECONDS}
        return rows


def _latest_pk() -> int | None:
    return LiveEvent.objects.aggregate(top=Max("pk"))["top"]


_pollers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, OutboxPoller]" = weakref.WeakKeyDictionary()


def outbox_poller() -> OutboxPoller:
    """The poller of the running event loop (one per web process in production)."""
    loop = asyncio.get_running_loop()
    poller = _pollers.get(loop)
    if poller is None:
        poller = _pollers[loop] = OutboxPoller()
    return poller
