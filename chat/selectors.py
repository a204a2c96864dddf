from chat.models import Conversation, Message
from memory.errors import NotFound


def conversation_get(*, app, conversation_id: int, subject=None) -> Conversation:
    """The conversation if it belongs to `app` (and to `subject` when given); else NotFound."""
    queryset = Conversation.objects.select_related("subject").filter(pk=conversation_id, subject__app=app)
    if subject is not None:
        queryset = queryset.filter(subject=subject)
    conversation = queryset.first()
    if conversation is None:
        raise NotFound(f"no conversation {conversation_id}", field="conversation")
    return conversation


def message_get(*, app, message_id: int, subject=None) -> Message:
    queryset = Message.objects.select_related("conversation").filter(
        pk=message_id, conversation__subject__app=app
    )
    if subject is not None:
        queryset = queryset.filter(conversation__subject=subject)
    message = queryset.first()
    if message is None:
        raise NotFound(f"no message {message_id}", field="message")
    return message


def conversation_list(*, subject, limit: int = 50) -> list[Conversation]:
    return list(Conversation.objects.filter(subject=subject).order_by("-updated_at", "-id")[:limit])


def message_list(*, conversation, limit: int = 100, before_id: int | None = None) -> list[Message]:
    queryset = Message.objects.filter(conversation=conversation)
    if before_id:
        queryset = queryset.filter(pk__lt=before_id)
    return list(reversed(queryset.order_by("-occurred_at", "-id")[:limit]))


def reflections_wait(*, conversation_ids: list[int], timeout: float, poll: float = 0.05) -> tuple[int, float]:
    """Wait until no reflection is queued or running for these conversations, at most `timeout`
    seconds. Returns (still open, seconds waited)."""
    import time

    from chat.reflect import reflection_pending

    started = time.monotonic()
    while True:
        open_runs = reflection_pending(conversation_ids=conversation_ids)
        waited = time.monotonic() - started
        if open_runs == 0 or waited >= timeout:
            return open_runs, waited
        time.sleep(min(poll, max(timeout - waited, 0)))
