"""The turn as chat apps post it: messages stored by the memory core, then reflection and the
topic working set's refresh queued."""

from django.db import transaction

from chat.reflect import reflection_enqueue
from chat.topics import topics_enqueue
from memory.models import Conversation, Message, Role
from memory.services import Actor
from memory.services.conversations import message_add
from memoryweb.profiles import DEFAULT_PROFILE


@transaction.atomic
def messages_add(
    *, conversation: Conversation, items: list[dict], actor: Actor, profile: str = DEFAULT_PROFILE
) -> list[tuple[Message, bool]]:
    """Append several messages, all or none. When a new assistant message closes a turn, a
    reflection over the conversation is queued under the request's operational `profile`; when
    any message is new, a refresh of its topics (chat/topics.py). Both start after commit."""
    results = [message_add(conversation=conversation, actor=actor, **item) for item in items]
    replies = [m for m, created in results if created and m.role == Role.ASSISTANT]
    if replies:
        reflection_enqueue(
            conversation=conversation, through_message=max(replies, key=lambda m: m.pk), profile=profile
        )
    if any(created for _, created in results):
        topics_enqueue(conversation=conversation)
    return results


def response_add(
    *,
    conversation: Conversation,
    text: str,
    occurred_at=None,
    external_id: str = "",
    name: str = "",
    actor: Actor,
    profile: str = DEFAULT_PROFILE,
) -> tuple[Message, bool]:
    """Store the assistant's reply (`name`: the assistant's, when the app names it) and queue
    reflection on the turn. A repeated post of the same external id changes nothing and queues
    nothing."""
    item = {
        "role": Role.ASSISTANT,
        "text": text,
        "occurred_at": occurred_at,
        "external_id": external_id,
        "name": name,
    }
    return messages_add(conversation=conversation, items=[item], actor=actor, profile=profile)[0]
