"""Runs whose worker died: flush does not wait on them, and the sweepers redo their work
(chat.reflect.reflections_reclaim, consolidation.services.reclaim, memory/leases.py)."""

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from chat.models import ReflectionRun
from chat.reflect import reflection_enqueue
from chat.tasks import reflections_reclaim_task
from consolidation.tasks import runs_reclaim_task
from memory.leases import heartbeating, lease_acquire, lease_queue
from memory.models import JobRun, JobStatus, Lesson, ProfileFact
from memory.services.conversations import conversation_get_or_create, message_add
from memoryweb.models import TaskIntent
from tests.consolidation.test_consolidation import DEPLOY, linked

STALE = timedelta(minutes=2)  # older than MEMORYWEB_HEARTBEAT_STALE_SECONDS (60)


@pytest.fixture
def dead_reflection(subject, actor):
    """A reflection a worker claimed and then died in: running, its heartbeat two minutes old."""
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    message_add(conversation=conversation, role="user", text="Call me Sam. I work at Acme.", actor=actor)
    reply, _ = message_add(conversation=conversation, role="assistant", text="Hi Sam!", actor=actor)
    run = reflection_enqueue(conversation=conversation, through_message=reply)
    ReflectionRun.objects.filter(pk=run.pk).update(
        status="running",
        owner="gone:1:x",
        started_at=timezone.now() - STALE,
        heartbeat_at=timezone.now() - STALE,
    )
    return run


def flush(client, **extra):
    return client.post("/api/v1/flush", {"subject": "alice", **extra}, format="json").json()


def test_flush_does_not_wait_on_a_reflection_whose_worker_died_and_the_sweeper_redoes_it(
    client, dead_reflection, eager_tasks, django_capture_on_commit_callbacks
):
    answer = flush(client, timeout_ms=10_000)

    assert answer["pending"] == 0 and answer["dead"] == 1 and answer["done"] is False
    assert answer["waited_ms"] < 10_000  # it answered without waiting out the timeout

    with django_capture_on_commit_callbacks(execute=True):
        stats = reflections_reclaim_task()

    assert stats == {"abandoned": 1, "requeued": 1, "given_up": 0, "redispatched": 0}
    dead_reflection.refresh_from_db()
    assert dead_reflection.status == "abandoned" and "gone:1:x" in dead_reflection.error
    redo = ReflectionRun.objects.exclude(pk=dead_reflection.pk).get()
    assert redo.status == "done" and redo.through_message_id == dead_reflection.through_message_id
    assert ProfileFact.objects.filter(subject__external_id="alice", origin="reflection").exists()
    after = flush(client)
    assert (after["done"], after["pending"], after["dead"]) == (True, 0, 0)


def test_a_running_reflection_that_heartbeats_is_pending_not_dead(client, dead_reflection):
    ReflectionRun.objects.filter(pk=dead_reflection.pk).update(heartbeat_at=timezone.now())

    answer = flush(client, timeout_ms=0)

    assert (answer["pending"], answer["dead"], answer["done"]) == (1, 0, False)
    assert reflections_reclaim_task()["abandoned"] == 0


def test_a_dead_reflection_superseded_by_a_newer_turn_is_not_redone(subject, actor, dead_reflection):
    conversation = dead_reflection.conversation
    later, _ = message_add(conversation=conversation, role="assistant", text="Anything else?", actor=actor)
    newer = ReflectionRun.objects.create(conversation=conversation, through_message=later)

    stats = reflections_reclaim_task()

    assert (stats["abandoned"], stats["requeued"]) == (1, 0)
    assert list(ReflectionRun.objects.filter(status="queued")) == [newer]


def test_a_turn_whose_reflection_keeps_killing_its_worker_is_given_up(dead_reflection):
    for _ in range(3):
        stats = reflections_reclaim_task()
        ReflectionRun.objects.filter(status="queued").update(
            status="running", heartbeat_at=timezone.now() - STALE
        )

    assert stats == {"abandoned": 1, "requeued": 0, "given_up": 1, "redispatched": 0}
    assert ReflectionRun.objects.filter(status="abandoned").count() == 3


def test_a_queued_reflection_nobody_took_has_its_task_sent_again_once(dead_reflection, settings):
    ReflectionRun.objects.filter(pk=dead_reflection.pk).update(
        status="queued",
        heartbeat_at=timezone.now() - timedelta(seconds=settings.MEMORYWEB_REDISPATCH_SECONDS + 1),
    )
    TaskIntent.objects.all().delete()

    first, second = reflections_reclaim_task(), reflections_reclaim_task()

    assert (first["redispatched"], second["redispatched"]) == (1, 0)
    assert list(TaskIntent.objects.values_list("task", "args")) == [
        ("chat.turn_reflect", [dead_reflection.pk])
    ]


