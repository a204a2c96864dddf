"""The task outbox (memoryweb/outbox.py): a task asked for is saved with the write that needs it,
reaches the broker after commit, and when the broker was down, later."""

import shutil
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from kombu import Connection

from chat.models import ReflectionRun
from memory.models import ConversationTopic
from memory.services import note_store
from memoryweb.celery import app as celery_app
from memoryweb.models import Counter, TaskIntent
from memoryweb.outbox import BATCHED, SENT, backoff, batch_dispatch, enqueue, intent_dispatch, outbox_dispatch
from tests.support import wait_until

TRANSPORT = "memoryweb.broker:AtomicFilesystemTransport"


class FolderBroker:
    """The app's filesystem broker moved into a folder of the test, which can be taken down
    (a plain file where the queue folder should be: nothing can be written, not even by root)
    and brought back."""

    def __init__(self, root: Path):
        self.root = root
        self.options = {
            "data_folder_in": str(root / "in"),
            "data_folder_out": str(root / "in"),
            "processed_folder": str(root / "processed"),
            "control_folder": str(root / "control"),
            "store_processed": False,
        }
        for sub in ("in", "processed", "control"):
            (root / sub).mkdir(parents=True)

    def down(self) -> None:
        shutil.rmtree(self.root / "in")
        (self.root / "in").write_text("not a folder")

    def up(self) -> None:
        (self.root / "in").unlink()
        (self.root / "in").mkdir()

    def take(self) -> list[tuple[str, list, dict]]:
        """The task messages waiting in the queues, taken off them (name, args, kwargs)."""
        taken = []
        with Connection(transport=TRANSPORT, transport_options=self.options) as conn:
            for name in settings.CELERY_TASK_QUEUES:
                queue = conn.SimpleQueue(name)
                while queue.qsize():
                    message = queue.get(timeout=1)
                    args, kwargs, _ = message.payload
                    taken.append((message.headers["task"], args, kwargs))
                    message.ack()
                queue.close()
        return taken


def _reset_pools():
    # the app keeps its broker connections in pools; new options take effect on new connections
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture
def broker(tmp_path):
    previous = celery_app.conf.broker_transport_options, celery_app.conf.task_always_eager
    folder = FolderBroker(tmp_path / "broker")
    celery_app.conf.broker_transport_options = {**previous[0], **folder.options}
    celery_app.conf.task_always_eager = False  # tasks go through the broker (`bench` leaves it on)
    _reset_pools()
    yield folder
    celery_app.conf.broker_transport_options, celery_app.conf.task_always_eager = previous
    _reset_pools()


def _turn(client):
    conversation = client.post(
        "/api/v1/conversations", {"subject": "alice", "external_id": "c"}, format="json"
    )
    cid = conversation.json()["id"]
    client.post(
        f"/api/v1/conversations/{cid}/messages", {"text": "Call me Sam. I work at Acme."}, format="json"
    )
    return cid


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_response_posted_while_the_broker_is_down_is_saved_and_its_reflection_runs_once_it_is_back(
    client, subject, broker
):
    cid = _turn(client)
    assert broker.take() == [("chat.topics_refresh", [cid], {})]  # the user's message: its topics
    broker.down()

    posted = client.post(
        f"/api/v1/conversations/{cid}/responses", {"text": "Hi Sam!", "external_id": "r1"}, format="json"
    )
    retried = client.post(
        f"/api/v1/conversations/{cid}/responses", {"text": "Hi Sam!", "external_id": "r1"}, format="json"
    )

    assert (posted.status_code, retried.status_code) == (201, 200)
    run = ReflectionRun.objects.get()
    # the retry queued nothing more: the reply's reflection and its topics' refresh wait
    unsent = list(TaskIntent.objects.filter(sent_at__isnull=True).order_by("pk"))
    assert run.status == "queued"
    assert [(i.task, i.args, i.attempts) for i in unsent] == [
        ("chat.turn_reflect", [run.pk], 1),
        ("chat.topics_refresh", [cid], 1),
    ]
    assert all("NotADirectoryError" in i.last_error for i in unsent)
    assert Counter.objects.get(name="outbox.undelivered").value == 2

    broker.up()
    assert outbox_dispatch()["sent"] == 0  # not due yet: it backs off
    with time_machine.travel(timezone.now() + backoff(1) + timedelta(seconds=1)):
        assert outbox_dispatch() == {"sent": 2, "unsent": 0, "pruned": 0}
    assert outbox_dispatch()["sent"] == 0  # delivered once

    delivered = broker.take()
    assert delivered == [("chat.turn_reflect", [run.pk], {}), ("chat.topics_refresh", [cid], {})]
    for name, args, kwargs in delivered:
        celery_app.tasks[name].apply(args=args, kwargs=kwargs)  # what the worker that takes it does
    run.refresh_from_db()
    assert run.status == "done" and run.stats["facts"] >= 1
    # "Sam", named in both messages, is what the conversation is about
    assert list(ConversationTopic.objects.filter(conversation_id=cid).values_list("label", "status")) == [
        ("sam", "active")
    ]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_with_the_broker_up_the_task_is_handed_over_at_commit_and_marked_sent(client, subject, broker):
    cid = _turn(client)

    posted = client.post(f"/api/v1/conversations/{cid}/responses", {"text": "Hi Sam!"}, format="json")

    assert posted.status_code == 201
    run = ReflectionRun.objects.get()
    intent = TaskIntent.objects.get(task="chat.turn_reflect")
    assert intent.sent_at is not None and intent.attempts == 1 and intent.last_error == ""
    assert not TaskIntent.objects.filter(sent_at__isnull=True).exists()
    assert broker.take() == [
        ("chat.turn_reflect", [run.pk], {}),
        ("chat.topics_refresh", [cid], {}),  # the user's message
        ("chat.topics_refresh", [cid], {}),  # the reply
    ]


