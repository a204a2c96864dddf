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
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

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


def _append_incr(directory: Path, key: str, timeout: int) -> int:
    """`_incr` for the file cache: one byte appended to the key's own file, whose length is the
    count. An O_APPEND write moves to the end and writes in one step, so the offset it leaves
    is this hit's number, exact across every process sharing the directory — where the file
    cache's incr (read the pickle, write a temporary file, rename it, list the directory to
    cull it) took about 2 ms of a request on a busy disk, and two processes could count one.
    The first hit of a window deletes the files of windows older than their timeout."""
    path = directory / f"{key.replace(':', '-')}-t{timeout}"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except FileNotFoundError:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, b"\0")
        count = os.lseek(fd, 0, os.SEEK_CUR)
        started = os.fstat(fd).st_mtime if count == 1 else None
    finally:
        os.close(fd)
    if started is not None:
        _append_sweep(directory, started)
    return count


def _append_sweep(directory: Path, now: float) -> None:
    """Delete the counter files whose last hit is older than their timeout (`now` is the file
    system's clock: a new file's mtime)."""
    for old in directory.iterdir():
        _, _, timeout = old.name.rpartition("-t")
        try:
            if old.stat().st_mtime < now - int(timeout):
                old.unlink()
        except (ValueError, OSError):  # not a counter, or another process swept it first
            continue


def _window_incr(key: str, timeout: int) -> int:
    from django.core.cache.backends.filebased import FileBasedCache

    cache = _cache()
    if isinstance(cache, FileBasedCache):
        # beside the cache's own *.djcache files, which clear() alone deletes
        return _append_incr(Path(cache._dir) / "windows", key, timeout)  # type: ignore[attr-defined]
    return _incr(cache, key, timeout)


def window_hit(name: str, rate: Rate, *, now: float | None = None) -> Hit:
    """Count one request for `name` in the current fixed window of `rate`."""
    now = time.time() if now is None else now
    window = int(now // rate.period)
    count = _window_incr(_key(f"rate:{window}", name), rate.period + 1)
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
