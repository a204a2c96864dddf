"""The live-updates websocket, driven through the real ASGI application (session auth, origin
check, routing) with channels' WebsocketCommunicator. Events are written by `notify` from
sync code, as a Celery worker would, and reach the socket through the outbox poller (or
straight through Redis)."""

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from memory.models import Subject
from memoryweb.asgi import application
from memoryweb.live import notify
from tests.factories import SubjectFactory

IN_MEMORY = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
RECEIVE_TIMEOUT = 10  # an upper bound for a missing answer, not a timing assertion

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture(autouse=True)
def fresh_layer():
    with override_settings(CHANNEL_LAYERS=IN_MEMORY):
        yield


def make_user(name, **extra):
    return get_user_model().objects.create_user(username=name, password="pw-not-used", **extra)


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


def socket_for(user=None, *, origin="http://testserver", path="/ws/live/"):
    headers = [(b"origin", origin.encode())]
    if user is not None:
        headers.append((b"cookie", f"sessionid={session_cookie(user)}".encode()))
    return WebsocketCommunicator(application, path, headers=headers)


def notify_now(subject_id, event, payload=None):
    """What a worker does: outside a transaction, delivery happens at once."""
    return sync_to_async(notify)(subject_id, event, payload or {})


@pytest.fixture
def alice(db):
    return make_user("alice")


@pytest.fixture
def owned(alice):
    return SubjectFactory(external_id="alice", owner=alice)


@pytest.fixture
def bobs(db):
    return SubjectFactory(external_id="bob", owner=make_user("bob"))


def run(scenario):
    return async_to_sync(scenario)()


async def connected(communicator):
    ok, code = await communicator.connect(timeout=RECEIVE_TIMEOUT)
    assert ok, f"refused with {code}"
    return communicator


async def subscribe(communicator, subject_id):
    await communicator.send_json_to({"action": "subscribe", "subject_id": subject_id})
    return await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT)


def test_an_anonymous_socket_is_refused(db):
    async def scenario():
        ok, _ = await socket_for(None).connect(timeout=RECEIVE_TIMEOUT)
        return ok

    assert run(scenario) is False


def test_a_socket_opened_from_another_site_is_refused(alice):
    communicator = socket_for(alice, origin="https://evil.example")

    async def scenario():
        ok, _ = await communicator.connect(timeout=RECEIVE_TIMEOUT)
        return ok

    assert run(scenario) is False


def test_an_event_for_my_subject_reaches_my_open_page(owned, alice):
    communicator = socket_for(alice)

    async def scenario():
        await connected(communicator)
        subscribed = await subscribe(communicator, owned.pk)
        await notify_now(owned.pk, "pending.created", {"id": 41, "category": "health", "kind": "note"})
        event = await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT)
        await communicator.disconnect()
        return subscribed, event

    subscribed, event = run(scenario)

    assert subscribed == {"type": "subscribed", "subject_id": owned.pk}
    assert event == {
        "type": "event",
        "event": "pending.created",
        "subject_id": owned.pk,
        "payload": {"id": 41, "category": "health", "kind": "note"},
    }


def test_someone_elses_subject_cannot_be_subscribed_to(owned, alice, bobs):
    communicator = socket_for(alice)

    async def scenario():
        await connected(communicator)
        answers = [await subscribe(communicator, bobs.pk), await subscribe(communicator, 999_999)]
        await communicator.send_json_to({"action": "subscribe", "subject_id": "twelve"})
        answers.append(await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT))
        await communicator.disconnect()
        return answers

    other, missing, bad = run(scenario)

    assert other == {"type": "error", "error": "subject not found", "subject_id": bobs.pk}
    assert missing == {"type": "error", "error": "subject not found", "subject_id": 999_999}
    assert bad == {"type": "error", "error": "subject_id must be a positive integer"}


def test_a_frame_that_is_not_json_gets_an_error_and_the_socket_stays_open(owned, alice):
    communicator = socket_for(alice)

    async def scenario():
        await connected(communicator)
        await communicator.send_to(text_data="subscribe me please")
        error = await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT)
        subscribed = await subscribe(communicator, owned.pk)
        await communicator.disconnect()
        return error, subscribed

    error, subscribed = run(scenario)

    assert error == {"type": "error", "error": "action must be subscribe or unsubscribe"}
    assert subscribed == {"type": "subscribed", "subject_id": owned.pk}


def test_events_of_other_subjects_are_not_forwarded(owned, alice, bobs):
    communicator = socket_for(alice)

    async def scenario():
        await connected(communicator)
        await subscribe(communicator, owned.pk)
        await notify_now(bobs.pk, "pending.created", {"id": 1})
        await notify_now(owned.pk, "pending.created", {"id": 2})
        first = await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT)
        await communicator.disconnect()
        return first

    # the outbox delivers in order, so bob's event would have come first
    assert run(scenario)["payload"] == {"id": 2}


