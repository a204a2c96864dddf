"""The write of a conversation's state (memory/person/state.py): one upsert per user message.

`message_add` (memory/services/conversations.py) calls `state_update` for every user message
it stores. The state is transient and per conversation, so it is not audited like a memory;
the context cache is told (`memory_changed`) only when what `### state` would show changes,
so a quiet turn keeps the conversation's cached context.
"""

from django.utils import timezone

from memory.config import MemoryConfig, get_config
from memory.models import ConversationState, Message, Role
from memory.person.state import (
    DIMENSIONS,
    MAX_SIGNALS,
    levels_at,
    message_signals,
    signal_entry,
    state_advance,
    state_lines,
)
from memory.services.context_cache import memory_changed


def state_update(*, message: Message, config: MemoryConfig | None = None) -> ConversationState | None:
    """Fold the user message `message` into its conversation's state and store it (an upsert on
    the conversation; the previous state and the person's previous message come in one read).
    Returns the state, or None for another role or with `state.enabled` off. Not idempotent:
    each call is one more message observed, so call it once per stored message."""
    if message.role != Role.USER:
        return None
    conversation = message.conversation
    config = config if config is not None else get_config(conversation.subject.app)
    if not config["state.enabled"]:
        return None
    row = (
        ConversationState.objects.select_related("last_message")
        .filter(conversation_id=conversation.pk)
        .first()
    )
    now = timezone.now()
    levels = {d: getattr(row, d) for d in DIMENSIONS} if row else dict.fromkeys(DIMENSIONS, 0.0)
    since = row.updated_at if row else None
    previous = row.last_message.text if row and row.last_message else ""
    signals = message_signals(message.text, previous)
    advanced = state_advance(levels=levels, since=since, now=now, signals=signals, config=config)
    history = list(row.signals or []) if row else []
    entry = signal_entry(message_id=message.pk, at=now, signals=signals)
    if any(key in entry for key in (*DIMENSIONS, "topic_changed")):
        history = [entry, *history][:MAX_SIGNALS]
    state = ConversationState(
        conversation_id=conversation.pk,
        signals=history,
        last_message=message,
        messages=(row.messages if row else 0) + 1,
        updated_at=now,
        **advanced,
    )
    ConversationState.objects.bulk_create(
        [state],
        update_conflicts=True,
        unique_fields=["conversation"],
        update_fields=[*DIMENSIONS, "signals", "last_message", "messages", "updated_at"],
    )
    minimum = config["state.minLevel"]
    before = state_lines(
        levels=levels_at(levels=levels, since=since, now=now, config=config),
        signals=row.signals if row else [],
        min_level=minimum,
    )
    if before != state_lines(levels=advanced, signals=history, min_level=minimum):
        memory_changed(subject_id=conversation.subject_id)
    return state
