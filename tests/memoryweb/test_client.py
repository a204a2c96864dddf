"""memoryweb.client, one test suite over four clients: MemoryWeb and AsyncMemoryWeb, each local
(in this process, through Django's WSGI stack) and over HTTP to a live server on a real socket.

The async clients run the same test bodies through `Synced`, which runs each method's coroutine
to its end (asgiref's async_to_sync, so Django's sync code stays on this thread and its database
connection). The live server shares the test's in-memory SQLite connection (pytest-django's
live_server), so each test still rolls back."""

import asyncio
import datetime
import inspect
import json
import re

import httpx
import pytest
from asgiref.sync import async_to_sync
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.urls import URLPattern, URLResolver, get_resolver

from chat.models import ReflectionRun
from memory.models import (
    Conversation,
    Lesson,
    Message,
    Note,
    PendingMemory,
    Procedure,
    ProfileFact,
    RetrievalEvent,
    Subject,
    SubjectConsent,
    VoteEvent,
)
from memory.services import api_key_create
from memory.services.consent import memory_candidate_route
from memoryweb import client as results
from memoryweb.client import (
    ADMIN_ENDPOINTS,
    ENDPOINTS,
    AsyncMemoryWeb,
    AsyncMemoryWebAdmin,
    Context,
    MemoryWeb,
    MemoryWebAdmin,
    MemoryWebError,
    _WSGIAsyncTransport,
    connect,
    connect_async,
)

KINDS = ["local-sync", "http-sync", "local-async", "http-async"]


class RecordingTransport(httpx.BaseTransport):
    """Passes requests on and keeps each one's method, path and JSON body in `sent`."""

    def __init__(self, inner, sent):
        self.inner, self.sent = inner, sent

    def handle_request(self, request):
        request.read()
        self.sent.append(
            (request.method, request.url.path, json.loads(request.content) if request.content else None)
        )
        return self.inner.handle_request(request)

    def close(self):
        self.inner.close()


class AsyncRecordingTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner, sent):
        self.inner, self.sent = inner, sent

    async def handle_async_request(self, request):
        await request.aread()
        self.sent.append(
            (request.method, request.url.path, json.loads(request.content) if request.content else None)
        )
        return await self.inner.handle_async_request(request)

    async def aclose(self):
        await self.inner.aclose()


class Synced:
    """An AsyncMemoryWeb called like a MemoryWeb: each method's coroutine is run to its end."""

    def __init__(self, client):
        self._client = client

    def __getattr__(self, name):
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            async def run():
                result = attr(*args, **kwargs)
                assert inspect.isawaitable(result), f"AsyncMemoryWeb.{name} returned no awaitable"
                return await result

            return async_to_sync(run)()

        return call

    def close(self):
        async_to_sync(self._client.aclose)()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


@pytest.fixture
def inline(db):
    # The test's transaction owns the DB connection; Django would close it at the end of each
    # request (its own test client switches this off the same way).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def sent():
    return []


@pytest.fixture(params=KINDS)
def kind(request):
    return request.param


@pytest.fixture
def make_client(request, kind, inline, sent):
    """make_client(key, path="") → a client of this test's kind, its requests kept in `sent`."""
    base = request.getfixturevalue("live_server").url if kind.startswith("http") else "http://testserver"
    app = get_wsgi_application()
    made = []

    def make(key, path="", admin=False):
        url = base + path
        sync_cls, async_cls = (MemoryWebAdmin, AsyncMemoryWebAdmin) if admin else (MemoryWeb, AsyncMemoryWeb)
        if kind == "local-sync":
            client = sync_cls(url, key, transport=RecordingTransport(httpx.WSGITransport(app=app), sent))
        elif kind == "http-sync":
            client = sync_cls(url, key, transport=RecordingTransport(httpx.HTTPTransport(), sent))
        elif kind == "local-async":
            client = Synced(
                async_cls(url, key, transport=AsyncRecordingTransport(_WSGIAsyncTransport(app), sent))
            )
        else:
            # no kept-alive connection: each call runs on an event loop of its own
            inner = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_keepalive_connections=0))
            client = Synced(async_cls(url, key, transport=AsyncRecordingTransport(inner, sent)))
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture
def memory(api_key, make_client):
    return make_client(api_key)


