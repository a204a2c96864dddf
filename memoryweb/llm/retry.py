"""Retrying provider calls: transient failures only, exponential backoff with jitter.

The SDKs can retry by themselves, but their delays are private constants and they also retry
409s; we run them with `max_retries=0` and retry here, where tests can set `BASE_DELAY_SECONDS`
(or replace `sleep`) and see every attempt. Transient: timeouts, connection errors, 408, 429
and 5xx (Anthropic's 529 "overloaded" included). Everything else (400, 401, 403, 404, 422)
would fail the same way again and is given up at once.
"""

import random
import time
from collections.abc import Callable
from typing import TypeVar

import anthropic
import httpx
import httpx2
import openai

BASE_DELAY_SECONDS = 0.5
MAX_DELAY_SECONDS = 8.0
sleep: Callable[[float], None] = time.sleep

TRANSIENT_STATUS = {408, 429}
PROVIDER_ERRORS: tuple[type[Exception], ...] = (anthropic.APIError, openai.APIError)
# Raised from inside a stream after it has started (a dropped connection mid-answer).
TRANSPORT_ERRORS: tuple[type[Exception], ...] = (httpx2.HTTPError, httpx.HTTPError)

T = TypeVar("T")


class GaveUp(Exception):
    """The call failed for good; `reason` is safe to log (no prompt or answer text)."""

    def __init__(self, reason: str, *, attempts: int):
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, (anthropic.APIConnectionError, openai.APIConnectionError)):
        return True  # includes APITimeoutError
    status = status_of(exc)
    return status is not None and (status in TRANSIENT_STATUS or status >= 500)


def describe(exc: BaseException) -> str:
    """`RateLimitError 429`, `APITimeoutError`: the class and status, never the message body."""
    status = status_of(exc)
    return f"{type(exc).__name__} {status}" if status else type(exc).__name__


def _retry_after(exc: BaseException) -> float:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:  # an HTTP date; rare enough to ignore
        return 0.0


def backoff_delay(attempt: int, *, retry_after: float = 0.0) -> float:
    """Delay before retry number `attempt` (0-based): base·2^attempt, half of it jittered,
    at least what the server asked for in Retry-After, never more than MAX_DELAY_SECONDS."""
    ceiling = min(MAX_DELAY_SECONDS, BASE_DELAY_SECONDS * (2**attempt))
    delay = ceiling / 2 + random.uniform(0, ceiling / 2)
    return min(MAX_DELAY_SECONDS, max(delay, retry_after))


def call_with_retries(call: Callable[[], T], *, max_retries: int, on_retry: Callable[[], None]) -> T:
    """Run `call`, retrying transient provider errors up to `max_retries` times; raise GaveUp."""
    attempt = 0
    while True:
        try:
            return call()
        except PROVIDER_ERRORS as exc:
            if not is_transient(exc):
                raise GaveUp(describe(exc), attempts=attempt + 1) from exc
            if attempt >= max_retries:
                raise GaveUp(f"{describe(exc)} after {attempt + 1} attempts", attempts=attempt + 1) from exc
            on_retry()
            sleep(backoff_delay(attempt, retry_after=_retry_after(exc)))
            attempt += 1
