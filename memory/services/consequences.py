"""Writes of consequence chains (memory/person/consequences.py). FOUNDATION: helper D
replaces this module."""

from memory.config import MemoryConfig
from memory.services.audit import Actor


def consequences_observe(*, messages: list, subject, actor: Actor, config: MemoryConfig) -> dict:
    """Record a chain for each user message of a reflected turn that reports the outcome of
    the assistant's earlier advice; returns stats for the reflection run."""
    return {}
