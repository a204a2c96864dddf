"""Database pieces shared by every app: the SQLite backend (`memoryweb.db.sqlite`) and helpers
for the statements written in SQL."""

from collections.abc import Sized


def placeholders(values: Sized) -> str:
    """One `%s` per value, comma-separated, for `IN (…)` in a statement written in SQL."""
    return ", ".join(["%s"] * len(values))
