"""The query side of embeddings: a message's vector for search, and the provider's health.

After a failure the provider is left alone for `embeddings.retryAfterSeconds` (per process), so
an unreachable endpoint does not add its timeout to every context build; the writers in
memory.services.embeddings report their failures here too.
"""

import logging
import threading
import time
from collections import OrderedDict

import numpy as np

from memory.config import MemoryConfig
from memory.embeddings import get_embedder
from memoryweb.counters import counter_add

logger = logging.getLogger(__name__)

QUERY_CACHE_SIZE = 256
WORD_CACHE_SIZE = 4096

_down_until: dict[str, float] = {}  # model_id -> monotonic time before which it is not asked
_query_cache: "OrderedDict[tuple[str, str], np.ndarray]" = OrderedDict()
_word_cache: "OrderedDict[tuple[str, str], np.ndarray]" = OrderedDict()  # (model, word)
_lock = threading.Lock()


def provider_failed(model_id: str, exc: BaseException, *, where: str, config: MemoryConfig) -> None:
    """Log and count a failure, and rest the provider for `embeddings.retryAfterSeconds`."""
    logger.warning("embeddings (%s) failed in %s: %s", model_id, where, exc)
    counter_add("embeddings.failures")
    with _lock:
        _down_until[model_id] = time.monotonic() + config["embeddings.retryAfterSeconds"]


def provider_resting(model_id: str) -> bool:
    with _lock:
        return _down_until.get(model_id, 0.0) > time.monotonic()


def provider_reset() -> None:
    """Forget rested providers and cached query and word vectors (tests, diagnose --probe)."""
    with _lock:
        _down_until.clear()
        _query_cache.clear()
        _word_cache.clear()


def query_vector(config: MemoryConfig, text: str) -> np.ndarray | None:
    """The query's vector, or None when embeddings are off or the provider failed (logged and
    counted; never raises). Recent queries are cached per process."""
    try:
        embedder = get_embedder(config)
    except Exception as exc:  # a bad embeddings section must not break recall either
        logger.warning("embeddings are misconfigured: %s", exc)
        counter_add("embeddings.failures")
        return None
    if embedder is None or not text.strip():
        return None
    key = (embedder.model_id, text)
    with _lock:
        cached = _query_cache.get(key)
        if cached is not None:
            _query_cache.move_to_end(key)
            return cached
    if provider_resting(embedder.model_id):
        counter_add("embeddings.skipped")
        return None
    try:
        vector = embedder.embed([text], query=True)[0]
    except Exception as exc:  # EmbeddingError, or anything a provider library raised
        provider_failed(embedder.model_id, exc, where="query", config=config)
        return None
    with _lock:
        _query_cache[key] = vector
        while len(_query_cache) > QUERY_CACHE_SIZE:
            _query_cache.popitem(last=False)
    return vector


def word_vectors(config: MemoryConfig, words: list[str]) -> dict[str, np.ndarray]:
    """The vector of each word (the words not cached are embedded in one batch), or {} when
    embeddings are off or the provider failed (logged and counted; never raises). Kept per
    process, like the query vectors: a subject's keywords and a person's words repeat."""
    try:
        embedder = get_embedder(config)
    except Exception as exc:
        logger.warning("embeddings are misconfigured: %s", exc)
        counter_add("embeddings.failures")
        return {}
    if embedder is None or not words:
        return {}
    found: dict[str, np.ndarray] = {}
    with _lock:
        for word in words:
            cached = _word_cache.get((embedder.model_id, word))
            if cached is not None:
                _word_cache.move_to_end((embedder.model_id, word))
                found[word] = cached
    missing = [w for w in dict.fromkeys(words) if w not in found]
    if not missing:
        return found
    if provider_resting(embedder.model_id):
        counter_add("embeddings.skipped")
        return {}
    try:
        vectors = embedder.embed(missing)
    except Exception as exc:
        provider_failed(embedder.model_id, exc, where="words", config=config)
        return {}
    with _lock:
        for word, vector in zip(missing, vectors, strict=True):
            _word_cache[(embedder.model_id, word)] = vector
            found[word] = vector
        while len(_word_cache) > WORD_CACHE_SIZE:
            _word_cache.popitem(last=False)
    return found
