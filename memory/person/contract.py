"""The interaction contract (issue 13 req. 3). FOUNDATION: helper C replaces this module."""

from memory.config import MemoryConfig
from memory.modes import Mode


def contract_text(*, subject, mode: Mode, config: MemoryConfig, cap: int) -> tuple[str, int]:
    """`### contract` for `subject` in `mode` under `cap` tokens, and how many dimensions did
    not fit. ("", 0) when nothing is confident enough."""
    return "", 0
