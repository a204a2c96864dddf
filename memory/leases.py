"""Leases for the periodic jobs: at most one worker runs a job for a given key at a time.

A lease is a running JobRun row. Taking one is two statements, each safe against a concurrent
worker doing the same:

1. a conditional UPDATE marks a running run whose lease has expired as abandoned (its worker
   died or hung; whichever worker's UPDATE matches the row first wins, the other matches none);
2. an INSERT of a new running run, which the partial unique constraint on (key) where
   status = running refuses while anyone else holds the key — that worker gets None.

A run can also be asked for before a worker takes it (`lease_queue`: a queued JobRun whose id
the caller can report at once); the worker then claims that row instead of inserting one, and
a queued run that finds the key held is marked skipped.

The holder extends its lease with `lease_heartbeat` between units of work; the heartbeat is
conditional on the owner and the running status, so a worker whose lease was taken over learns
it (False) and stops. `lease_release` records the outcome, again only for the owner.

Two clocks tell a dead worker from a slow one. `heartbeat_at` says the owner's process is
alive: while `run_under_lease` runs the work, a thread of the owner (`heartbeating`) touches it
every MEMORYWEB_HEARTBEAT_SECONDS, even in the middle of a long LLM call. A running run whose
heartbeat is older than MEMORYWEB_HEARTBEAT_STALE_SECONDS (`stale_before`) has lost its worker:
flush does not wait on it, and the sweeper (`leases_reclaim`, run by consolidation's
`runs_reclaim` task, which redoes the work) marks it abandoned within a minute instead of the
five of the lease. `lease_expires_at` says the work makes progress: a live process whose work
hangs keeps heartbeating, and its lease still runs out. Reflection runs (chat) use the same
heartbeat thread and threshold.
"""

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from memory.models import JobRun, JobStatus
from memoryweb.live import notify

logger = logging.getLogger(__name__)

DEFAULT_TTL = timedelta(minutes=5)


def stale_before(now=None):
    """A run heartbeating last before this moment has lost its worker."""
    return (now or timezone.now()) - timedelta(seconds=settings.MEMORYWEB_HEARTBEAT_STALE_SECONDS)


class heartbeating:  # noqa: N801 (a context manager, named as used: `with heartbeating(beat):`)
    """While the block runs, a daemon thread calls `beat()` every MEMORYWEB_HEARTBEAT_SECONDS
    (the claim itself was the first beat); `beat` returns False when the run is no longer
    ours, and the thread stops. A failed beat (a locked database) is logged and tried again next time.
    The thread dies with the process, which is the point: a killed worker stops beating."""

    def __init__(self, beat: Callable[[], bool], every: float | None = None):
        self.beat = beat
        self.every = float(every if every is not None else settings.MEMORYWEB_HEARTBEAT_SECONDS)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(self.every + 5)
        return False

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.every):
                try:
                    if not self.beat():
                        return
                except Exception:
                    logger.warning("heartbeat failed; trying again", exc_info=True)
        finally:
            connection.close()  # this thread's own connection


def lease_owner_id() -> str:
    """A fresh owner name for one run: host, process and a random token."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def lease_queue(key: str, *, kind: str = "", subject=None, profile: str = "normal") -> JobRun:
    """Record a run that was asked for and waits for a worker (status queued, no owner yet),
    under the operational `profile` of the request that asked (the worker runs it so).
    Not idempotent: each call is one request; the worker's claim is what runs once."""
    now = timezone.now()
    return JobRun.objects.create(
        kind=kind or key.split(":", 1)[0],
        key=key,
        subject=subject,
        profile=profile,
        status=JobStatus.QUEUED,
        lease_owner="",
        lease_seconds=0,
        lease_expires_at=now,
        heartbeat_at=now,
        started_at=now,
    )


