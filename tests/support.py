"""Helpers that several test modules share: polling for a condition, and whether Redis answers."""

import socket
import time

DEADLINE = 20.0


def wait_until(predicate, *, timeout: float = DEADLINE, interval: float = 0.05) -> bool:
    """Poll `predicate` every `interval` s until it holds or `timeout` s pass; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def redis_unreachable() -> str | None:
    """Why the Redis-backed tests skip (no server at 127.0.0.1:6379), or None when one answers."""
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError as exc:
        return f"no Redis at 127.0.0.1:6379 ({exc}); the channels_redis path is not tested"
    return None
