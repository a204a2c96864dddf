"""Writes to conversations and messages: the input records every memory is learned from."""

import datetime
import re

from django.db import IntegrityError, transaction
from django.utils import timezone

from memory.models import MESSAGE_NAME_CHARS, MESSAGE_NAME_EXCLUDED, Conversation, Message, Role
from memory.modes import mode_get
from memory.services.audit import Actor, audit_record
from memory.services.scrub import scrub
from memory.services.state import state_update
from memoryweb.errors import InvalidInput

MAX_MESSAGE_CHARS = 100_000
_NAME_EXCLUDED = re.compile(f"[{MESSAGE_NAME_EXCLUDED}]")


def _clean_str(value, field: str, limit: int) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string", field=field)
    value = value.strip()
    if len(value) > limit:
        raise InvalidInput(f"{field} must be at most {limit} characters", field=field)
    return value


def speaker_name(value) -> str:
    """A message's speaker name, trimmed: a string of at most MESSAGE_NAME_CHARS characters on
    one line ("" for none); InvalidInput (field `name`) otherwise."""
    name = _clean_str(value, "name", MESSAGE_NAME_CHARS)
    if _NAME_EXCLUDED.search(name):
        raise InvalidInput("name must be one line, without control characters", field="name")
    return name


@transaction.atomic
def conversation_get_or_create(
    *, subject, external_id: str = "", mode: str = "", scope: str = "", working_dir: str = "", actor: Actor
) -> tuple[Conversation, bool]:
    """The subject's conversation with this external id, created on first use. Safe to repeat.

    A conversation without an external id is always new. Mode, scope and working_dir are set
    at creation; asking again with different values is refused rather than silently ignored.
    """
    external_id = _clean_str(external_id, "external_id", 200)
    fields = {
        "mode": _clean_str(mode, "mode", 50),
        "scope": _clean_str(scope, "scope", 200),
        "working_dir": _clean_str(working_dir, "working_dir", 500),
    }
    if fields["mode"]:
        mode_get(fields["mode"])
    if external_id:
        existing = Conversation.objects.filter(subject=subject, external_id=external_id).first()
        if existing is not None:
            for name, value in fields.items():
                if value and getattr(existing, name) != value:
                    raise InvalidInput(
                        f"conversation {external_id!r} already exists with {name}={getattr(existing, name)!r}",
                        field=name,
                    )
            return existing, False
    try:
        with transaction.atomic():
            conversation = Conversation.objects.create(subject=subject, external_id=external_id, **fields)
    except IntegrityError:  # a concurrent request created it
        return Conversation.objects.get(subject=subject, external_id=external_id), False
    audit_record(
        actor=actor,
        action="conversation.created",
        subject=subject,
        object_kind="conversation",
        object_id=conversation.pk,
    )
    return conversation, True


@transaction.atomic
def message_add(
    *,
    conversation: Conversation,
    role: str,
    text: str,
    occurred_at: datetime.datetime | None = None,
    external_id: str = "",
    name: str = "",
    actor: Actor,
) -> tuple[Message, bool]:
    """Append a message; returns (message, created). `name`: who said it, when the app knows
    ("Melanie"; `speaker_name`).

    A message whose external id the conversation already holds is returned as it is, so a
    client may retry a post safely. A new user message also moves the conversation's state
    (memory/services/state.py: urgency, focus, frustration).
    """
    if role not in Role.values:
        raise InvalidInput(f"role must be one of {', '.join(Role.values)}", field="role")
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("text must be a non-empty string", field="text")
    if len(text) > MAX_MESSAGE_CHARS:
        raise InvalidInput(f"text must be at most {MAX_MESSAGE_CHARS} characters", field="text")
    name = speaker_name(name)
    external_id = _clean_str(external_id, "external_id", 200)
    if external_id:
        existing = Message.objects.filter(conversation=conversation, external_id=external_id).first()
        if existing is not None:
            return existing, False
    text = scrub(text, where="message")
    # redacted as the text is; a placeholder longer than the secret it replaces can push the
    # name past its bound, and the post is refused rather than the name cut
    name = speaker_name(scrub(name, where="message"))
    now = timezone.now()
    message = Message.objects.create(
        conversation=conversation,
        role=role,
        name=name,
        text=text,
        occurred_at=occurred_at or now,
        external_id=external_id,
        created_at=now,
    )
    Conversation.objects.filter(pk=conversation.pk).update(updated_at=now)
    audit_record(
        actor=actor,
        action="message.added",
        subject=conversation.subject,
        object_kind="message",
        object_id=message.pk,
        data={"conversation": conversation.pk, "role": role},
    )
    state_update(message=message)
    return message, True
