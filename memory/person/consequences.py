"""Consequence chains (issue 13 req. 5). FOUNDATION: helper D replaces this module."""

from memory.config import MemoryConfig
from memory.modes import Mode


def consequences_text(
    *, subject, conversation, message: str, mode: Mode, config: MemoryConfig, cap: int
) -> tuple[str, list[int], int]:
    """`### consequences` when `message` shows failure or loop signals: the text, the ids of
    the chains it shows (the builder marks them surfaced when it records) and how many did not
    fit. ("", [], 0) otherwise."""
    return "", [], 0
