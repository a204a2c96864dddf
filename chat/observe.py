"""What a reflected turn teaches about the person (issue 13), beside extraction: the
interaction contract of the conversation's mode and the consequence chains of earlier advice
(memory/person/, written through memory/services). Runs inside the reflection's transaction,
after the turn's evidence is recorded, each observer in its own savepoint: one that fails
loses only its own observation."""

import logging

from django.db import transaction

from memory.config import MemoryConfig
from memory.services import Actor
from memory.services.consequences import consequences_observe
from memory.services.contract import contract_observe
from memoryweb.counters import counter_add
from memoryweb.errors import MemorywebError

logger = logging.getLogger(__name__)

OBSERVERS = (("contract", contract_observe), ("consequences", consequences_observe))


def observe_turn(*, messages: list, subject, actor: Actor, config: MemoryConfig) -> dict:
    """Run every observer over the turn's messages; their stats by name."""
    stats: dict = {}
    for name, observe in OBSERVERS:
        try:
            with transaction.atomic():
                stats[name] = observe(messages=messages, subject=subject, actor=actor, config=config)
        except MemorywebError as exc:
            counter_add(f"reflection.observe_failed.{name}")
            logger.warning("observing the turn's %s failed (%s)", name, exc.field)
    return stats