def test_the_chat_app_loop_round_trips_through_the_sidecar(memory, app, sent):
    conversation = memory.conversation("alice", external_id="chat-1")
    memory.add_message(conversation["id"], "I'm off to Lisbon next week, any restaurant tips?")
    memory.profile_set("alice", "name", "Alice")
    memory.profile_set("alice", "allergy", "peanuts", pinned=False, keywords=["restaurant"])
    stored = memory.note_store("alice", "Alice loved Taberna do Mar in Lisbon", tags=["food"])
    assert [n["id"] for n in memory.notes_recall("alice", "Lisbon restaurant")] == [stored["id"]]

    first = memory.context("alice", "any restaurant tips for Lisbon?", conversation_id=conversation["id"])
    memory.respond(conversation["id"], "Taberna do Mar again? Mind the peanuts.")
    second = memory.context("alice", "any restaurant tips for Lisbon?", conversation_id=conversation["id"])

    assert isinstance(first, Context) and first.unchanged is False
    assert "- name: Alice" in first.prompt and "- allergy: peanuts" in first.prompt
    assert f"n:{stored['id']}" in first.prompt
    assert first.prompt == first.data["stable_prefix"] + "\n\n" + first.data["tail"]
    assert second.unchanged is True
    assert all(block["text"] is None for block in second.data["blocks"]) and second.data["tail"] == ""
    assert second.prompt == first.prompt
    assert (second.stable_prefix, second.tail) == (first.stable_prefix, first.tail)
    assert second.retrieval_event_id != first.retrieval_event_id
    assert RetrievalEvent.objects.count() == 2
    assert not any(body and body.get("full") for _, _, body in sent)  # served from the cache
    assert list(Message.objects.values_list("role", flat=True)) == ["user", "assistant"]
    assert Conversation.objects.get().subject.app == app


def test_the_prompt_keeps_unchanged_blocks_and_takes_the_changed_one(memory):
    conversation = memory.conversation("alice", external_id="c")
    memory.note_store("alice", "Alice's cat is called Miso")
    memory.context("alice", "what is my cat called?", conversation_id=conversation["id"])
    memory.profile_set("alice", "city", "Porto")

    context = memory.context("alice", "what is my cat called?", conversation_id=conversation["id"])

    unchanged = {b["name"]: b["unchanged"] for b in context.data["blocks"]}
    assert unchanged == {
        "stable_prefix": True,
        "profile": False,
        "recalled": True,
        "memory-index": True,
        "lessons": True,
        "procedures": True,
        "contract": True,
        "state": True,
        "consequences": True,
        "topics": True,
        "transcript": True,
    }
    assert "- city: Porto" in context.prompt and "Miso" in context.prompt
    headings = [line for line in context.prompt.splitlines() if line.startswith("### ")]
    assert headings == ["### profile", "### recalled"]


def test_a_client_that_never_saw_the_blocks_asks_once_for_the_full_context(
    memory, api_key, make_client, sent
):
    conversation = memory.conversation("alice", external_id="c")
    memory.note_store("alice", "Alice's cat is called Miso")
    first = memory.context("alice", "my cat?", conversation_id=conversation["id"])

    with make_client(api_key, "/api/v1/") as restarted:
        context = restarted.context("alice", "my cat?", conversation_id=conversation["id"])

    assert context.prompt == first.prompt
    assert context.data["unchanged"] is True and context.data["blocks"][0]["text"] is not None
    assert [body.get("full") for method, path, body in sent if path.endswith("/context")] == [
        None,
        None,
        True,
    ]


def test_a_context_without_a_conversation_is_complete_every_time(memory):
    memory.profile_set("alice", "name", "Alice")

    context = memory.context("alice", "hello", k=2)

    assert context.prompt.startswith("## Memory") and context.prompt.endswith("- name: Alice")
    assert context.text("profile") == "### profile\n- name: Alice"
    assert context.items[0]["id"].startswith("f:") and context.tokens["total"] > 0


