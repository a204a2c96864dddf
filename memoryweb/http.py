"""The process's one pooled HTTP client for outbound calls (LLM providers, embedding providers)."""

import threading

import httpx2

_shared_client: httpx2.Client | None = None
_shared_lock = threading.Lock()


def shared_client() -> httpx2.Client:
    """One pooled client per process, created lazily, so a forked worker never inherits the
    parent's sockets; a closed one is replaced."""
    global _shared_client
    with _shared_lock:
        if _shared_client is None or _shared_client.is_closed:
            _shared_client = httpx2.Client(follow_redirects=True)
        return _shared_client
