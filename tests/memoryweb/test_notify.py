"""`notify` and the outbox: an event is written after commit, by the services that cause it,
and the web process's poller reads each committed row exactly once."""

from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from memory.leases import lease_acquire, lease_release, run_under_lease
from memory.models import ConsentCategory, ItemKind, JobStatus, Lesson, Note, PendingMemory, PendingStatus
from memory.services import fact_remove, fact_set, note_edit, note_forget
from memory.services.consent import memory_candidate_route, pending_approve, pending_expire, pending_reject
from memory.services.lessons import lesson_delete, lesson_edit
from memoryweb.live import OutboxPoller, live_message, notify, subject_group
from memoryweb.models import LiveEvent
from tests.factories import NoteFactory, SubjectFactory

IN_MEMORY = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


def events(**filters):
    return list(
        LiveEvent.objects.filter(**filters).order_by("pk").values_list("subject_id", "event", "payload")
    )


@pytest.fixture(autouse=True)
def in_memory_layer():
    with override_settings(CHANNEL_LAYERS=IN_MEMORY):
        yield


@pytest.mark.postgres
def test_an_event_is_written_to_the_outbox_only_when_the_transaction_commits(
    subject, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            notify(subject.pk, "pending.created", {"id": 7})
            assert LiveEvent.objects.count() == 0

    assert events() == [(subject.pk, "pending.created", {"id": 7})]


def test_a_rolled_back_change_announces_nothing(subject, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError):
            with transaction.atomic():
                notify(subject.pk, "memory.changed", {"kind": "note", "id": 1})
                raise RuntimeError("the write failed")

    assert callbacks == [] and LiveEvent.objects.count() == 0


def test_an_unknown_event_name_is_a_programming_error(subject):
    with pytest.raises(ValueError, match="unknown live event 'pending.creatd'"):
        notify(subject.pk, "pending.creatd", {})


@pytest.mark.postgres
def test_writing_an_event_prunes_rows_older_than_the_retention(
    subject, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr("memoryweb.live._last_prune", [float("-inf")])  # due: the last prune was long ago
    old = LiveEvent.objects.create(
        subject_id=subject.pk, event="job.finished", created_at=timezone.now() - timedelta(hours=1)
    )
    recent = LiveEvent.objects.create(subject_id=subject.pk, event="job.finished")

    with django_capture_on_commit_callbacks(execute=True):
        notify(subject.pk, "memory.changed", {})

    remaining = set(LiveEvent.objects.values_list("pk", flat=True))
    assert old.pk not in remaining and recent.pk in remaining and len(remaining) == 2


def test_pruning_runs_at_most_every_half_minute_per_process(subject, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        notify(subject.pk, "memory.changed", {})  # prunes now, or did less than 30 s ago
    old = LiveEvent.objects.create(
        subject_id=subject.pk, event="job.finished", created_at=timezone.now() - timedelta(hours=1)
    )
    with django_capture_on_commit_callbacks(execute=True):
        notify(subject.pk, "memory.changed", {})

    assert LiveEvent.objects.filter(pk=old.pk).exists()  # pruned by a later write, not each one


# --- the services that announce changes ----------------------------------------------------


def route(subject, actor, config, content, category="health"):
    return memory_candidate_route(
        subject=subject,
        kind=ItemKind.NOTE,
        payload={"content": content, "tags": ["health"]},
        category=category,
        actor=actor,
        config=config,
    )


def test_a_queued_candidate_announces_a_pending_item(
    subject, actor, config, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        outcome = route(subject, actor, config, "Was diagnosed with asthma in 2019")

    assert outcome.action == "pending"
    assert events() == [
        (subject.pk, "pending.created", {"id": outcome.obj.pk, "category": "health", "kind": "note"})
    ]


def test_a_stored_candidate_announces_a_memory_change(
    subject, actor, config, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        outcome = route(subject, actor, config, "Prefers window seats on trains", category="")

    assert outcome.action == "stored"
    assert events() == [(subject.pk, "memory.changed", {"kind": "note", "id": outcome.obj.pk})]


def test_approving_announces_the_decision_and_the_new_memory(
    subject, actor, config, django_capture_on_commit_callbacks
):
    pending = route(subject, actor, config, "Takes insulin before meals").obj
    LiveEvent.objects.all().delete()

    with django_capture_on_commit_callbacks(execute=True):
        note = pending_approve(pending=pending, actor=actor, config=config)

    assert events() == [
        (subject.pk, "pending.decided", {"id": pending.pk, "status": "approved"}),
        (subject.pk, "memory.changed", {"kind": "note", "id": note.pk}),
    ]


def test_rejecting_and_expiring_announce_the_decision(
    subject, actor, config, django_capture_on_commit_callbacks
):
    rejected = route(subject, actor, config, "Sees a therapist on Fridays").obj
    stale = route(subject, actor, config, "Had knee surgery last spring").obj
    PendingMemory.objects.filter(pk=stale.pk).update(created_at=timezone.now() - timedelta(days=60))

    with django_capture_on_commit_callbacks(execute=True):
        pending_reject(pending=rejected, actor=actor)
        assert pending_expire(older_than=timedelta(days=30)) == 1

    assert events(event="pending.decided") == [
        (subject.pk, "pending.decided", {"id": rejected.pk, "status": "rejected"}),
        (subject.pk, "pending.decided", {"status": "expired"}),
    ]
    assert PendingMemory.objects.get(pk=stale.pk).status == PendingStatus.EXPIRED
    assert ConsentCategory.objects.filter(slug="health").exists()


def test_a_finished_job_announces_itself_to_its_subject(subject, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = run_under_lease("consolidate:subject:test", "me", lambda run: {"lessons": 0}, subject=subject)

    assert run is not None and run.status == JobStatus.DONE
    assert events() == [(subject.pk, "job.finished", {"id": run.pk, "kind": "consolidate", "status": "done"})]


def test_a_job_over_all_subjects_announces_itself_to_staff_only(db, django_capture_on_commit_callbacks):
    run = lease_acquire("votes_decay", "me", kind="votes_decay")

    with django_capture_on_commit_callbacks(execute=True):
        assert lease_release(run, JobStatus.FAILED, error="boom")

    assert events() == [(None, "job.finished", {"id": run.pk, "kind": "votes_decay", "status": "failed"})]


def test_a_release_by_someone_who_lost_the_lease_announces_nothing(
    subject, django_capture_on_commit_callbacks
):
    run = lease_acquire("consolidate:subject:x", "me", subject=subject)
    run.lease_owner = "someone else"

    with django_capture_on_commit_callbacks(execute=True):
        assert lease_release(run, JobStatus.DONE, {}) is False

    assert LiveEvent.objects.count() == 0


def memory_changed(kind, obj_id, subject):
    return (subject.pk, "memory.changed", {"kind": kind, "id": obj_id})


def test_setting_a_fact_announces_the_new_version(subject, actor, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        fact, changed = fact_set(subject=subject, key="city", value="Lisbon", actor=actor)

    assert changed and events() == [memory_changed("fact", fact.pk, subject)]


def test_confirming_a_fact_announces_nothing(subject, actor, django_capture_on_commit_callbacks):
    fact_set(subject=subject, key="city", value="Lisbon", actor=actor)
    LiveEvent.objects.all().delete()

    with django_capture_on_commit_callbacks(execute=True):
        _, changed = fact_set(subject=subject, key="city", value="Lisbon", actor=actor)

    assert not changed and events() == []


def test_removing_a_fact_announces_it(subject, actor, django_capture_on_commit_callbacks):
    fact, _ = fact_set(subject=subject, key="city", value="Lisbon", actor=actor)
    LiveEvent.objects.all().delete()

    with django_capture_on_commit_callbacks(execute=True):
        fact_remove(subject=subject, key="city", actor=actor)

    assert events() == [memory_changed("fact", fact.pk, subject)]


def test_editing_a_note_announces_it(subject, actor, config, django_capture_on_commit_callbacks):
    note = NoteFactory(subject=subject, content="Runs on Sundays", tags=["running"])

    with django_capture_on_commit_callbacks(execute=True):
        note_edit(note=note, content="Runs on Saturdays", actor=actor, config=config)

    assert Note.objects.get(pk=note.pk).content == "Runs on Saturdays"
    assert events() == [memory_changed("note", note.pk, subject)]


def test_an_edit_that_changes_nothing_announces_nothing(
    subject, actor, config, django_capture_on_commit_callbacks
):
    note = NoteFactory(subject=subject, content="Runs on Sundays", tags=["running"])

    with django_capture_on_commit_callbacks(execute=True):
        note_edit(note=note, content="Runs on Sundays", tags=["running"], actor=actor, config=config)

    assert events() == []


def test_forgetting_a_note_announces_it(subject, actor, django_capture_on_commit_callbacks):
    note = NoteFactory(subject=subject, content="Runs on Sundays")
    note_id = note.pk

    with django_capture_on_commit_callbacks(execute=True):
        note_forget(note=note, actor=actor)

    assert not Note.objects.filter(pk=note_id).exists()
    assert events() == [memory_changed("note", note_id, subject)]


def test_editing_and_deleting_a_lesson_announce_it(subject, actor, django_capture_on_commit_callbacks):
    lesson = Lesson.objects.create(subject=subject, text="Deploy on Fridays with care.")
    lesson_id = lesson.pk

    with django_capture_on_commit_callbacks(execute=True):
        lesson_edit(lesson=lesson, text="Deploy with a rollback plan.", actor=actor)
        lesson_delete(lesson=lesson, actor=actor)

    assert not Lesson.objects.filter(pk=lesson_id).exists()
    assert events() == [memory_changed("lesson", lesson_id, subject)] * 2


def test_an_edit_on_the_dashboard_is_announced(
    owned_subject, owner_client, django_capture_on_commit_callbacks
):
    note = NoteFactory(subject=owned_subject, content="Runs on Sundays", tags=["running"])
    url = reverse("dashboard:note_edit", kwargs={"subject_id": owned_subject.pk, "note_id": note.pk})

    with django_capture_on_commit_callbacks(execute=True):
        response = owner_client.post(url, {"content": "Runs on Saturdays", "tags": "running"})

    assert response.status_code in (200, 302)
    assert events() == [memory_changed("note", note.pk, owned_subject)]


# --- the poller ------------------------------------------------------------------------------


@pytest.mark.postgres
def test_the_poller_reads_each_row_once_and_only_rows_written_after_it_started(subject):
    LiveEvent.objects.create(subject_id=subject.pk, event="memory.changed")  # before the socket opened
    poller = OutboxPoller()
    poller.last_pk = LiveEvent.objects.latest("pk").pk
    first = LiveEvent.objects.create(subject_id=subject.pk, event="pending.created")
    second = LiveEvent.objects.create(subject_id=None, event="job.finished")

    assert [row.pk for row in poller.read_new()] == [first.pk, second.pk]
    assert poller.read_new() == []


@pytest.mark.postgres
def test_a_row_that_commits_after_a_later_one_is_still_delivered(subject):
    """On PostgreSQL ids come from a sequence, so a transaction that took an id first may
    commit last; the poller looks for the missing id again."""
    poller = OutboxPoller()
    first = LiveEvent.objects.create(subject_id=subject.pk, event="pending.created")
    poller.last_pk = first.pk - 1  # the socket opened just before
    late = LiveEvent.objects.create(subject_id=subject.pk, event="pending.decided")
    last = LiveEvent.objects.create(subject_id=subject.pk, event="memory.changed")
    late_pk = late.pk
    late.delete()  # not committed yet as far as the poller can see

    assert [row.pk for row in poller.read_new()] == [first.pk, last.pk]
    LiveEvent.objects.create(pk=late_pk, subject_id=subject.pk, event="pending.decided")  # now it commits

    assert [row.pk for row in poller.read_new()] == [late_pk]
    assert poller.read_new() == [] and poller.gaps == {}


# database_sync_to_async closes "old" connections around each call, and a connection inside
# the test's transaction counts as one (on PostgreSQL it is really closed): run in autocommit.
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_polling_sends_each_new_row_to_its_subjects_group(subject):
    other = SubjectFactory(app=subject.app)
    layer = get_channel_layer()
    mine = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(subject_group(subject.pk), mine)
    poller = OutboxPoller()
    LiveEvent.objects.create(subject_id=other.pk, event="pending.created", payload={"id": 1})
    LiveEvent.objects.create(subject_id=subject.pk, event="pending.created", payload={"id": 2})

    async def poll_and_receive():
        sent = await poller.poll_once()
        return sent, await layer.receive(mine)

    sent, received = async_to_sync(poll_and_receive)()

    assert sent == 2
    assert received == live_message(subject.pk, "pending.created", {"id": 2})


# --- production: channels_redis, no outbox ----------------------------------------------------


REDIS_LAYER = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": ["redis://127.0.0.1:6379/0"], "prefix": "memoryweb-test-notify"},
    }
}


@pytest.mark.usefixtures("redis_server")
def test_with_channels_redis_an_event_goes_straight_to_the_layer(subject, django_capture_on_commit_callbacks):
    with override_settings(CHANNEL_LAYERS=REDIS_LAYER):
        layer = get_channel_layer()

        async def listen():
            channel = await layer.new_channel()
            await layer.group_add(subject_group(subject.pk), channel)
            return channel

        channel = async_to_sync(listen)()
        with django_capture_on_commit_callbacks(execute=True):
            notify(subject.pk, "pending.created", {"id": 3})

        async def receive():
            try:
                return await layer.receive(channel)
            finally:
                await layer.group_discard(subject_group(subject.pk), channel)
                await layer.flush()

        received = async_to_sync(receive)()

    assert received == live_message(subject.pk, "pending.created", {"id": 3})
    assert LiveEvent.objects.count() == 0