def test_every_client_method_reaches_its_endpoint(memory):
    conversation = memory.conversation("alice", external_id="c", scope="work", working_dir="/src")
    assert memory.conversation("alice", external_id="c")["id"] == conversation["id"]
    batch = memory.add_messages(conversation["id"], [{"text": "one"}, {"role": "assistant", "text": "two"}])
    assert [m["text"] for m in memory.messages(conversation["id"])] == ["one", "two"]
    assert memory.messages(conversation["id"], limit=1, before=batch[1]["id"])[0]["text"] == "one"
    assert memory.conversation_get(conversation["id"])["message_count"] == 2
    assert [c["id"] for c in memory.conversations("alice")] == [conversation["id"]]

    memory.profile_set("alice", "home city", "Lyon")
    memory.profile_set("alice", "home city", "Porto", mode="personal_assistant")
    assert sorted(f["value"] for f in memory.profile("alice")) == ["Lyon", "Porto"]
    assert memory.profile_remove("alice", "home city", mode="personal_assistant")["value"] == "Porto"
    assert [f["value"] for f in memory.profile_history("alice", "home city")] == ["Lyon", "Porto"]

    note = memory.note_store(
        "alice", "Deploys go out on Tuesdays", tags=["ops"], conversation_id=conversation["id"]
    )
    assert note["scope"] == "work"
    assert memory.modes()[0]["name"] == "general_qa"
    assert memory.mode("companion")["builtin"] is True
    qualified = memory.note_store("alice", "Alice journals every night before bed", mode="companion")
    assert qualified["mode"] == "companion"
    memory.note_forget("alice", qualified["id"])
    assert [
        n["id"] for n in memory.notes_recall("alice", tags=["ops"], scope="work", working_dir="/src")
    ] == [note["id"]]
    assert memory.note_edit("alice", note["id"], content="Deploys go out on Wednesdays")["version"] == 2
    assert [v["version"] for v in memory.note("alice", note["id"])["versions"]] == [1, 2]
    assert memory.vote("alice", f"n:{note['id']}", "useful")["score"] == 0.5
    assert memory.vote("alice", f"n:{note['id']}", "intrusive", mode="companion")["mode"] == "companion"
    assert memory.note_forget("alice", note["id"]) is None

    assert not Note.objects.exists()
    assert list(VoteEvent.objects.order_by("pk").values_list("signal", "mode")) == [
        ("useful", ""),
        ("intrusive", "companion"),
    ]
    assert ProfileFact.objects.filter(valid_to=None).get().value == "Lyon"


def test_datetimes_are_accepted_as_objects_or_iso_strings(memory):
    conversation = memory.conversation("alice")
    when = datetime.datetime(2025, 3, 1, 10, 0, tzinfo=datetime.UTC)

    memory.add_message(conversation["id"], "as an object", occurred_at=when)
    memory.add_message(conversation["id"], "as a string", occurred_at="2025-03-02T10:00:00+00:00")
    memory.add_messages(conversation["id"], [{"text": "in a batch", "occurred_at": when}])
    memory.respond(conversation["id"], "a reply", occurred_at=when)
    note = memory.note_store("alice", "Alice moved to Porto", occurred_at=when)

    assert dict(Message.objects.values_list("text", "occurred_at")) == {
        "as an object": when,
        "as a string": when + datetime.timedelta(days=1),
        "in a batch": when,
        "a reply": when,
    }
    assert Note.objects.get(pk=note["id"]).occurred_at == when
    with pytest.raises(TypeError):
        memory.add_message(conversation["id"], "x", occurred_at=1700000000)


def test_a_message_and_a_reply_can_name_their_speakers(memory):
    conversation = memory.conversation("alice")

    said = memory.add_message(conversation["id"], "I paint", name="Melanie")
    replied = memory.respond(conversation["id"], "Lovely", name="Caroline")
    batch = memory.add_messages(conversation["id"], [{"text": "Me too", "name": "Jon"}])
    plain = memory.add_message(conversation["id"], "no name")

    assert (said.name, replied.name, batch[0].name, plain.name) == ("Melanie", "Caroline", "Jon", "")
    assert list(Message.objects.order_by("pk").values_list("role", "name")) == [
        ("user", "Melanie"),
        ("assistant", "Caroline"),
        ("user", "Jon"),
        ("user", ""),
    ]


def test_posting_the_same_external_id_twice_returns_the_first_message(memory):
    conversation = memory.conversation("alice")

    first = memory.add_message(conversation["id"], "hello", external_id="m-1")
    again = memory.add_message(conversation["id"], "hello", external_id="m-1")

    assert again["id"] == first["id"]
    assert Message.objects.count() == 1


# --- errors -----------------------------------------------------------------------------------
def test_bad_input_raises_an_error_naming_the_field(memory):
    with pytest.raises(MemoryWebError) as error:
        memory.note_store("alice", "x" * 4001)

    assert (error.value.status, error.value.code, error.value.field) == (400, "invalid", "content")
    assert "4000" in error.value.message
    assert not Note.objects.exists()