def test_flush_does_not_wait_on_a_consolidation_whose_worker_died_and_the_sweeper_redoes_it(
    client, subject, eager_tasks, django_capture_on_commit_callbacks
):
    linked(subject, DEPLOY, ["deploy"])
    dead = lease_acquire(f"consolidate:subject:{subject.pk}", "gone:2:y", kind="consolidate", subject=subject)
    JobRun.objects.filter(pk=dead.pk).update(heartbeat_at=timezone.now() - STALE)  # its lease has not expired

    answer = flush(client, timeout_ms=10_000)

    assert (answer["pending"], answer["jobs"], answer["dead"], answer["done"]) == (0, 0, 1, False)
    assert answer["waited_ms"] < 10_000

    with django_capture_on_commit_callbacks(execute=True):
        stats = runs_reclaim_task()

    assert stats == {"abandoned": 1, "requeued": 1, "redispatched": 0}
    dead.refresh_from_db()
    assert dead.status == JobStatus.ABANDONED and "gone:2:y" in dead.error
    redo = JobRun.objects.exclude(pk=dead.pk).get()
    assert (redo.key, redo.status, redo.stats["lessons"]) == (dead.key, JobStatus.DONE, 1)
    assert Lesson.objects.filter(subject=subject).count() == 1
    assert flush(client)["done"] is True


def test_a_queued_consolidation_whose_task_was_lost_is_sent_again_once(subject, settings):
    queued = lease_queue(f"consolidate:subject:{subject.pk}", kind="consolidate", subject=subject)
    JobRun.objects.filter(pk=queued.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.MEMORYWEB_REDISPATCH_SECONDS + 1)
    )

    first, second = runs_reclaim_task(), runs_reclaim_task()

    assert (first["redispatched"], second["redispatched"]) == (1, 0)
    assert list(TaskIntent.objects.values_list("task", "args")) == [
        ("consolidation.consolidate_subject", [subject.pk, queued.pk])
    ]


def test_the_heartbeat_beats_while_the_block_runs_and_stops_when_the_run_is_lost():
    beats = []
    lost = threading.Event()

    def beat():
        beats.append(1)
        if len(beats) == 3:
            lost.set()
            return False
        return True

    with heartbeating(beat, every=0.01):
        assert lost.wait(30)
        seen = len(beats)
        assert not threading.Event().wait(0.05)

    assert seen == len(beats) == 3  # no beat after the run was lost


def test_a_summaries_run_whose_worker_died_is_redone_once_by_the_sweeper(
    client, subject, actor, eager_tasks, django_capture_on_commit_callbacks
):
    from memory.models import MemoryDocument, SessionExtraction
    from memory.services import app_config_set

    app_config_set(app=subject.app, config={"memory": {"backend": "local"}}, actor=actor)
    conversation, _ = conversation_get_or_create(subject=subject, external_id="s", actor=actor)
    message_add(
        conversation=conversation,
        role="user",
        text="We decided to use Postgres for the ledger instead of MySQL.",
        occurred_at=timezone.now() - timedelta(days=1),
        actor=actor,
    )
    dead = lease_acquire(f"summaries:subject:{subject.pk}", "gone:3:z", kind="summaries", subject=subject)
    JobRun.objects.filter(pk=dead.pk).update(heartbeat_at=timezone.now() - STALE, stats={"force": True})

    assert flush(client, timeout_ms=10_000)["dead"] == 1

    with django_capture_on_commit_callbacks(execute=True):
        stats = runs_reclaim_task()

    assert stats == {"abandoned": 1, "requeued": 1, "redispatched": 0}
    dead.refresh_from_db()
    assert dead.status == JobStatus.ABANDONED
    redo = JobRun.objects.exclude(pk=dead.pk).get()
    assert (redo.key, redo.kind, redo.status, redo.stats["extracted"]) == (
        dead.key,
        "summaries",
        JobStatus.DONE,
        1,
    )
    assert SessionExtraction.objects.filter(conversation=conversation).count() == 1
    assert MemoryDocument.objects.filter(subject=subject, path="MEMORY.md").get().versions.count() == 1
    assert flush(client)["done"] is True
