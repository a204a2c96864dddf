"""Helpers that several test modules share: polling for a condition, whether Redis answers, and
whether this is CI (where a missing server or browser fails instead of skipping)."""

import os
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


def in_ci() -> bool:
    """CI is set (to anything but an empty or false value): every test must really run."""
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


def redis_unreachable() -> str | None:
    """Why the Redis-backed tests cannot run (no server at 127.0.0.1:6379), or None when one answers."""
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError as exc:
        return f"no Redis at 127.0.0.1:6379 ({exc}); the channels_redis path is not tested"
    return None


def database_rows() -> dict[str, list[tuple]]:
    """Every row of every model of the project's apps, in primary-key order: equal before and
    after a refused request means it wrote nothing, not only no audit event."""
    from django.apps import apps

    rows = {}
    for label in ("memory", "chat", "consolidation", "memoryweb"):
        for model in apps.get_app_config(label).get_models():
            rows[model._meta.label] = list(model._default_manager.order_by("pk").values_list())
    return rows
