"""The LLM path of reflection: render the prompt, ask for operations, map the answer back.

Returns None when the model's answer is unusable (the client already counted and logged why),
so the caller falls back to the heuristic extractor.
"""

from datetime import datetime, time

from django.utils import timezone
from django.utils.dateparse import parse_date

from memory.categories import CATEGORY_PRIORITY
from memory.models import Note, ProfileFact
from memory.search.lexical import note_search
from memory.text import query_terms
from memoryweb.counters import counter_add
from memoryweb.llm import prompt_schema

CATEGORIES = frozenset(CATEGORY_PRIORITY)  # the seeded consent categories
RELATED_NOTES = 12
MIN_CONFIDENCE = 0.5  # the prompt asks the model not to emit these; drop any it does


def _profile(subject) -> str:
    facts = ProfileFact.objects.filter(subject=subject, valid_to=None, parked_at=None).order_by("key")
    return "\n".join(f"{f.key}: {f.value}" for f in facts) or "(empty)"


def _related_notes(subject, messages) -> tuple[str, set[int]]:
    terms = query_terms(" ".join(m.text for m in messages))
    hits = note_search(subject.pk, terms, limit=RELATED_NOTES)
    notes = Note.objects.in_bulk([h.id for h in hits])
    lines = [
        f"{n.pk} [{', '.join(n.tags)}] {n.content}" for n in (notes[h.id] for h in hits if h.id in notes)
    ]
    return "\n".join(lines) or "(none)", set(notes)


def _occurred(value, fallback: datetime) -> datetime:
    day = parse_date(value) if isinstance(value, str) else None
    if day is None:
        return fallback
    return timezone.make_aware(datetime.combine(day, time.min))


def _category(value) -> str:
    return value if value in CATEGORIES else ""


NOT_IN_PARTS = "(the message is shown whole)"


def llm_operations(
    client, messages, *, subject, config, operation_class, earlier: str = NOT_IN_PARTS
) -> list | None:
    """The model's operations on `messages`, shown the subject's profile and related notes;
    `earlier` is what the earlier chunks of a long message gave (chat.reflection.accumulator)."""
    notes_text, note_ids = _related_notes(subject, messages)
    return model_operations(
        client,
        messages,
        profile=_profile(subject),
        notes=notes_text,
        note_ids=note_ids,
        now=timezone.now(),
        config=config,
        operation_class=operation_class,
        earlier=earlier,
    )


def model_operations(
    client,
    messages,
    *,
    profile: str,
    notes: str,
    note_ids: set[int],
    now: datetime,
    config,
    operation_class,
    earlier: str = NOT_IN_PARTS,
) -> list | None:
    """Ask the model about `messages` (anything with `text`, `role` and `occurred_at`) given
    the profile and notes text it is shown; None when its answer is unusable. Reads and
    writes no memory, so extraction_eval runs it on labelled messages without a subject."""
    answer = client.complete_json(
        component="reflection",
        prompt="reflection",
        variables={
            "now": now.isoformat(timespec="minutes"),
            "profile": profile,
            "notes": notes,
            "earlier": earlier,
            "conversation": "\n".join(
                f"[{i}] {m.occurred_at:%Y-%m-%d %H:%M} {m.role}: {m.text}" for i, m in enumerate(messages, 1)
            ),
            "max_facts": config["reflection.maxFactsPerCall"],  # per message: chat.reflect._capped
            "max_notes": config["reflection.maxNotesPerCall"],
        },
        schema=prompt_schema("reflection"),
    )
    if answer is None:
        return None

    def message_of(item):
        """The message an operation names; None (the operation is dropped and counted) when it
        names none that was shown, unless there was only one to name."""
        index = item.get("message")
        if isinstance(index, int) and not isinstance(index, bool) and 1 <= index <= len(messages):
            return messages[index - 1]
        if index is None and len(messages) == 1:
            return messages[0]
        counter_add("llm.unknown_message")
        return None

    ops = []
    for item in answer.get("facts", []):
        if float(item.get("confidence") or 0.0) < MIN_CONFIDENCE:
            continue
        key, value = str(item["key"]).strip().lower(), str(item["value"]).strip()
        if not key or not value:  # small local models sometimes leave one of them empty
            continue
        ops.append(
            operation_class(
                op="SET",
                message=message_of(item),
                key=key,
                value=value,
                pinned=bool(item["pinned"]),
                keywords=[str(k) for k in item.get("keywords") or []],
                confidence=float(item.get("confidence") or 0.0),
                category=_category(item.get("category")),
            )
        )
    for item in answer.get("notes", []):
        if not str(item["content"]).strip():
            continue
        message = message_of(item)
        if message is None:
            continue
        ops.append(
            operation_class(
                op="NOTE",
                message=message,
                content=str(item["content"]),
                tags=[str(t).strip().lower() for t in item.get("tags") or [] if str(t).strip()],
                occurred_at=_occurred(item.get("occurred_at"), message.occurred_at),
                category=_category(item.get("category")),
            )
        )
    for item in answer.get("evolutions", []):
        if item.get("note_id") in note_ids:  # only notes the model was shown
            ops.append(
                operation_class(
                    op="EVOLVE",
                    message=message_of(item),
                    note_id=item["note_id"],
                    add_tags=[str(t) for t in item.get("add_tags") or []],
                    remove_tags=[str(t) for t in item.get("remove_tags") or []],
                )
            )
    for item in answer.get("retractions", []):
        ops.append(
            operation_class(
                op="RETRACT", message=message_of(item), key=str(item["key"]), value=str(item["value"])
            )
        )
    return [op for op in ops if op.message is not None]
