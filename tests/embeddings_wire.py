"""A fake OpenAI embeddings endpoint on the wire (httpx2.MockTransport), like tests/llm_wire.py
for the chat providers. Plug it in with memory.embeddings.set_http_client_factory."""

import hashlib
import json

import httpx2
import numpy as np


def fake_vector(text: str, dim: int) -> list[float]:
    """A deterministic vector per text (same text, same vector)."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim).round(6).tolist()


class EmbeddingsWire:
    """Answers POST …/v1/embeddings with one vector per input; records every request.

    `fail_with` set to an exception instance raises it instead (a refused connection, a
    timeout); `status` other than 200 answers that HTTP error."""

    def __init__(self, dim: int = 8):
        self.dim = dim
        self.requests: list[httpx2.Request] = []
        self.bodies: list[dict] = []
        self.fail_with: Exception | None = None
        self.status = 200
        self.vectors: dict[str, list[float]] = {}  # text -> the vector to answer

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if self.fail_with is not None:
            raise self.fail_with
        body = json.loads(request.content)
        self.bodies.append(body)
        if self.status != 200:
            return httpx2.Response(self.status, json={"error": {"message": "model overloaded"}})
        inputs = body["input"]
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": self.vectors.get(text) or fake_vector(text, self.dim),
            }
            for i, text in enumerate(inputs)
        ]
        return httpx2.Response(
            200,
            json={
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            },
        )

    def client(self, spec=None) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handler))