def test_a_batch_with_one_bad_message_raises_and_writes_nothing(memory):
    conversation = memory.conversation("alice")

    with pytest.raises(MemoryWebError) as error:
        memory.add_messages(conversation["id"], [{"text": "fine"}, {"text": "fine", "role": "robot"}])

    assert (error.value.status, error.value.field) == (400, "messages.1.role")
    assert not Message.objects.exists()


def test_a_bad_key_raises_401(make_client, api_key):
    prefix = api_key.split("_")[1]
    with make_client(f"mw_{prefix}_wrong") as memory:
        with pytest.raises(MemoryWebError) as error:
            memory.profile("alice")

    assert (error.value.status, error.value.code, error.value.field) == (401, "authentication_failed", None)


def test_another_apps_note_is_404(memory, other_app, actor, make_client):
    note = memory.note_store("alice", "Alice's cat is called Miso")
    _, other_key = api_key_create(app=other_app, actor=actor)
    with make_client(other_key) as other:
        other.note_store("alice", "their own alice")  # the other app has an "alice" of its own
        with pytest.raises(MemoryWebError) as error:
            other.note("alice", note["id"])

    assert (error.value.status, error.value.code) == (404, "not_found")
    assert "Miso" not in str(error.value)


def test_an_answer_that_is_not_our_json_still_raises_a_memoryweb_error(db):
    transport = httpx.MockTransport(lambda request: httpx.Response(502, text="<html>Bad gateway</html>"))
    with MemoryWeb("http://memory", "mw_a_b", transport=transport) as memory:
        with pytest.raises(MemoryWebError) as error:
            memory.profile("alice")

    assert (error.value.status, error.value.code) == (502, "http_502")
    assert "Bad gateway" in error.value.message


def test_a_server_that_cannot_be_reached_raises_status_0(db):
    def refuse(request):
        raise httpx.ConnectError("connection refused", request=request)

    with MemoryWeb("http://memory", "mw_a_b", transport=httpx.MockTransport(refuse)) as memory:
        with pytest.raises(MemoryWebError) as error:
            memory.context("alice", "hello")

    assert (error.value.status, error.value.code) == (0, "unreachable")
    assert isinstance(error.value.__cause__, httpx.ConnectError)


def test_subject_names_and_keys_are_quoted_in_the_url(memory):
    memory.profile_set("alice smith", "a.key: with spaces", "value")

    history = memory.profile_history("alice smith", "a.key: with spaces")

    assert [f["key"] for f in history] == ["a.key: with spaces"]
    assert ProfileFact.objects.get().subject.external_id == "alice smith"


# --- flush, consent, export and delete ------------------------------------------------------
HEALTH_FACT = {"key": "condition", "value": "type 2 diabetes", "pinned": True, "keywords": []}


@pytest.fixture
def queued(subject, actor, config):
    """A health fact waiting for alice's consent."""
    return memory_candidate_route(
        subject=subject, kind="fact", payload=HEALTH_FACT, category="health", actor=actor, config=config
    ).obj


def test_flush_reports_whether_the_reflection_of_the_turn_is_done(memory):
    conversation = memory.conversation("alice", external_id="c")
    memory.respond(conversation["id"], "hi")  # queues a run; its task starts only on commit

    waiting = memory.flush("alice", conversation["id"], timeout_ms=0)
    ReflectionRun.objects.filter(conversation_id=conversation["id"]).update(status="done")
    done = memory.flush("alice")

    assert (waiting["done"], waiting["pending"]) == (False, 1)
    assert (done["done"], done["pending"]) == (True, 0)


def test_flush_after_respond_lets_the_app_read_what_reflection_wrote(
    memory, subject, django_capture_on_commit_callbacks
):
    from memoryweb.celery import app as celery_app

    conversation = memory.conversation("alice", external_id="c")
    memory.add_message(conversation["id"], "Call me Sam. I work at Acme as a data engineer.")
    celery_app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            memory.respond(conversation["id"], "Hi Sam!")
    finally:
        celery_app.conf.task_always_eager = False

    flushed = memory.flush("alice", conversation["id"])

    assert (flushed["done"], flushed["pending"]) == (True, 0)
    assert ReflectionRun.objects.get().status == "done"
    assert any(f["origin"] == "reflection" for f in memory.export("alice")["facts"])


