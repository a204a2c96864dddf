"""Rate limits and lockouts, counted in the Django cache so every process that shares the cache
shares the counts: Redis when `REDIS_URL` is set, else files under `$MEMORYWEB_VAR_DIR/cache/`
(every process on one machine). See memoryweb/settings.py (CACHES).

Two shapes:
- `window_hit`: a fixed window ("600 requests a minute"): the count of the current window,
  and the seconds until the next one starts (the client's Retry-After);
- `strike_add` / `lockout_remaining` / `strikes_clear`: failures within a window that, at a
  limit, lock the name out for a cool-down (failed logins).

`parse_rate` is also used by settings.py, so this module imports nothing from Django at the top.
"""

import hashlib
import math
import re
import time
from dataclasses import dataclass

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*(s|sec|second|m|min|minute|h|hour|d|day)s?\s*$", re.I)
OFF = {"off", "none", "unlimited"}


@dataclass(frozen=True)
class Rate:
    limit: int
    period: int  # seconds

    def __str__(self):
        return f"{self.limit}/{self.period}s"


def parse_rate(text: str) -> Rate | None:
    """`"600/minute"`, `"10/s"`, `"1000/hour"`, `"100/5m"` → a Rate; `"off"` → None (no limit).
    Raises ValueError, naming the accepted forms, on anything else."""
    if text.strip().lower() in OFF:
        return None
    match = _RATE.match(text)
    if not match or int(match.group(1)) < 1 or match.group(2) == "0":
        raise ValueError(
            f"{text!r} is not a rate: use N/second, N/minute, N/hour, N/day (or N/5m, …), or 'off'"
        )
    period = PERIODS[match.group(3)[0].lower()] * int(match.group(2) or 1)
    return Rate(limit=int(match.group(1)), period=period)


@dataclass(frozen=True)
class Hit:
    allowed: bool
    count: int
    retry_after: int  # seconds until the window the count belongs to ends


def _cache():
    from django.core.cache import caches

    return caches["default"]


def _key(kind: str, name: str) -> str:
    # hashed: names come from clients (usernames), and cache keys must be short and plain
    return f"mw:{kind}:{hashlib.sha256(name.encode()).hexdigest()[:40]}"


def _incr(cache, key: str, timeout: int) -> int:
    cache.add(key, 0, timeout=timeout)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=timeout)
        return 1


def window_hit(name: str, rate: Rate, *, now: float | None = None) -> Hit:
    """Count one request for `name` in the current fixed window of `rate`."""
    now = time.time() if now is None else now
    window = int(now // rate.period)
    count = _incr(_cache(), _key(f"rate:{window}", name), rate.period + 1)
    retry_after = max(1, math.ceil((window + 1) * rate.period - now))
    return Hit(allowed=count <= rate.limit, count=count, retry_after=retry_after)


def lockout_remaining(name: str) -> int:
    """Seconds left of `name`'s lockout; 0 when it is not locked out."""
    until = _cache().get(_key("lock", name))
    return max(0, math.ceil(until - time.time())) if until else 0


def strike_add(name: str, *, limit: int, window: int, cooldown: int) -> int:
    """Count one failure for `name`. The window starts at the first failure; the `limit`-th
    failure within it locks `name` out for `cooldown` seconds (and starts the count afresh).
    Returns the seconds of lockout this strike started (0 when it started none)."""
    cache = _cache()
    key = _key("strikes", name)
    if _incr(cache, key, window) < limit:
        return 0
    cache.set(_key("lock", name), time.time() + cooldown, timeout=cooldown)
    cache.delete(key)
    return cooldown


def strikes_clear(name: str) -> None:
    """Forget `name`'s failures and lift its lockout."""
    _cache().delete_many([_key("strikes", name), _key("lock", name)])