def lease_skip(queued: JobRun, *, reason: str) -> bool:
    """End a queued run without running it (skipped, with the reason); False when it was no
    longer queued. Safe to repeat."""
    skipped = JobRun.objects.filter(pk=queued.pk, status=JobStatus.QUEUED).update(
        status=JobStatus.SKIPPED, finished_at=timezone.now(), error=reason[:2000]
    )
    if skipped:
        notify(queued.subject_id, "job.finished", {"id": queued.pk, "kind": queued.kind, "status": "skipped"})
    return bool(skipped)


def _running(owner: str, ttl: timedelta, now) -> dict[str, Any]:
    """The fields of a run that `owner` holds from `now` for `ttl`."""
    return {
        "status": JobStatus.RUNNING,
        "lease_owner": owner,
        "lease_seconds": max(int(ttl.total_seconds()), 1),
        "lease_expires_at": now + ttl,
        "heartbeat_at": now,
        "started_at": now,
    }


def _claim_queued(queued: JobRun, owner: str, ttl: timedelta, now) -> JobRun | None:
    """Turn the queued run into the running lease, once: a redelivered task finds it no longer
    queued and gets None. While another worker holds the key the run is marked skipped."""
    try:
        with transaction.atomic():
            claimed = JobRun.objects.filter(pk=queued.pk, status=JobStatus.QUEUED).update(
                **_running(owner, ttl, now)
            )
    except IntegrityError:  # the partial unique constraint: someone holds the key
        holder = JobRun.objects.filter(key=queued.key, status=JobStatus.RUNNING).values_list("pk", flat=True)
        lease_skip(queued, reason=f"another run of {queued.key} was in progress (job run {holder.first()})")
        return None
    if not claimed:
        return None
    queued.refresh_from_db()
    return queued


def lease_acquire(
    key: str,
    owner: str,
    ttl: timedelta = DEFAULT_TTL,
    *,
    kind: str = "",
    subject=None,
    queued: JobRun | None = None,
) -> JobRun | None:
    """Take the lease on `key` for `owner`: the new running JobRun (or `queued`, claimed), or
    None while another worker holds an unexpired lease on it. Never blocks on the holder."""
    now = timezone.now()
    JobRun.objects.filter(key=key, status=JobStatus.RUNNING, lease_expires_at__lt=now).update(
        status=JobStatus.ABANDONED,
        finished_at=now,
        error=f"lease expired without a heartbeat; taken over by {owner}",
    )
    if queued is not None:
        return _claim_queued(queued, owner, ttl, now)
    try:
        with transaction.atomic():
            return JobRun.objects.create(
                kind=kind or key.split(":", 1)[0], key=key, subject=subject, **_running(owner, ttl, now)
            )
    except IntegrityError:
        return None  # someone holds it


def leases_expire() -> int:
    """Mark every running run whose lease has expired as abandoned (their workers died and no
    one took the key over since); returns how many. Safe to repeat."""
    now = timezone.now()
    return JobRun.objects.filter(status=JobStatus.RUNNING, lease_expires_at__lt=now).update(
        status=JobStatus.ABANDONED, finished_at=now, error="lease expired without a heartbeat"
    )


def lease_heartbeat(run: JobRun, owner: str, ttl: timedelta | None = None) -> bool:
    """Extend the lease by `ttl` (default: the run's own lease length). False when `owner` no
    longer holds it (released, or taken over after it expired) — the caller must stop."""
    now = timezone.now()
    ttl = ttl if ttl is not None else timedelta(seconds=run.lease_seconds)
    expires = now + ttl
    held = JobRun.objects.filter(pk=run.pk, lease_owner=owner, status=JobStatus.RUNNING).update(
        heartbeat_at=now, lease_expires_at=expires
    )
    if held:
        run.heartbeat_at, run.lease_expires_at = now, expires
    return bool(held)


def lease_alive(run: JobRun, owner: str) -> bool:
    """The owner's process is alive: touch `heartbeat_at` (not the lease). False when the run
    is no longer `owner`'s running run."""
    return bool(
        JobRun.objects.filter(pk=run.pk, lease_owner=owner, status=JobStatus.RUNNING).update(
            heartbeat_at=timezone.now()
        )
    )