def test_nothing_is_queued_when_the_transaction_rolls_back(db, django_capture_on_commit_callbacks):
    from django.db import transaction

    with django_capture_on_commit_callbacks() as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            enqueue("memoryweb.tasks.ping", "/nowhere")
            raise RuntimeError("rolled back")

    assert TaskIntent.objects.count() == 0 and callbacks == []


def test_a_row_another_dispatcher_holds_is_not_sent_twice(db, broker):
    intent = TaskIntent.objects.create(task="memoryweb.tasks.ping", args=["/nowhere"])
    first = intent_dispatch(intent.pk)
    second = intent_dispatch(intent.pk)

    assert (first, second) == ("sent", "held")
    assert broker.take() == [("memoryweb.tasks.ping", ["/nowhere"], {})]


def test_the_backoff_grows_and_is_capped():
    waits = [backoff(n).total_seconds() for n in range(1, 12)]

    assert waits[:4] == [5, 10, 20, 40] and max(waits) == 300 and waits == sorted(waits)


def test_a_dispatch_stops_at_the_first_refusal_and_prunes_old_sent_rows(db, broker):
    old = TaskIntent.objects.create(task="memoryweb.tasks.ping", sent_at=timezone.now() - timedelta(days=2))
    waiting = [TaskIntent.objects.create(task="memoryweb.tasks.ping", args=[f"/p{i}"]) for i in range(3)]
    broker.down()

    result = outbox_dispatch()

    assert result == {"sent": 0, "unsent": 3, "pruned": 1}
    assert not TaskIntent.objects.filter(pk=old.pk).exists()
    attempts = dict(TaskIntent.objects.values_list("pk", "attempts"))
    assert [attempts[w.pk] for w in waiting] == [1, 0, 0]  # the others were not tried


def test_eager_tasks_run_after_commit_as_before(
    db, eager_tasks, tmp_path, django_capture_on_commit_callbacks
):
    pong = tmp_path / "pong"
    with django_capture_on_commit_callbacks(execute=True):
        enqueue("memoryweb.tasks.ping", str(pong))
        assert not pong.exists()

    assert pong.read_text() == "pong"
    assert TaskIntent.objects.get().sent_at is not None


def test_the_outbox_is_listed_read_only_in_the_admin(admin_client):
    intent = TaskIntent.objects.create(
        task="chat.turn_reflect", args=[7], attempts=2, last_error="OSError: x"
    )

    listed = admin_client.get(reverse("admin:memoryweb_taskintent_changelist"), {"q": "turn_reflect"})
    shown = admin_client.get(reverse("admin:memoryweb_taskintent_change", args=[intent.pk]))
    changed = admin_client.post(reverse("admin:memoryweb_taskintent_change", args=[intent.pk]), {"task": "x"})

    assert listed.status_code == 200 and "chat.turn_reflect" in listed.content.decode()
    assert shown.status_code == 200 and changed.status_code == 403
    assert TaskIntent.objects.get().task == "chat.turn_reflect"


# --- batched tasks: the link rows of notes stored close together go as one message ------

SIZE = BATCHED["memory.note_link"]


def link_batches(broker) -> list[list[int]]:
    return [args[0] for name, args, _ in broker.take() if name == "memory.note_link"]


def test_due_link_rows_go_as_one_message_of_at_most_the_batch_size(
    db, broker, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks():  # not run: the test sends them itself
        for note_id in range(1, SIZE + 4):
            enqueue("memory.note_link", note_id)

    assert batch_dispatch("memory.note_link") == (SENT, SIZE)
    assert batch_dispatch("memory.note_link") == (SENT, 3)
    assert batch_dispatch("memory.note_link")[1] == 0
    assert link_batches(broker) == [list(range(1, SIZE + 1)), list(range(SIZE + 1, SIZE + 4))]
    assert not TaskIntent.objects.filter(sent_at__isnull=True).exists()


def test_the_dispatcher_sends_link_rows_batched_and_the_others_one_by_one(
    db, broker, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks():
        for note_id in (7, 8, 9):
            enqueue("memory.note_link", note_id)
        enqueue("memory.note_embed", 7)

    assert outbox_dispatch()["sent"] == 4
    taken = broker.take()
    assert sorted(taken) == [("memory.note_embed", [7], {}), ("memory.note_link", [[7, 8, 9]], {})]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_notes_stored_one_after_another_queue_one_link_task(subject, actor, config, broker):
    texts = [f"Alice visited restaurant number {i} in Lisbon" for i in range(5)]
    notes = [note_store(subject=subject, content=t, actor=actor, config=config)[0] for t in texts]

    got = []
    assert wait_until(lambda: got.extend(link_batches(broker)) or got)
    assert got == [[note.pk for note in notes]]
    assert not TaskIntent.objects.filter(task="memory.note_link", sent_at__isnull=True).exists()
