"""The `openai` and `openai-compatible` providers: POST {baseUrl}/v1/embeddings.

One request per `embeddings.batchSize` texts, within `embeddings.timeoutSeconds`. Every
failure — refused connection, timeout, an HTTP error, an answer of the wrong shape — raises
EmbeddingError with a message that names the endpoint and the reason, never the texts.
"""

import os

import httpx2
import numpy as np

from memory.embeddings import EmbeddingError, EmbeddingSpec, http_client_factory
from memoryweb.http import shared_client

KNOWN_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


def _http_client(spec: EmbeddingSpec) -> httpx2.Client:
    factory = http_client_factory()
    if factory is not None:
        return factory(spec)
    return shared_client()


def endpoint(base_url: str) -> str:
    """{baseUrl}/v1/embeddings; a base URL that already ends in /v1 is not doubled."""
    base = base_url.rstrip("/")
    if base.endswith("/v1"):
        base = base[: -len("/v1")]
    return f"{base}/v1/embeddings"


class RemoteEmbedder:
    def __init__(self, spec: EmbeddingSpec):
        self.spec = spec
        self.model_id = spec.model_id
        self.url = endpoint(spec.base_url)
        self._dim: int | None = spec.dimensions or KNOWN_DIMS.get(spec.model)

    @property
    def dim(self) -> int:
        """The vector size: configured, known for the model, or learned from one call."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.spec.api_key_env:
            key = os.environ.get(self.spec.api_key_env, "")
            if not key:
                raise EmbeddingError(
                    f"{self.spec.provider} embeddings: the environment variable {self.spec.api_key_env} "
                    "(memory.embeddings.apiKeyEnv) is not set"
                )
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        # `query` changes nothing: the remote models embed queries and texts alike
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        headers = self._headers()
        parts = [
            self._post(texts[i : i + self.spec.batch_size], headers)
            for i in range(0, len(texts), self.spec.batch_size)
        ]
        vectors = np.vstack(parts).astype(np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        if not np.all(np.isfinite(vectors)) or np.any(norms == 0):
            raise EmbeddingError(f"{self.url} answered a zero or non-finite vector")
        if self._dim is not None and vectors.shape[1] != self._dim:
            raise EmbeddingError(
                f"{self.url} answered vectors of {vectors.shape[1]} dimensions, expected {self._dim} "
                "(memory.embeddings.dimensions)"
            )
        self._dim = vectors.shape[1]
        return vectors / norms

    def _post(self, texts: list[str], headers: dict[str, str]) -> np.ndarray:
        body: dict = {"model": self.spec.model, "input": texts, "encoding_format": "float"}
        if self.spec.dimensions:
            body["dimensions"] = self.spec.dimensions
        try:
            response = _http_client(self.spec).post(
                self.url, json=body, headers=headers, timeout=self.spec.timeout
            )
        except httpx2.TimeoutException as exc:
            raise EmbeddingError(f"{self.url} did not answer within {self.spec.timeout:g} s") from exc
        except httpx2.HTTPError as exc:
            raise EmbeddingError(f"{self.url} is unreachable: {type(exc).__name__}: {exc}") from exc
        if response.status_code != 200:
            raise EmbeddingError(f"{self.url} answered HTTP {response.status_code}: {_error_text(response)}")
        try:
            data = response.json()["data"]
            rows = sorted(data, key=lambda item: item.get("index", 0))
            vectors = np.array([row["embedding"] for row in rows], dtype=np.float32)
        except Exception as exc:
            raise EmbeddingError(f"{self.url} answered something that is not an embeddings list") from exc
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise EmbeddingError(f"{self.url} answered {len(vectors)} vectors for {len(texts)} texts")
        return vectors


def _error_text(response: httpx2.Response) -> str:
    try:
        error = response.json().get("error")
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return str(message)[:200]
    except Exception:
        pass
    return response.text[:200] or response.reason_phrase
