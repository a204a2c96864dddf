"""Writes of the interaction contract (memory/person/contract.py). FOUNDATION: helper C
replaces this module."""

from memory.config import MemoryConfig
from memory.services.audit import Actor


def contract_observe(*, messages: list, subject, actor: Actor, config: MemoryConfig) -> dict:
    """Learn the contract of each message's conversation mode from a reflected turn's
    `messages` (user and assistant); returns stats for the reflection run."""
    return {}