def test_consent_policies_are_listed_and_set(memory, subject):
    categories = memory.consent_categories()
    before = memory.consent("alice")

    policies = memory.consent_set("alice", "health", "deny")

    assert {c["slug"] for c in categories} == {p["category"] for p in before}
    assert {c["default_policy"] for c in categories} == {"ask"}
    health = next(p for p in policies if p["category"] == "health")
    assert (health["policy"], health["is_default"]) == ("deny", False)
    assert SubjectConsent.objects.get(subject=subject).policy == "deny"


def test_a_bad_consent_policy_raises_an_error_naming_the_field(memory, subject):
    with pytest.raises(MemoryWebError) as error:
        memory.consent_set("alice", "health", "maybe")

    assert (error.value.status, error.value.code, error.value.field) == (400, "invalid", "policy")
    assert not SubjectConsent.objects.exists()


def test_a_pending_memory_is_approved_into_a_fact(memory, subject, queued):
    listed = memory.pending("alice")

    approved = memory.pending_approve("alice", queued.pk)

    assert [(p["id"], p["category"], p["payload"]["value"]) for p in listed] == [
        (queued.pk, "health", "type 2 diabetes")
    ]
    fact = ProfileFact.objects.get(subject=subject)
    assert (approved["status"], approved["result_id"]) == ("approved", fact.pk)
    assert (fact.value, fact.category) == ("type 2 diabetes", "health")
    assert memory.pending("alice") == []
    assert [p["id"] for p in memory.pending("alice", status="approved")] == [queued.pk]


def test_approving_twice_raises_and_stores_once(memory, queued):
    memory.pending_approve("alice", queued.pk)

    with pytest.raises(MemoryWebError) as error:
        memory.pending_approve("alice", queued.pk)

    assert (error.value.status, error.value.field) == (400, "status")
    assert ProfileFact.objects.count() == 1


def test_a_rejected_pending_memory_is_not_stored(memory, queued):
    rejected = memory.pending_reject("alice", queued.pk)

    assert (rejected["status"], rejected["result_id"]) == ("rejected", None)
    assert PendingMemory.objects.get().status == "rejected"
    assert not ProfileFact.objects.exists()


def test_another_apps_pending_memory_is_404(memory, other_app, actor, make_client, queued):
    _, other_key = api_key_create(app=other_app, actor=actor)
    with make_client(other_key) as other:
        other.conversation("alice")  # the other app's own alice
        with pytest.raises(MemoryWebError) as error:
            other.pending_approve("alice", queued.pk)

    assert (error.value.status, error.value.code) == (404, "not_found")
    assert PendingMemory.objects.get().status == "pending"


def test_export_holds_the_subjects_memory_and_delete_removes_it(memory, subject, queued):
    conversation = memory.conversation("alice", external_id="c")
    memory.add_message(conversation["id"], "hello")
    memory.profile_set("alice", "city", "Porto")
    memory.note_store("alice", "Alice's cat is called Miso")
    memory.consent_set("alice", "politics", "deny")

    exported = memory.export("alice")
    deleted = memory.subject_delete("alice")

    assert exported["subject"] == "alice"
    assert [f["value"] for f in exported["facts"]] == ["Porto"]
    assert [n["content"] for n in exported["notes"]] == ["Alice's cat is called Miso"]
    assert [m["text"] for m in exported["conversations"][0]["messages"]] == ["hello"]
    assert exported["consent"] == {"politics": "deny"}
    assert [(p["id"], p["category"]) for p in exported["pending"]] == [(queued.pk, "health")]
    assert deleted is None
    assert not Subject.objects.exists() and not Message.objects.exists() and not Note.objects.exists()
    with pytest.raises(MemoryWebError) as error:
        memory.export("alice")
    assert (error.value.status, error.value.field) == (404, "subject")


