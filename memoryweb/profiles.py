"""Operational profiles: the conditions a request or background job runs under.

`normal`, `low_power`, `offline`, `emergency`, `disaster`. A request names one (default
`normal`); it is validated, authorised against the App's `memory.profiles.allowed` (the
high-risk `emergency` and `disaster` are open only to an App that lists them), keyed into the
context cache and recorded on the RetrievalEvent, and the background jobs the request starts
carry it (ReflectionRun.profile, JobRun.profile).

`offline` and `low_power` make no remote LLM or embedding calls for the request or job: every
LLM component takes its heuristic path and only the in-process `local` embedder may run.
`emergency` and `disaster` change nothing else yet (docs/configuration.md says so).

The profile in force lives in a context variable: `profile_active()` sets it for a block,
`remote_calls_allowed()` is what the LLM client and the embedder factory ask.
"""

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

PROFILES = ("normal", "low_power", "offline", "emergency", "disaster")
HIGH_RISK = ("emergency", "disaster")
NO_REMOTE = ("low_power", "offline")
DEFAULT_PROFILE = "normal"

_current: ContextVar[str] = ContextVar("memoryweb_profile", default=DEFAULT_PROFILE)


def current_profile() -> str:
    return _current.get()


def remote_calls_allowed(profile: str | None = None) -> bool:
    """Whether a remote LLM or embedding call may be made under `profile` (default: the one
    in force)."""
    return (profile or _current.get()) not in NO_REMOTE


@contextlib.contextmanager
def profile_active(profile: str) -> Iterator[str]:
    """Run the block under `profile` (an already checked name)."""
    if profile not in PROFILES:
        raise ValueError(f"unknown operational profile {profile!r}")
    token = _current.set(profile)
    try:
        yield profile
    finally:
        _current.reset(token)
