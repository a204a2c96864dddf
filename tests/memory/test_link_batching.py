"""Link work for notes stored close together goes as one task (memory.tasks.LinkBatcher)."""

import random
from queue import Empty

import pytest
from django.conf import settings
from kombu import Connection

from memory.models import NoteLink
from memory.services import note_store
from memory.tasks import LinkBatcher, note_link_task
from tests.support import wait_until


def link_batches_queued(wanted) -> list[list[int]]:
    """The id lists of the link tasks queued in the configured broker whose ids are all in
    `wanted` (no other test's messages are taken: those go back)."""
    batches = []
    with Connection(
        transport=settings.CELERY_BROKER_TRANSPORT, transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS
    ) as conn:
        queue = conn.SimpleQueue(settings.CELERY_TASK_DEFAULT_QUEUE)
        while True:
            try:
                message = queue.get_nowait()
            except Empty:
                break
            args = message.payload[0]
            ids = args[0] if args else None
            if (
                message.headers.get("task") == "memory.note_link"
                and isinstance(ids, list)
                and set(ids) <= set(wanted)
            ):
                batches.append(ids)
                message.ack()
        queue.close()  # what was not ours goes back
    return batches


@pytest.fixture
def first_id():
    return random.randrange(10**12, 2 * 10**12)  # ids no note has: only this test's messages


def made_up(first_id):
    return range(first_id, first_id + 1000)


def test_ids_added_together_go_as_one_task_of_at_most_size_ids(first_id):
    batcher = LinkBatcher(window=3600, size=3)
    for i in range(4):
        batcher.add(first_id + i)  # the third fills a batch, which goes at once
    assert link_batches_queued(made_up(first_id)) == [[first_id, first_id + 1, first_id + 2]]
    batcher.flush()
    assert link_batches_queued(made_up(first_id)) == [[first_id + 3]]


def test_a_batch_goes_when_its_window_ends(first_id):
    batcher = LinkBatcher(window=0.2, size=100)
    batcher.add(first_id)
    batcher.add(first_id + 1)
    got = []
    assert wait_until(lambda: got.extend(link_batches_queued(made_up(first_id))) or got)
    assert got == [[first_id, first_id + 1]]


def test_a_link_task_links_every_note_of_its_batch_and_still_takes_one_id(subject, actor, config):
    texts = [
        "Alice's favourite restaurant is Taberna do Mar in Lisbon",
        "Alice had sushi with Bob at a Lisbon restaurant in May",
        "Alice ate at a seafood restaurant in Lisbon",
    ]
    notes = [note_store(subject=subject, content=t, actor=actor, config=config)[0] for t in texts]
    assert not NoteLink.objects.exists()  # the test's transaction never commits: no task ran

    result = note_link_task([notes[1].pk, notes[2].pk])
    linked = set(NoteLink.objects.values_list("src_id", flat=True))
    assert result["notes"] == 2 and linked == {notes[1].pk, notes[2].pk}
    assert note_link_task(notes[0].pk)["notes"] == 1  # a message queued before batching


def test_notes_stored_one_after_another_queue_one_link_task(
    subject, actor, config, django_capture_on_commit_callbacks
):
    from memory.tasks import link_batcher

    texts = [f"Alice visited restaurant number {i} in Lisbon" for i in range(5)]
    with django_capture_on_commit_callbacks(execute=True):
        notes = [note_store(subject=subject, content=t, actor=actor, config=config)[0] for t in texts]
    link_batcher.flush()  # rather than wait for the window
    batches = link_batches_queued({n.pk for n in notes})
    # one task for the five (a run that stopped before reading its message may have left one
    # like it: the ids restart with every test database)
    assert [n.pk for n in notes] in batches and all(len(batch) == 5 for batch in batches)