def test_the_client_names_the_mode_and_the_profile_and_reads_what_the_cache_did(memory, app, actor):
    from chat.models import ReflectionRun as Run
    from memory.services import app_config_set

    app_config_set(app=app, config={"memory": {"profiles": {"allowed": ["normal", "offline"]}}}, actor=actor)
    conversation = memory.conversation("alice", external_id="chat-modes")
    # a calm message: one with failure or loop signals ("keeps failing") is always built fresh,
    # for the consequence chains it may show (memory/context.py)
    memory.add_message(conversation["id"], "how do I deploy the billing api", profile="offline")
    memory.respond(conversation["id"], "Let us look at the logs.", profile="offline")

    first = memory.context(
        "alice",
        "how do I deploy the billing api",
        conversation_id=conversation["id"],
        mode="coding_debug",
        profile="offline",
    )
    again = memory.context(
        "alice",
        "how do I deploy the billing api",
        conversation_id=conversation["id"],
        mode="coding_debug",
        profile="offline",
    )

    assert first.mode == "coding_debug" and not first.from_cache and first.staleness == 0.0
    assert again.from_cache and 0.0 <= again.staleness <= 0.5
    assert Run.objects.get(conversation_id=conversation["id"]).profile == "offline"
    assert list(RetrievalEvent.objects.values_list("mode", "profile", "from_cache").order_by("pk")) == [
        ("coding_debug", "offline", False),
        ("coding_debug", "offline", True),
    ]
    with pytest.raises(MemoryWebError) as refused:
        memory.context("alice", "hi", mode="no_such_mode")
    assert refused.value.status == 400 and refused.value.field == "mode"


def test_connect_auto_picks_http_when_a_base_url_is_set_else_local(monkeypatch, api_key, inline):
    monkeypatch.setenv("MEMORYWEB_BASE_URL", "http://memory.example:9")
    monkeypatch.setenv("MEMORYWEB_API_KEY", api_key)
    with connect() as remote:
        assert str(remote._http.base_url) == "http://memory.example:9/api/v1/"
    monkeypatch.delenv("MEMORYWEB_BASE_URL")
    with connect() as local:
        assert local.conversation("alice", external_id="c-1")["id"] == Conversation.objects.get().id


def test_connect_without_a_key_raises_naming_the_field(monkeypatch):
    monkeypatch.delenv("MEMORYWEB_API_KEY", raising=False)
    with pytest.raises(MemoryWebError) as raised:
        connect("local")
    assert raised.value.field == "api_key"


# --- every route, both classes, typed results ------------------------------------------------
def _api_routes():
    """(HTTP method, path template) of every route under /api/v1/, the URL conf walked from the
    root: those an app key reaches, and the admin routes (an admin key); not the keyless one."""
    routes, admin = set(), set()

    def walk(patterns, prefix):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and route.startswith("api/v1/"):
                if route == "api/v1/live":
                    continue
                view = pattern.callback.view_class
                template = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route.removeprefix("api/v1"))
                for method in ("get", "post", "put", "patch", "delete"):
                    if hasattr(view, method):
                        (admin if template.startswith("/admin/") else routes).add((method.upper(), template))

    walk(get_resolver().url_patterns, "")
    return routes, admin


def test_every_route_of_the_url_conf_has_a_client_method():
    routes, admin = _api_routes()

    assert len(routes) > 60
    assert routes - set(ENDPOINTS.values()) == set()
    assert set(ENDPOINTS.values()) - routes == set()  # no method names a route that is gone
    for name in ENDPOINTS:
        assert callable(getattr(MemoryWeb, name)) and callable(getattr(AsyncMemoryWeb, name)), name
    assert admin == set(ADMIN_ENDPOINTS.values())
    for name in ADMIN_ENDPOINTS:
        method = name.removeprefix("admin_")
        assert callable(getattr(MemoryWebAdmin, method)) and callable(getattr(AsyncMemoryWebAdmin, method))


def test_the_async_client_has_the_sync_clients_methods_with_the_same_signatures():
    public = {n for n in dir(MemoryWeb) if not n.startswith("_")} - {"close"}

    assert public - {n for n in dir(AsyncMemoryWeb) if not n.startswith("_")} == set()
    for name in public:
        assert inspect.signature(getattr(MemoryWeb, name)) == inspect.signature(getattr(AsyncMemoryWeb, name))


def test_results_are_typed_and_still_dicts(memory):
    conversation = memory.conversation("alice", external_id="typed")
    note = memory.note_store("alice", "Alice's cat is called Miso", tags=["pets"])

    assert isinstance(conversation, results.Conversation) and conversation.id == conversation["id"]
    assert isinstance(note, results.Note) and (note.content, note.tags) == (
        "Alice's cat is called Miso",
        ["pets"],
    )
    assert note.raw == dict(note) and type(note.raw) is dict
    assert memory.flush("alice").done is True
    with pytest.raises(AttributeError):
        note.no_such_field  # noqa: B018


