"""Working memory (issue 12): what the conversation itself holds right now, as the last two
sections of the context tail (memory/context.py).

- `### topics`: the conversation's topic working set, the ConversationTopic rows that
  chat/topics.py refreshes in the background after messages: an "active: …" line (what it is
  about now) and a "parked: …" line (what it was about and may come back to), under
  `topics.maxTokens`. Rendered when `topics.enabled` and the mode's `renders.topics` are true.
- `### transcript`: the newest turns of the same conversation that fit
  `recentTranscript.budgetTokens` (a mode's `sections.transcript` sets it; under
  `TRANSCRIPT_MIN_TOKENS` it counts as that), shown oldest first, each with its date and role.
  The message being answered, when it is already stored as the conversation's last user
  message, is not repeated. Off by default (`recentTranscript.enabled`: most chat apps send
  their own history); a mode whose `renders.transcript` is false never renders it.

Both read stored rows only. Message text needs no redaction here: every message is stored
through `message_add`, which redacts it (memory/services/scrub.py), after the request boundary
(memory/boundary.py) already did.
"""

from memory.config import MemoryConfig
from memory.models import Conversation, ConversationTopic, Message, Role, TopicStatus
from memory.modes import Mode
from memory.tokens import estimate_tokens, truncate_to_tokens

TRANSCRIPT_MIN_TOKENS = 2048
TRANSCRIPT_ROLES = (Role.USER, Role.ASSISTANT)  # the app's system prompts are not turns
TOPIC_TERMS_SHOWN = 3  # the words after a topic's label, "lisbon trip (flight, hotel)"


def transcript_budget(config: MemoryConfig) -> int:
    """The transcript's token budget: `recentTranscript.budgetTokens`, at least 2048."""
    return max(config["recentTranscript.budgetTokens"], TRANSCRIPT_MIN_TOKENS)


def transcript_on(config: MemoryConfig, mode: Mode) -> bool:
    return bool(config["recentTranscript.enabled"] and mode.renders.get("transcript", False))


def topics_on(config: MemoryConfig, mode: Mode) -> bool:
    return bool(config["topics.enabled"] and mode.renders.get("topics", False))


def transcript_line(message: Message) -> str:
    text = message.text.strip().replace("\n", "\n  ")  # a turn's own lines stay under its bullet
    return f"- [{message.occurred_at:%Y-%m-%d %H:%M} · {message.role}] {text}"


def _earlier(count: int) -> str:
    return f"({count} earlier turn{'s' if count != 1 else ''} not shown)"


def _section(name: str, lines: list[str]) -> str:
    return f"### {name}\n" + "\n".join(lines) if lines else ""


def transcript_text(*, conversation: Conversation | None, message: str, cap: int) -> tuple[str, int]:
    """`### transcript`: the newest turns of `conversation` that fit `cap` tokens, oldest first,
    opened by a line counting the earlier turns left out; and how many were left out. The
    newest user turn is left out (and not counted) when its text is `message`, the one being
    answered. ("", 0) without a conversation or turns."""
    if conversation is None:
        return "", 0
    turns = Message.objects.filter(conversation=conversation, role__in=TRANSCRIPT_ROLES).order_by(
        "-occurred_at", "-id"
    )
    total = turns.count()
    last_user = turns.filter(role=Role.USER).only("id", "text").first()
    skip = last_user.pk if last_user is not None and last_user.text.strip() == message.strip() else None
    total -= skip is not None
    lines: list[str] = []  # newest first while placing
    for turn in turns.only("id", "role", "text", "occurred_at").iterator(chunk_size=50):
        if turn.pk == skip:
            continue
        line = transcript_line(turn)
        left = total - len(lines) - 1
        tail = [_earlier(left)] if left else []
        if estimate_tokens(_section("transcript", [*tail, line, *lines])) > cap:
            if lines:
                break
            # the newest turn alone is longer than the budget: its beginning, cut to the room
            room = cap - estimate_tokens(_section("transcript", [*tail, ""]))
            line = truncate_to_tokens(line, room) if room >= 24 else ""
            if not line:
                break
        lines.append(line)
    omitted = total - len(lines)
    head = [_earlier(omitted)] if omitted else []
    return _section("transcript", [*head, *reversed(lines)]) if lines else "", omitted


def topics_text(*, conversation: Conversation | None, cap: int) -> tuple[str, int]:
    """`### topics`: an "active: …" and a "parked: …" line with the conversation's topics,
    heaviest first, each label followed by a few of its other words, under `cap` tokens; and
    how many topics did not fit. ("", 0) without a conversation or topics."""
    if conversation is None:
        return "", 0
    rows = ConversationTopic.objects.filter(conversation=conversation).order_by("-weight", "label")
    groups: dict[str, list[str]] = {TopicStatus.ACTIVE: [], TopicStatus.PARKED: []}
    omitted = 0

    def render() -> str:
        return _section(
            "topics", [f"{status}: {'; '.join(shown)}" for status, shown in groups.items() if shown]
        )

    for topic in rows:
        label_words = set(topic.label.split())
        others = [t for t in topic.terms if t not in label_words][:TOPIC_TERMS_SHOWN]
        entry = f"{topic.label} ({', '.join(others)})" if others else topic.label
        shown = groups.setdefault(topic.status, [])
        shown.append(entry)
        if estimate_tokens(render()) > cap:
            shown.pop()
            omitted += 1
    return render(), omitted
