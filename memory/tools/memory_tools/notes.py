"""memory.notes.*: store, recall and forget notes in the conversation's project."""

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memory.api.views import NoteOut
from memory.categories import classify_category
from memory.models import ItemKind, Note
from memory.search.lexical import NoteFilter
from memory.selectors import note_get, note_recall
from memory.services import note_forget, note_store, notes_mark_recalled
from memory.services.scrub import scrub
from memory.tools.memory_tools.common import (
    CATEGORY,
    QUERY,
    TAGS,
    config_of,
    consent_route,
    k_schema,
    not_stored,
    visible_scopes,
)
from memory.tools.registry import Tool, ToolContext, register
from memoryweb.errors import InvalidInput, NotFound


# --- notes ------------------------------------------------------------------------------------
def _occurred_at(value: str | None):
    if not value:
        return None
    parsed = parse_datetime(value)
    if parsed is None:
        raise InvalidInput("occurred_at must be an ISO 8601 date and time", field="occurred_at")
    return timezone.make_aware(parsed) if timezone.is_naive(parsed) else parsed


def notes_store(context: ToolContext, arguments: dict) -> dict:
    occurred_at = _occurred_at(arguments.get("occurred_at"))
    # what the model declares, else what the consent classifier reads in the content: a model
    # that stores "the user has diabetes" without naming health is still asked about
    category = arguments.get("category", "").strip() or classify_category(arguments["content"])
    config = config_of(context)
    if category:
        content = arguments["content"].strip()
        if not content:
            raise InvalidInput("content must be a non-empty string", field="content")
        payload = {
            "content": scrub(content, where="note"),
            "tags": arguments.get("tags") or [],
            "occurred_at": occurred_at,
            "conversation": context.conversation.pk if context.conversation is not None else None,
        }
        outcome = consent_route(context, kind=ItemKind.NOTE, payload=payload, category=category)
        if outcome.action != "stored":
            return not_stored(outcome, category)
        note = outcome.obj
        assert isinstance(note, Note)
        # a new note is written with updated_at = created_at; a merge moves updated_at on
        created = note.version == 1 and note.created_at == note.updated_at
    else:
        note, created = note_store(
            subject=context.subject,
            content=arguments["content"],
            tags=arguments.get("tags"),
            conversation=context.conversation,
            occurred_at=occurred_at,
            actor=context.actor,
            config=config,
        )
    return {"status": "stored", **NoteOut(note).data, "merged": not created}


def _notes_recall(context: ToolContext, arguments: dict) -> dict:
    filters = NoteFilter(
        scopes=visible_scopes(context),
        tags=[t.strip().lower() for t in arguments.get("tags", []) if t.strip()],
    )
    results = note_recall(
        subject=context.subject,
        query=arguments.get("query", ""),
        k=arguments.get("k") or config_of(context)["notes.recallDefaultK"],
        filters=filters,
    )
    notes_mark_recalled(note_ids=[note.pk for note, _ in results])
    payload = []
    for note, score in results:
        item = NoteOut(note).data
        item["score"] = round(score, 4)
        payload.append(item)
    return {"notes": payload}


def _notes_forget(context: ToolContext, arguments: dict) -> dict:
    note: Note = note_get(subject=context.subject, note_id=arguments["id"])
    if note.scope not in visible_scopes(context):  # another project's note looks missing
        raise NotFound(f"no note {arguments['id']} for this subject", field="id")
    note_forget(note=note, actor=context.actor)
    return {"id": arguments["id"], "forgotten": True}


register(
    Tool(
        name="memory.notes.store",
        description="Remember something worth recalling in a later conversation: a decision, an "
        "event, a preference with its reason, a fact about the project. One self-contained "
        "statement per note, understandable without this conversation. Stored with this "
        "conversation's project; storing the same thing twice merges it (merged: true).",
        input_schema={
            "properties": {
                "content": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 4000,
                    "description": "The note, in full sentences.",
                },
                "tags": {**TAGS, "description": "A few lower-case topic words, e.g. ['travel', 'lisbon']."},
                "occurred_at": {
                    "type": "string",
                    "format": "date-time",
                    "description": "When it happened or will happen (ISO 8601), if the note is about an event.",
                },
                "category": CATEGORY,
            },
            "required": ["content"],
        },
        run=notes_store,
    )
)
register(
    Tool(
        name="memory.notes.recall",
        description="Search the notes remembered about the user and this project, best match first "
        "(each with its id and a score). Use it before answering a question that earlier "
        "conversations may have covered.",
        input_schema={
            "properties": {
                "query": QUERY,
                "k": k_schema(),
                "tags": {**TAGS, "description": "Only notes with all of these tags."},
            },
        },
        run=_notes_recall,
    )
)
register(
    Tool(
        name="memory.notes.forget",
        description="Delete a note for good (its versions and links go with it), e.g. when the user "
        "asks you to forget it or it is wrong. Find its id with memory.notes.recall first.",
        input_schema={
            "properties": {"id": {"type": "integer", "minimum": 1, "description": "The note's id."}},
            "required": ["id"],
        },
        run=_notes_forget,
    )
)