def test_an_event_is_not_forwarded_once_the_subject_changed_owner(alice):
    kept = SubjectFactory(external_id="kept", owner=alice)
    given_away = SubjectFactory(external_id="given-away", owner=alice)
    carol = make_user("carol")
    communicator = socket_for(alice)

    async def scenario():
        await connected(communicator)
        await subscribe(communicator, given_away.pk)
        await subscribe(communicator, kept.pk)
        await sync_to_async(Subject.objects.filter(pk=given_away.pk).update)(owner=carol)
        await notify_now(given_away.pk, "memory.changed")
        await notify_now(kept.pk, "memory.changed")
        first = await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT)
        await communicator.disconnect()
        return first

    assert run(scenario)["subject_id"] == kept.pk


def test_after_unsubscribing_a_page_hears_nothing_more_from_that_subject(alice):
    left = SubjectFactory(external_id="left", owner=alice)
    kept = SubjectFactory(external_id="kept", owner=alice)
    communicator = socket_for(alice)

    async def scenario():
        await connected(communicator)
        await subscribe(communicator, left.pk)
        await subscribe(communicator, kept.pk)
        await communicator.send_json_to({"action": "unsubscribe", "subject_id": left.pk})
        answer = await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT)
        await notify_now(left.pk, "memory.changed")
        await notify_now(kept.pk, "memory.changed")
        first = await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT)
        await communicator.disconnect()
        return answer, first

    answer, first = run(scenario)

    assert answer == {"type": "unsubscribed", "subject_id": left.pk}
    assert first["subject_id"] == kept.pk


def test_staff_may_follow_any_subject_and_hear_events_without_one(bobs):
    admin = make_user("admin", is_staff=True)
    communicator = socket_for(admin)

    async def scenario():
        await connected(communicator)
        subscribed = await subscribe(communicator, bobs.pk)
        await notify_now(None, "job.finished", {"id": 5, "kind": "votes_decay", "status": "done"})
        await notify_now(bobs.pk, "job.finished", {"id": 6, "kind": "consolidate", "status": "done"})
        received = [await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT) for _ in range(2)]
        await communicator.disconnect()
        return subscribed, received

    subscribed, received = run(scenario)

    assert subscribed["type"] == "subscribed"
    assert [(e["subject_id"], e["payload"]["id"]) for e in received] == [(None, 5), (bobs.pk, 6)]


def test_people_who_are_not_staff_do_not_hear_events_without_a_subject(owned, alice):
    communicator = socket_for(alice)

    async def scenario():
        await connected(communicator)
        await subscribe(communicator, owned.pk)
        await notify_now(None, "job.finished", {"id": 5})
        await notify_now(owned.pk, "job.finished", {"id": 6})
        first = await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT)
        await communicator.disconnect()
        return first

    assert run(scenario)["payload"] == {"id": 6}


def test_a_decision_in_the_consent_service_updates_the_open_queue(owned, alice, config_for_owned):
    """End to end: the service that decides a pending memory reaches the socket after commit."""
    from memory.models import ConsentCategory, ItemKind
    from memory.services.audit import Actor
    from memory.services.consent import memory_candidate_route, pending_reject

    # a transactional test starts from empty tables: the seeded category is put back
    ConsentCategory.objects.get_or_create(
        slug="health", defaults={"name": "Health", "description": "Health", "default_policy": "ask"}
    )
    communicator = socket_for(alice)
    actor = Actor.user(alice)

    def queue_and_reject():
        outcome = memory_candidate_route(
            subject=owned,
            kind=ItemKind.NOTE,
            payload={"content": "Was diagnosed with asthma", "tags": []},
            category="health",
            actor=actor,
            config=config_for_owned,
        )
        pending_reject(pending=outcome.obj, actor=actor)
        return outcome.obj.pk

    async def scenario():
        await connected(communicator)
        await subscribe(communicator, owned.pk)
        pending_id = await sync_to_async(queue_and_reject)()
        received = [await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT) for _ in range(2)]
        await communicator.disconnect()
        return pending_id, received

    pending_id, received = run(scenario)

    assert [(e["event"], e["payload"]["id"]) for e in received] == [
        ("pending.created", pending_id),
        ("pending.decided", pending_id),
    ]


@pytest.fixture
def config_for_owned(owned):
    from memory.config import get_config

    return get_config(owned.app)


@pytest.mark.usefixtures("redis_server")
def test_with_channels_redis_an_event_reaches_the_socket_without_the_outbox(owned, alice):
    from memoryweb.models import LiveEvent

    redis_layer = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:6379/0"], "prefix": "memoryweb-test-live"},
        }
    }
    with override_settings(CHANNEL_LAYERS=redis_layer):
        communicator = socket_for(alice)

        async def scenario():
            await connected(communicator)
            await subscribe(communicator, owned.pk)
            await notify_now(owned.pk, "memory.changed", {"kind": "fact", "id": 9})
            event = await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT)
            await communicator.disconnect()
            return event

        event = run(scenario)

    assert event["payload"] == {"kind": "fact", "id": 9}
    assert LiveEvent.objects.count() == 0
