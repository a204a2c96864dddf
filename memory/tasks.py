"""Background jobs of the memory app. Each fetches by id or sweeps, calls a service, and is safe
to run twice."""

import atexit
import threading
from datetime import timedelta

from celery import shared_task

from memory.config import get_config
from memory.services import Actor
from memory.services.consent import pending_expire
from memory.services.embeddings import note_embed
from memory.services.links import note_link
from memory.services.notes import notes_evict_sweep
from memory.services.retrieval import retrieval_events_prune


@shared_task(name="memory.notes_evict_sweep")
def notes_evict_sweep_task() -> dict:
    """Evict overflow for every subject over its cap (the service says why it is safe to repeat)."""
    return {"evicted": notes_evict_sweep(actor=Actor.task("notes_evict_sweep"))}


@shared_task(name="memory.retrieval_events_prune")
def retrieval_events_prune_task() -> dict:
    """Delete RetrievalEvents past their retention. Safe to repeat."""
    return {"deleted": retrieval_events_prune()}


@shared_task(name="memory.pending_expire")
def pending_expire_task() -> dict:
    """Expire pending consent items older than `consent.pendingExpiryDays`. Safe to repeat."""

    days = get_config()["consent.pendingExpiryDays"]
    return {"expired": pending_expire(older_than=timedelta(days=days))}


@shared_task(name="memory.note_link")
def note_link_task(note_ids: int | list[int]) -> dict:
    """Link new notes to their nearest neighbours (see memory.services.links.note_link), one
    note after another: a batch from `note_link_later`, or one id (messages queued before
    batching). Safe to run twice: pairs already linked are left alone."""

    ids = [note_ids] if isinstance(note_ids, int) else list(note_ids)
    results = [note_link(note_id=note_id) for note_id in ids]
    return {"notes": len(ids), "linked": sum(r.get("linked", 0) for r in results)}


class LinkBatcher:
    """Notes stored close together are linked by one task: the first id starts a `window`-second
    wait, the ids that come meanwhile join it, and the batch goes as one `note_link_task` when
    the wait ends or it holds `size` ids. Storing 2,000 notes queued one task per note before.
    `size` bounds a batch's run time too: a reflection (its own queue, taken first) waits at
    most for the batches already running.

    The ids wait in this process: one that dies within the window (kill -9, power loss) leaves
    those notes unlinked (the notes themselves are committed). A normal exit sends what waits.
    """

    def __init__(self, *, window: float = 0.5, size: int = 50):
        self.window, self.size = window, size
        self._lock = threading.Lock()
        self._ids: list[int] = []
        self._timer: threading.Timer | None = None

    def add(self, note_id: int) -> None:
        if note_link_task.app.conf.task_always_eager:
            note_link_task.delay([note_id])  # runs here and now: nothing to wait for
            return
        with self._lock:
            self._ids.append(note_id)
            full = len(self._ids) >= self.size
            if not full and self._timer is None:
                self._timer = threading.Timer(self.window, self.flush)
                self._timer.daemon = True
                self._timer.start()
        if full:
            self.flush()

    def flush(self) -> None:
        """Send what waits, now."""
        with self._lock:
            ids, self._ids = self._ids, []
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if ids:
            note_link_task.delay(ids)


link_batcher = LinkBatcher()
atexit.register(link_batcher.flush)


def note_link_later(note_id: int) -> None:
    """Link the note in the background, batched with the notes stored around it (LinkBatcher).
    Call it after the note's transaction commits."""
    link_batcher.add(note_id)


@shared_task(name="memory.note_embed")
def note_embed_task(note_id: int) -> dict:
    """Embed one note under its app's provider (memory.services.embeddings.note_embed). Safe
    to run twice: an unchanged note is skipped. A provider failure is counted, not raised."""

    return note_embed(note_id=note_id)
