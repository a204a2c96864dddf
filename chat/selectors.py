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
