"""Operational profiles (memoryweb/profiles.py): named per request, checked against the App,
recorded on what the request writes and starts, and — offline, low_power — no model or remote
embedding call is made for that request or the background work it starts.

The model calls go over fake providers on the wire (tests/llm_wire.py, tests/embeddings_wire.py):
a profile that forbids them shows as requests that never reached the wire.
"""

import pytest

from chat.models import ReflectionRun
from consolidation.services.reclaim import _redo
from memory.config import get_config
from memory.context import context_build
from memory.embeddings import set_http_client_factory
from memory.models import JobRun, JobStatus, RetrievalEvent, Subject
from memory.services import app_config_set, note_store
from memory.services.conversations import conversation_get_or_create, message_add
from memoryweb.errors import ConfigError
from memoryweb.profiles import current_profile, profile_active, remote_calls_allowed
from tests.embeddings_wire import EmbeddingsWire

API = "/api/v1"


def allow(app, actor, *profiles, **memory):
    app_config_set(
        app=app, config={"memory": {"profiles": {"allowed": list(profiles)}, **memory}}, actor=actor
    )


# --- the request's profile is checked ---------------------------------------------------------
@pytest.mark.django_db
def test_the_context_names_its_profile_and_records_it(client, subject):
    response = client.post(
        f"{API}/context", {"subject": "alice", "message": "hello", "profile": "offline"}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["profile"] == "offline"
    assert RetrievalEvent.objects.get().profile == "offline"


@pytest.mark.django_db
@pytest.mark.parametrize("profile", ["panic", 3, None, ""])
def test_an_unknown_or_mistyped_profile_is_a_400_naming_the_field(client, subject, profile):
    response = client.post(
        f"{API}/context", {"subject": "alice", "message": "hello", "profile": profile}, format="json"
    )

    assert response.status_code == 400
    assert "profile" in response.json()["error"]["fields"]
    assert not RetrievalEvent.objects.exists()


@pytest.mark.django_db
def test_a_high_risk_profile_is_refused_until_the_app_opts_in(client, app, actor):
    body = {"subject": "bob", "message": "hello", "profile": "emergency"}

    refused = client.post(f"{API}/context", body, format="json")
    allow(app, actor, "normal", "emergency")
    accepted = client.post(f"{API}/context", body, format="json")

    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "not_allowed"
    assert refused.json()["error"]["field"] == "profile"
    assert accepted.status_code == 200
    assert list(RetrievalEvent.objects.values_list("profile", flat=True)) == ["emergency"]


@pytest.mark.django_db
def test_an_app_may_close_even_the_low_risk_profiles(client, app, actor):
    allow(app, actor, "normal")

    response = client.post(
        f"{API}/context", {"subject": "alice", "message": "hi", "profile": "low_power"}, format="json"
    )

    assert response.status_code == 403
    assert not Subject.objects.filter(external_id="alice").exists()


@pytest.mark.django_db
def test_the_allowed_list_only_takes_known_profiles(app, actor):
    with pytest.raises(ConfigError) as error:
        allow(app, actor, "normal", "panic")

    assert error.value.key == "memory.profiles.allowed"


def test_the_profile_in_force_is_scoped_to_its_block():
    assert current_profile() == "normal" and remote_calls_allowed()
    with profile_active("offline"):
        assert current_profile() == "offline" and not remote_calls_allowed()
        with profile_active("emergency"):
            assert remote_calls_allowed()
    assert current_profile() == "normal"


# --- offline and low_power make no remote calls ---------------------------------------------------
@pytest.fixture
def embeddings_wire(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    wire = EmbeddingsWire()
    previous = set_http_client_factory(wire.client)
    yield wire
    set_http_client_factory(previous)


@pytest.mark.django_db
@pytest.mark.parametrize("profile,calls", [("normal", 1), ("offline", 0), ("low_power", 0)])
def test_remote_embeddings_are_asked_only_when_the_profile_allows(
    subject, app, actor, embeddings_wire, profile, calls
):
    allow(app, actor, "normal", "offline", "low_power", embeddings={"provider": "openai"})
    config = get_config(app)

    context = context_build(subject=subject, message="where is the flat", config=config, profile=profile)

    assert context.profile == profile
    assert len(embeddings_wire.requests) == calls


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("profile,calls", [("normal", 1), ("offline", 0)])
def test_the_model_rewriter_is_asked_only_when_the_profile_allows(
    subject, app, actor, openai_wire, profile, calls
):
    allow(app, actor, "normal", "offline", llm={"rewriter": "openai/gpt-4o-mini"})
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    message_add(
        conversation=conversation, role="user", text="We booked the flat in Lisbon for June.", actor=actor
    )
    openai_wire.answer_json({"query": "price of the flat in Lisbon"})

    context = context_build(
        subject=subject,
        message="how much was it?",
        config=get_config(app),
        conversation=conversation,
        profile=profile,
    )

    assert len(openai_wire.requests) == calls
    # offline takes the heuristic rewrite instead: the history's words join the message
    assert ("lisbon" in context.rewritten_query.lower()) is True


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_reflection_started_offline_runs_offline_and_asks_no_model(
    client, app, actor, openai_wire, eager_tasks
):
    allow(app, actor, "normal", "offline", llm={"reflection": "openai/gpt-4o-mini"})
    opened = client.post(f"{API}/conversations", {"subject": "alice", "external_id": "c"}, format="json")
    conversation = opened.json()["id"]
    body = {
        "messages": [
            {"role": "user", "text": "My name is Alice and I live in Porto."},
            {"role": "assistant", "text": "Nice to meet you, Alice."},
        ],
        "profile": "offline",
    }

    response = client.post(f"{API}/conversations/{conversation}/messages", body, format="json")

    assert response.status_code == 201
    run = ReflectionRun.objects.get(conversation_id=conversation)
    assert run.profile == "offline"
    assert run.status == "done" and run.stats["source"] == "heuristic"
    assert openai_wire.requests == []


@pytest.mark.django_db
def test_a_single_message_and_a_reply_carry_the_profile_too(client, app, actor):
    allow(app, actor, "normal", "low_power")
    opened = client.post(f"{API}/conversations", {"subject": "alice", "external_id": "c"}, format="json")
    conversation = opened.json()["id"]

    client.post(
        f"{API}/conversations/{conversation}/messages",
        {"role": "user", "text": "hi", "profile": "low_power"},
        format="json",
    )
    reply = client.post(
        f"{API}/conversations/{conversation}/responses",
        {"text": "hello", "profile": "low_power"},
        format="json",
    )
    refused = client.post(
        f"{API}/conversations/{conversation}/responses",
        {"text": "again", "profile": "disaster"},
        format="json",
    )

    assert reply.status_code == 201
    assert ReflectionRun.objects.get().profile == "low_power"
    assert refused.status_code == 403
    assert not ReflectionRun.objects.filter(through_message__text="again").exists()


@pytest.mark.django_db
def test_consolidate_now_records_the_profile_and_a_redo_keeps_it(client, app, actor, subject):
    allow(app, actor, "normal", "low_power")
    note_store(subject=subject, content="a note", actor=actor, config=get_config(app))

    response = client.post(f"{API}/subjects/alice/consolidate", {"profile": "low_power"}, format="json")
    plain = client.post(f"{API}/subjects/alice/consolidate")

    assert response.status_code == 202 and plain.status_code == 202
    run = JobRun.objects.get(pk=response.json()["job_run"])
    assert run.profile == "low_power"
    assert JobRun.objects.get(pk=plain.json()["job_run"]).profile == "normal"
    JobRun.objects.filter(pk=run.pk).update(status=JobStatus.ABANDONED)
    run.refresh_from_db()
    assert _redo(run)
    assert JobRun.objects.filter(status=JobStatus.QUEUED).latest("pk").profile == "low_power"