def test_a_parked_note_and_fact_leave_the_context_and_come_back_when_unparked(memory):
    memory.profile_set("alice", "hometown", "Braga", pinned=True)
    note = memory.note_store("alice", "Alice keeps her climbing shoes in the blue locker")

    fact = memory.profile_park("alice", "hometown")
    parked = memory.note_edit("alice", note.id, parked=True)
    hidden = memory.context("alice", "where are my climbing shoes? hometown?").prompt

    assert fact.parked_at and parked.parked_at
    assert "Braga" not in hidden and "blue locker" not in hidden

    memory.profile_park("alice", "hometown", parked=False)
    memory.note_edit("alice", note.id, parked=False)
    shown = memory.context("alice", "where are my climbing shoes? hometown?").prompt

    assert "Braga" in shown and "blue locker" in shown


def test_a_parked_lesson_and_procedure_leave_the_context_and_recall_and_come_back(memory, subject):
    lesson = Lesson.objects.create(subject=subject, text="Deploy the billing api only on Tuesdays.")
    procedure = Procedure.objects.create(
        subject=subject, title="Deploy the billing api", steps=["run the billing tests", "ship billing"]
    )
    question = "how do I deploy the billing api?"
    assert f"[l:{lesson.pk}]" in memory.context("alice", question).prompt

    parked = memory.lesson_park("alice", lesson.pk)
    parked_procedure = memory.procedure_park("alice", procedure.pk)
    hidden = memory.context("alice", question).prompt

    assert isinstance(parked, results.Lesson) and parked.parked_at
    assert isinstance(parked_procedure, results.Procedure) and parked_procedure.parked_at
    assert f"[l:{lesson.pk}]" not in hidden and f"[p:{procedure.pk}]" not in hidden
    assert memory.lessons("alice", query="deploy billing") == []
    assert memory.procedures("alice", query="deploy billing") == []

    assert memory.lesson_park("alice", lesson.pk, parked=False).parked_at is None
    assert memory.procedure_park("alice", procedure.pk, parked=False).parked_at is None
    shown = memory.context("alice", question).prompt

    assert f"[l:{lesson.pk}]" in shown and f"[p:{procedure.pk}]" in shown
    assert [item.id for item in memory.lessons("alice", query="deploy billing")] == [lesson.pk]


def test_lessons_and_procedures_are_listed_read_edited_and_deleted(memory, subject):
    lesson = Lesson.objects.create(subject=subject, text="Deploy the billing api on Tuesdays.")
    procedure = Procedure.objects.create(subject=subject, title="Deploy", steps=["build", "ship"])

    listed = memory.lessons("alice", query="deploy billing")
    edited = memory.lesson_edit("alice", lesson.pk, "Deploy the billing api on Wednesdays.")

    assert [(type(item), item.id) for item in listed] == [(results.Lesson, lesson.pk)]
    assert edited.text == memory.lesson("alice", lesson.pk).text == "Deploy the billing api on Wednesdays."
    assert [p.id for p in memory.procedures("alice", query="deploy")] == [procedure.pk]
    assert memory.procedure("alice", procedure.pk)["title"] == "Deploy"
    assert memory.lesson_delete("alice", lesson.pk) is None
    assert memory.procedure_delete("alice", procedure.pk) is None
    assert not Lesson.objects.exists() and not Procedure.objects.exists()
    with pytest.raises(MemoryWebError) as missing:
        memory.lesson("alice", lesson.pk)
    assert (missing.value.status, missing.value.field) == (404, "id")


def test_beliefs_contracts_documents_and_mental_models_are_reachable(memory, subject):
    fact = memory.profile_set("alice", "city", "Porto")
    conversation = memory.conversation("alice", external_id="reach")

    beliefs = memory.beliefs("alice")
    assert f"f:{fact.id}" in [b.id for b in beliefs]
    assert memory.belief("alice", f"f:{fact.id}")["id"] == f"f:{fact.id}"
    assert isinstance(memory.revisions("alice"), list)
    assert memory.contract("alice", "general_qa")["mode"] == "general_qa"
    assert isinstance(memory.contracts("alice"), list)
    assert isinstance(memory.memory_documents("alice"), list)
    assert isinstance(memory.memory_stats("alice"), dict)
    assert isinstance(memory.conversation_state(conversation.id), dict)
    created = memory.mental_model_create("alice", "home", "Where Alice lives")
    assert created.name == "home" and [m.name for m in memory.mental_models("alice")] == ["home"]
    assert memory.mental_model("alice", "home").name == "home"
    assert memory.mental_model_delete("alice", "home") is None
    with pytest.raises(MemoryWebError) as taken:
        memory.mental_model_create("alice", "Not A Name", "x")
    assert (taken.value.status, taken.value.field) == (400, "name")


