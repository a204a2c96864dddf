"""The chat playground: talk to the configured `chat` model with the subject's memory context.

One turn does what a chat app does with the sidecar (DESIGN §4): build the memory context for
the message, ask the model (streamed), then post the user message and the reply back so
reflection runs on them. With `memory.llm.chat = none` there is no model to ask: the reply is
a notice saying so, and the turn is still stored, so reflection still runs and the page still
shows the context the model would have been sent.

The playground keeps one conversation per subject (external id `playground`); its last
messages are sent with each new one.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from chat.services import messages_add
from memory.config import MemoryConfig
from memory.context import context_build
from memory.models import Conversation, Message, Role, Subject
from memory.services.audit import Actor
from memory.services.conversations import conversation_get_or_create
from memoryweb.errors import InvalidInput
from memoryweb.llm import client_for
from memoryweb.llm.spec import component_spec

PLAYGROUND_CONVERSATION = "playground"
HISTORY_MESSAGES = 12
MAX_MESSAGE_CHARS = 8000

SYSTEM = (
    "You are a helpful assistant. You are talking with the user in memoryweb's chat "
    "playground, where the user checks what you remember about them. Answer briefly."
)
# the reply of a turn without a model: short, as it is stored and shown every turn; where to
# configure one is said once, above the conversation (templates/dashboard/playground.html)
NO_MODEL = "No model answered: none is configured (see the note above the conversation)."


@dataclass
class TurnPrompt:
    """What the model is (or would be) sent for one message."""

    system: str
    messages: list[dict]
    context: dict  # Context.as_dict(full=True): blocks, items with scores, tokens
    model: str  # the chat spec, "none" when no model is configured


@dataclass
class TurnResult:
    prompt: TurnPrompt
    reply: str
    answered: bool  # a model answered (False: no model, or the call failed)
    user_message: Message
    reply_message: Message | None
    truncated: bool = False
    failed: str | None = None  # the fallback reason when the model call failed
    chunks: list[str] = field(default_factory=list)


def playground_conversation(*, subject: Subject, actor: Actor) -> Conversation:
    """The subject's playground conversation, created on first use. Safe to repeat."""
    conversation, _ = conversation_get_or_create(
        subject=subject, external_id=PLAYGROUND_CONVERSATION, actor=actor
    )
    return conversation


def playground_messages(*, subject: Subject, limit: int = 50) -> list[Message]:
    """The last `limit` messages of the subject's playground conversation, oldest first."""
    recent = Message.objects.filter(
        conversation__subject=subject, conversation__external_id=PLAYGROUND_CONVERSATION
    ).order_by("-occurred_at", "-id")[:limit]
    return list(reversed(recent))


def clean_message(text) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("message must be a non-empty string", field="message")
    text = text.strip()
    if len(text) > MAX_MESSAGE_CHARS:
        raise InvalidInput(f"message must be at most {MAX_MESSAGE_CHARS} characters", field="message")
    return text


def turn_prompt(
    *, subject: Subject, conversation: Conversation, text: str, config: MemoryConfig
) -> TurnPrompt:
    """Build the memory context for `text` (recorded as a RetrievalEvent, like a sidecar
    call) and the system prompt and messages the model gets."""
    context = context_build(subject=subject, message=text, config=config, conversation=conversation)
    memory = "\n\n".join(
        block.text for block in [context.stable_prefix, *context.sections] if block.text.strip()
    )
    system = f"{SYSTEM}\n\n{memory}" if memory else SYSTEM
    history = list(conversation.messages.order_by("-occurred_at", "-id")[:HISTORY_MESSAGES])
    messages = [
        {"role": m.role, "content": m.text}
        for m in reversed(history)
        if m.role in (Role.USER, Role.ASSISTANT)
    ]
    messages.append({"role": Role.USER.value, "content": text})
    return TurnPrompt(
        system=system,
        messages=messages,
        context=context.as_dict(full=True),
        model=str(component_spec("chat", config)),
    )


def playground_turn(
    *,
    subject: Subject,
    text: str,
    actor: Actor,
    config: MemoryConfig,
    on_prompt: Callable[[TurnPrompt], None] | None = None,
    on_chunk: Callable[[str], None] | None = None,
) -> TurnResult:
    """Run one playground turn; `on_prompt` gets the prompt before the model is asked,
    `on_chunk` each piece of the reply as it streams.

    Writes the user message and the reply (the no-model notice when there is no model) in
    one transaction, which queues reflection; a RetrievalEvent for the context. When the model
    call fails before any text arrives only the user message is stored. Not idempotent: each
    call is a new turn.
    """
    text = clean_message(text)
    conversation = playground_conversation(subject=subject, actor=actor)
    prompt = turn_prompt(subject=subject, conversation=conversation, text=text, config=config)
    if on_prompt is not None:
        on_prompt(prompt)

    client = client_for("chat", config)
    chunks: list[str] = []
    truncated, failed = False, None
    if client is None:
        reply, answered = NO_MODEL, False
        if on_chunk is not None:
            on_chunk(reply)
    else:
        stream = client.stream_text(component="chat", system=prompt.system, messages=prompt.messages)
        for chunk in stream:
            chunks.append(chunk)
            if on_chunk is not None:
                on_chunk(chunk)
        reply, truncated, failed = stream.text, stream.truncated, stream.failed
        answered = bool(reply.strip())

    items: list[dict] = [{"role": Role.USER, "text": text}]
    if reply.strip():
        items.append({"role": Role.ASSISTANT, "text": reply})
    stored = messages_add(conversation=conversation, items=items, actor=actor)
    return TurnResult(
        prompt=prompt,
        reply=reply,
        answered=answered,
        user_message=stored[0][0],
        reply_message=stored[1][0] if len(stored) > 1 else None,
        truncated=truncated,
        failed=failed,
        chunks=chunks,
    )