def leases_reclaim() -> list[JobRun]:
    """Mark every running run whose owner stopped heartbeating as abandoned; returns them (as
    they were) so their work can be redone. Safe to repeat and to race: each row is taken by
    one conditional UPDATE, so two sweepers never both reclaim it."""
    cutoff = stale_before()
    reclaimed = []
    for run in JobRun.objects.filter(status=JobStatus.RUNNING, heartbeat_at__lt=cutoff).select_related(
        "subject"
    ):
        taken = JobRun.objects.filter(pk=run.pk, status=JobStatus.RUNNING, heartbeat_at__lt=cutoff).update(
            status=JobStatus.ABANDONED,
            finished_at=timezone.now(),
            error=f"its worker ({run.lease_owner}) stopped heartbeating at {run.heartbeat_at:%Y-%m-%d %H:%M:%S}",
        )
        if taken:
            notify(run.subject_id, "job.finished", {"id": run.pk, "kind": run.kind, "status": "abandoned"})
            reclaimed.append(run)
    return reclaimed


def leases_queued_undelivered() -> list[JobRun]:
    """Queued runs no worker has claimed for MEMORYWEB_REDISPATCH_SECONDS (their task message
    was lost); each is returned once per period, for its task to be sent again (a queued run is
    claimed once, so a second message is harmless). A queued run's `heartbeat_at` is when its
    task was last sent."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.MEMORYWEB_REDISPATCH_SECONDS)
    due = []
    for run in JobRun.objects.filter(status=JobStatus.QUEUED, heartbeat_at__lt=cutoff):
        if JobRun.objects.filter(pk=run.pk, status=JobStatus.QUEUED, heartbeat_at__lt=cutoff).update(
            heartbeat_at=now
        ):
            due.append(run)
    return due


def lease_release(run: JobRun, status: str, stats: dict | None = None, *, error: str = "") -> bool:
    """End the run with `status` (done or failed) and its stats. Only the owner of a running
    lease can release it; returns False (and writes nothing) otherwise."""
    if status not in (JobStatus.DONE, JobStatus.FAILED):
        raise ValueError(f"a lease is released as done or failed, not {status!r}")
    now = timezone.now()
    error = error[:2000]
    fields: dict[str, Any] = {"status": status, "finished_at": now, "error": error}
    if stats is not None:
        fields["stats"] = stats
    held = JobRun.objects.filter(pk=run.pk, lease_owner=run.lease_owner, status=JobStatus.RUNNING)
    released = held.update(**fields)
    if released:
        run.status, run.finished_at, run.error = status, now, error
        if stats is not None:
            run.stats = stats
        # open jobs pages refresh (staff pages for a run over all subjects)
        notify(run.subject_id, "job.finished", {"id": run.pk, "kind": run.kind, "status": status})
    return bool(released)


class LeaseLost(Exception):
    """The lease was taken over while the job ran (its heartbeat came too late)."""


def run_under_lease(
    key: str,
    owner: str,
    work: Callable[[JobRun], dict],
    *,
    kind: str = "",
    subject=None,
    ttl: timedelta = DEFAULT_TTL,
    queued: JobRun | None = None,
) -> JobRun | None:
    """Run `work(run)` while holding the lease on `key`; it returns the stats to record.
    With `queued`, that requested run is the one claimed and run.

    Returns the finished JobRun (done, or failed with the error when `work` raised an Exception,
    which is re-raised), or None when another worker holds the lease. When `work` raises
    LeaseLost the run is returned as the other worker left it. The owner heartbeats while the
    work runs; a process killed mid-run stops heartbeating, and the sweeper (`leases_reclaim`)
    marks its run abandoned.
    """
    run = lease_acquire(key, owner, ttl, kind=kind, subject=subject, queued=queued)
    if run is None:
        return None
    try:
        with heartbeating(lambda: lease_alive(run, owner)):
            stats = work(run)
    except LeaseLost:
        run.refresh_from_db()
        return run
    except Exception as exc:
        lease_release(run, JobStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    lease_release(run, JobStatus.DONE, stats)
    return run