def test_tools_are_listed_and_a_tool_call_runs_in_the_conversation(memory, subject):
    conversation = memory.conversation("alice", external_id="tools")
    names = [tool["function"]["name"] for tool in memory.tools()]
    call = {"id": "call_1", "type": "function", "function": {"name": "memory_notes_store"}}
    call["function"]["arguments"] = json.dumps({"content": "Alice moved to Lisbon"})

    answer = memory.tool_call(conversation.id, call)

    assert "memory_notes_store" in names
    assert answer.ok is True and answer.result["role"] == "tool"
    assert Note.objects.get(subject=subject).content == "Alice moved to Lisbon"


# --- the async client on its own -------------------------------------------------------------
def test_the_async_client_is_awaited_on_an_event_loop(api_key, inline):
    async def chat():
        transport = _WSGIAsyncTransport(get_wsgi_application())
        async with AsyncMemoryWeb("http://testserver", api_key, transport=transport) as memory:
            conversation = await memory.conversation("alice", external_id="aio")
            await memory.add_message(conversation.id, "hello")
            return conversation, await memory.messages(conversation.id)

    conversation, messages = async_to_sync(chat)()

    assert [m.text for m in messages] == ["hello"] and Conversation.objects.get().pk == conversation.id


def test_an_async_client_that_cannot_reach_the_server_raises_status_0(db):
    def refuse(request):
        raise httpx.ConnectError("connection refused", request=request)

    async def ask():
        async with AsyncMemoryWeb("http://memory", "mw_a_b", transport=httpx.MockTransport(refuse)) as memory:
            await memory.context("alice", "hello")

    with pytest.raises(MemoryWebError) as error:
        asyncio.run(ask())
    assert (error.value.status, error.value.code) == (0, "unreachable")


def test_connect_async_picks_its_transport_like_connect(monkeypatch, api_key, inline):
    monkeypatch.setenv("MEMORYWEB_BASE_URL", "http://memory.example:9")
    monkeypatch.setenv("MEMORYWEB_API_KEY", api_key)
    remote = connect_async()
    assert str(remote._http.base_url) == "http://memory.example:9/api/v1/"
    monkeypatch.delenv("MEMORYWEB_BASE_URL")

    async def open_one():
        async with connect_async() as local:
            return await local.conversation("alice", external_id="c-1")

    assert async_to_sync(open_one)().id == Conversation.objects.get().id
    with pytest.raises(MemoryWebError) as raised:
        connect_async("http", api_key=api_key)
    assert raised.value.field == "base_url"


def test_the_memory_operations_consolidation_and_import_go_through_the_client(memory, subject):
    memory.profile_set("alice", "city", "Porto")

    view = memory.memory_view("alice", message="where do I live?")
    diagnosis = memory.memory_diagnose("alice")
    queued = memory.consolidate("alice")
    waiting = memory.flush("alice", timeout_ms=0)
    exported = memory.export("alice")
    memory.subject_delete("alice")
    imported = memory.subject_import("alice", exported.raw)

    assert "- city: Porto" in view["stable_prefix"] + view["tail"]
    assert not RetrievalEvent.objects.exists()  # a view records nothing
    assert isinstance(diagnosis, dict)
    assert queued["status"] == "queued" and (waiting.done, waiting.jobs) == (False, 1)
    assert isinstance(imported, dict)
    assert [f.value for f in memory.profile("alice")] == ["Porto"]


def test_the_admin_client_reads_metrics_and_exports_a_conversation(make_client, actor, memory):
    from memory.services.admin_keys import admin_key_create

    _, raw = admin_key_create(name="ops", actor=actor)
    conversation = memory.conversation("alice", external_id="ops")
    memory.add_message(conversation.id, "hello")

    with make_client(raw, admin=True) as admin:
        snapshot = admin.metrics_compute(window_hours=1)
        exported = admin.conversation_export(conversation.id)
        with pytest.raises(MemoryWebError) as refused:
            make_client(raw).profile("alice")  # an admin key is no app key

    assert isinstance(snapshot, dict)
    assert [m["text"] for m in exported["messages"]] == ["hello"]
    assert refused.value.status == 401
