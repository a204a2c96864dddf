"""The person's state in a conversation (issue 13 req. 4). FOUNDATION: helper D replaces this module."""

from memory.config import MemoryConfig


def state_text(*, conversation, config: MemoryConfig, now, cap: int) -> tuple[str, int]:
    """`### state` of `conversation` at `now` (decayed) under `cap` tokens. ("", 0) when calm."""
    return "", 0
