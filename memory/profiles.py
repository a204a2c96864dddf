"""Checking an operational profile a caller names (memoryweb/profiles.py holds the list and
what each changes)."""

from memory.config import MemoryConfig
from memoryweb.errors import InvalidInput, NotAllowed
from memoryweb.profiles import DEFAULT_PROFILE, HIGH_RISK, PROFILES


def profile_check(name: str | None, config: MemoryConfig, *, field: str = "profile") -> str:
    """`name` if it is a known profile the App may use ("" or None: normal). InvalidInput (400)
    for an unknown one, NotAllowed (403) for one the App has not opted into."""
    profile = name or DEFAULT_PROFILE
    if profile not in PROFILES:
        raise InvalidInput(
            f"unknown operational profile {profile!r}; expected one of {', '.join(PROFILES)}", field=field
        )
    if profile != DEFAULT_PROFILE and profile not in config["profiles.allowed"]:
        hint = (
            " (high-risk: an App opts in by listing it in memory.profiles.allowed)"
            if profile in HIGH_RISK
            else ""
        )
        raise NotAllowed(f"operational profile {profile!r} is not allowed for this app{hint}", field=field)
    return profile
