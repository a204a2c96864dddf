import threading
from datetime import timedelta

import pytest
import time_machine
from django.conf import settings
from django.utils import timezone

from memory.leases import (
    lease_acquire,
    lease_heartbeat,
    lease_owner_id,
    lease_release,
    leases_expire,
    run_under_lease,
)
from memory.models import JobRun, JobStatus

pytestmark = pytest.mark.postgres

TTL = timedelta(minutes=5)


@pytest.mark.django_db
def test_acquiring_a_free_key_records_a_running_job_run():
    run = lease_acquire("consolidate:subject:1", "worker-a", TTL)

    assert run is not None
    row = JobRun.objects.get()
    assert (row.key, row.kind, row.status, row.lease_owner) == (
        "consolidate:subject:1",
        "consolidate",
        JobStatus.RUNNING,
        "worker-a",
    )
    assert row.lease_seconds == 300
    assert timedelta(minutes=4) < row.lease_expires_at - timezone.now() <= TTL


@pytest.mark.django_db
def test_a_held_key_cannot_be_acquired_by_another_worker():
    first = lease_acquire("job", "worker-a", TTL)

    second = lease_acquire("job", "worker-b", TTL)

    assert first is not None and second is None
    assert list(JobRun.objects.values_list("lease_owner", "status")) == [("worker-a", JobStatus.RUNNING)]


@pytest.mark.django_db
def test_different_keys_are_held_independently():
    assert lease_acquire("consolidate:subject:1", "worker-a", TTL) is not None
    assert lease_acquire("consolidate:subject:2", "worker-b", TTL) is not None

    assert JobRun.objects.filter(status=JobStatus.RUNNING).count() == 2


@pytest.mark.django_db
def test_an_expired_lease_is_taken_over_and_the_dead_run_is_marked_abandoned():
    dead = lease_acquire("job", "worker-a", TTL)

    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        taken = lease_acquire("job", "worker-b", TTL)

    assert taken is not None and taken.lease_owner == "worker-b"
    dead.refresh_from_db()
    assert dead.status == JobStatus.ABANDONED
    assert dead.finished_at is not None
    assert "worker-b" in dead.error


@pytest.mark.django_db
def test_a_lease_is_not_taken_over_before_it_expires():
    lease_acquire("job", "worker-a", TTL)

    with time_machine.travel(timezone.now() + timedelta(minutes=4)):
        assert lease_acquire("job", "worker-b", TTL) is None

    assert JobRun.objects.get().status == JobStatus.RUNNING


@pytest.mark.django_db
def test_the_owner_heartbeat_extends_the_lease():
    run = lease_acquire("job", "worker-a", TTL)
    first_expiry = run.lease_expires_at

    with time_machine.travel(timezone.now() + timedelta(minutes=4)):
        assert lease_heartbeat(run, "worker-a") is True
        assert lease_acquire("job", "worker-b", TTL) is None  # not expired: it was extended

    run.refresh_from_db()
    assert run.lease_expires_at > first_expiry + timedelta(minutes=3)


@pytest.mark.django_db
def test_a_heartbeat_by_a_non_owner_fails_and_changes_nothing():
    run = lease_acquire("job", "worker-a", TTL)
    expiry = run.lease_expires_at

    assert lease_heartbeat(run, "worker-b") is False

    run.refresh_from_db()
    assert run.lease_expires_at == expiry


@pytest.mark.django_db
def test_the_heartbeat_of_a_worker_whose_lease_was_taken_over_fails():
    slow = lease_acquire("job", "worker-a", TTL)
    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        lease_acquire("job", "worker-b", TTL)

        assert lease_heartbeat(slow, "worker-a") is False

    assert JobRun.objects.get(status=JobStatus.RUNNING).lease_owner == "worker-b"


@pytest.mark.django_db
def test_release_records_the_outcome_and_frees_the_key():
    run = lease_acquire("job", "worker-a", TTL)

    assert lease_release(run, JobStatus.DONE, {"lessons": 2}) is True

    run.refresh_from_db()
    assert (run.status, run.stats) == (JobStatus.DONE, {"lessons": 2})
    assert run.finished_at is not None
    assert lease_acquire("job", "worker-b", TTL) is not None


@pytest.mark.django_db
def test_a_run_taken_over_cannot_be_released_by_its_old_owner():
    slow = lease_acquire("job", "worker-a", TTL)
    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        lease_acquire("job", "worker-b", TTL)

    assert lease_release(slow, JobStatus.DONE, {"lessons": 9}) is False

    slow.refresh_from_db()
    assert (slow.status, slow.stats) == (JobStatus.ABANDONED, {})


@pytest.mark.django_db
def test_run_under_lease_records_the_stats_of_the_work():
    run = run_under_lease("job", "worker-a", lambda run: {"done": run.key})

    assert run.status == JobStatus.DONE
    assert JobRun.objects.get().stats == {"done": "job"}


@pytest.mark.django_db
def test_run_under_lease_records_a_failure_and_reraises_it():
    def work(run):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        run_under_lease("job", "worker-a", work)

    row = JobRun.objects.get()
    assert row.status == JobStatus.FAILED
    assert row.error == "RuntimeError: boom"


@pytest.mark.django_db
def test_run_under_lease_does_not_run_the_work_while_the_key_is_held():
    lease_acquire("job", "worker-a", TTL)
    calls = []

    assert run_under_lease("job", "worker-b", lambda run: calls.append(run) or {}) is None
    assert calls == []


@pytest.mark.django_db
def test_expired_leases_nobody_took_over_are_swept_to_abandoned():
    lease_acquire("old", "worker-a", TTL)
    lease_acquire("fresh", "worker-b", timedelta(hours=1))

    with time_machine.travel(timezone.now() + timedelta(minutes=10)):
        assert leases_expire() == 1

    assert dict(JobRun.objects.values_list("key", "status")) == {
        "old": JobStatus.ABANDONED,
        "fresh": JobStatus.RUNNING,
    }


def test_owner_ids_differ_per_call():
    assert lease_owner_id() != lease_owner_id()


@pytest.mark.skipif(
    "postgresql" not in settings.DATABASES["default"]["ENGINE"],
    reason="threads share one in-memory SQLite database; tests/consolidation/test_consolidation.py races processes",
)
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_workers_racing_for_one_key_on_postgres_get_exactly_one_lease():
    barrier = threading.Barrier(8)
    won = []

    def worker(n):
        from django.db import connections

        barrier.wait()
        try:
            if lease_acquire("race", f"worker-{n}", TTL) is not None:
                won.append(n)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(won) == 1
    assert JobRun.objects.filter(key="race", status=JobStatus.RUNNING).count() == 1
