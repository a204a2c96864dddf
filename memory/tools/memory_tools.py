"""The memory.* tools a model calls: profile facts, notes, lessons, procedures and memory://
reads. Each runs the service or selector of the matching REST endpoint and returns what that
endpoint returns, through the same output serializers.

Where a call runs comes from its conversation (`ToolContext`), never from the arguments:

- the subject is the conversation's; a note stored here gets the conversation (so its scope
  and working_dir); a fact is subject-wide unless `project_only` asks for the conversation's
  scope;
- what a tool reads or forgets is what the conversation can see: unscoped items and items of
  its own scope (notes, facts), the subject-wide memory:// documents and its project's;
- a note or fact given a consent `category` goes through the consent routing reflection uses
  (`memory_candidate_route`): stored under "allow", queued for the person under "ask" (the
  default of every sensitive category), dropped under "deny". The result's `status` says which.
"""

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memory.api.consent import PendingOut
from memory.api.documents import DocumentDetailOut
from memory.api.lessons import LessonOut, ProcedureOut
from memory.api.views import FactOut, NoteOut
from memory.config import get_config
from memory.documents import document_resolve, parse_url, project_of
from memory.models import ItemKind, Lesson, Note, Origin, Procedure, ProfileFact
from memory.search.lexical import NoteFilter, lesson_search, procedure_search
from memory.selectors import distilled_recall, fact_history, fact_list, note_get, note_recall
from memory.services import fact_remove, note_forget, note_store, notes_mark_recalled
from memory.services.beliefs import fact_set_by_person
from memory.services.consent import memory_candidate_route
from memory.services.notes import recalls_count
from memory.services.scrub import scrub
from memory.tools.registry import Tool, ToolContext, register
from memoryweb.errors import InvalidInput, NotFound

# --- argument schemas shared by several tools -------------------------------------------------
KEY = {
    "type": "string",
    "minLength": 1,
    "maxLength": 100,
    "pattern": r"^\w[\w .:-]*$",
    "description": "The fact's key: short, lower-case words, e.g. name, diet, home_city, timezone.",
}
PROJECT_ONLY = {
    "type": "boolean",
    "default": False,
    "description": "true: the fact holds only in this conversation's project (its scope); "
    "false (default): it holds about the person everywhere.",
}
CATEGORY = {
    "type": "string",
    "maxLength": 40,
    "description": "The consent category when the memory is sensitive: health, sexual_life, religion, "
    "politics, finances, precise_location, government_ids, credentials, relationships or minors. "
    "Always give it for such a memory: the person's consent settings then decide, and under 'ask' "
    "it waits for their approval (status 'pending') instead of being stored. Omit it otherwise.",
}
QUERY = {
    "type": "string",
    "maxLength": 2000,
    "description": "What to look for, in plain words; empty or omitted: the most recent ones.",
}


def _k(default: int | None = None) -> dict:
    schema: dict = {"type": "integer", "minimum": 1, "maximum": 50}
    if default is None:
        return {
            **schema,
            "description": "How many to return at most (default: the app's memory.notes.recallDefaultK, 10 unless changed).",
        }
    return {**schema, "default": default, "description": f"How many to return at most (default {default})."}


# --- what a conversation can see --------------------------------------------------------------
def _scopes(context: ToolContext) -> list[str]:
    """The scopes a conversation reaches: unscoped items, and its own scope's."""
    return sorted({"", context.scope})


def _config(context: ToolContext):
    return get_config(context.app)


def _routed(context: ToolContext, *, kind: str, payload: dict, category: str) -> dict | None:
    """Route a memory in a consent category (None: it was stored, and `payload["_stored"]` holds
    the row). Returns the tool's result when nothing was stored."""
    outcome = memory_candidate_route(
        subject=context.subject,
        kind=kind,
        payload=payload,
        category=category,
        actor=context.actor,
        config=_config(context),
        origin=Origin.API,
    )
    if outcome.action == "stored":
        payload["_stored"] = outcome.obj
        return None
    messages = {
        "denied": f"Not stored: the person does not allow memories about {category}.",
        "pending": "Not stored yet: it waits for the person's approval (their consent setting for "
        f"{category} is 'ask').",
        "already_pending": "Not stored yet: the same memory already waits for the person's approval.",
        "rejected_before": "Not stored: the person rejected this memory before.",
    }
    result: dict = {"status": outcome.action, "category": category, "message": messages[outcome.action]}
    if outcome.obj is not None:
        result["pending"] = PendingOut(outcome.obj).data
    return result


# --- profile ----------------------------------------------------------------------------------
def _visible_facts(context: ToolContext, facts: list[ProfileFact]) -> list[ProfileFact]:
    scopes = _scopes(context)
    return [fact for fact in facts if fact.scope in scopes]


def _profile_list(context: ToolContext, arguments: dict) -> dict:
    facts = _visible_facts(context, fact_list(subject=context.subject))
    return {"facts": FactOut(facts, many=True).data}


def _fact_scope(context: ToolContext, arguments: dict) -> str:
    if not arguments.get("project_only"):
        return ""
    if not context.scope:
        raise InvalidInput("this conversation has no project scope", field="project_only")
    return context.scope


def _profile_set(context: ToolContext, arguments: dict) -> dict:
    scope = _fact_scope(context, arguments)
    pinned = arguments.get("pinned", True)
    keywords = arguments.get("keywords") or []
    category = arguments.get("category", "").strip()
    if category:
        payload = {
            "key": arguments["key"].strip(),
            "value": scrub(arguments["value"].strip(), where="fact"),
            "pinned": pinned,
            "keywords": keywords,
            "scope": scope,
        }
        before = ProfileFact.objects.filter(
            subject=context.subject, key=payload["key"], mode="", scope=scope, valid_to=None
        ).first()
        refused = _routed(context, kind=ItemKind.FACT, payload=payload, category=category)
        if refused is not None:
            return refused
        fact = payload["_stored"]
        changed = before is None or fact.pk != before.pk  # the same value is a confirmation
    else:
        # as POST /profile: the same value reinforces the fact, a new one supersedes it
        fact, changed = fact_set_by_person(
            subject=context.subject,
            key=arguments["key"],
            value=arguments["value"],
            pinned=pinned,
            keywords=keywords,
            scope=scope,
            actor=context.actor,
            config=_config(context),
        )
    return {"status": "stored", "changed": changed, **FactOut(fact).data}


def _profile_remove(context: ToolContext, arguments: dict) -> dict:
    fact = fact_remove(
        subject=context.subject,
        key=arguments["key"],
        scope=_fact_scope(context, arguments),
        actor=context.actor,
    )
    return FactOut(fact).data


def _profile_history(context: ToolContext, arguments: dict) -> dict:
    key = arguments["key"]
    versions = _visible_facts(context, fact_history(subject=context.subject, key=key))
    if not versions:  # only another project's: missing here
        raise NotFound(f"no fact {key!r}", field="key")
    return {"key": key, "versions": FactOut(versions, many=True).data}


# --- notes ------------------------------------------------------------------------------------
def _occurred_at(value: str | None):
    if not value:
        return None
    parsed = parse_datetime(value)
    if parsed is None:
        raise InvalidInput("occurred_at must be an ISO 8601 date and time", field="occurred_at")
    return timezone.make_aware(parsed) if timezone.is_naive(parsed) else parsed


def _notes_store(context: ToolContext, arguments: dict) -> dict:
    occurred_at = _occurred_at(arguments.get("occurred_at"))
    category = arguments.get("category", "").strip()
    config = _config(context)
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
        refused = _routed(context, kind=ItemKind.NOTE, payload=payload, category=category)
        if refused is not None:
            return refused
        note = payload["_stored"]
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
        scopes=_scopes(context), tags=[t.strip().lower() for t in arguments.get("tags", []) if t.strip()]
    )
    results = note_recall(
        subject=context.subject,
        query=arguments.get("query", ""),
        k=arguments.get("k") or _config(context)["notes.recallDefaultK"],
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
    if note.scope not in _scopes(context):  # another project's note looks missing
        raise NotFound(f"no note {arguments['id']} for this subject", field="id")
    note_forget(note=note, actor=context.actor)
    return {"id": arguments["id"], "forgotten": True}


# --- lessons and procedures -------------------------------------------------------------------
def _distilled(model, search, out, key: str):
    def run(context: ToolContext, arguments: dict) -> dict:
        results = distilled_recall(
            model=model,
            search=search,
            subject=context.subject,
            query=arguments.get("query", ""),
            k=arguments.get("k", 5),
        )
        recalls_count(model=model, ids=[item.pk for item, _ in results])  # type: ignore[attr-defined]
        items = []
        for item, score in results:
            data = out(item).data
            data["score"] = round(score, 4)
            items.append(data)
        return {key: items}

    return run


# --- memory:// --------------------------------------------------------------------------------
def _memory_read(context: ToolContext, arguments: dict) -> dict:
    url = arguments["url"].strip()
    address = parse_url(url)
    project = project_of(context.scope, context.working_dir)
    if address is None or address.scope not in {"", project}:  # another project's looks missing
        raise NotFound(f"no memory document at {url}", field="url")
    return DocumentDetailOut(document_resolve(subject=context.subject, url=url)).data


TAGS = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 50},
    "maxItems": 16,
}

register(
    Tool(
        name="memory.profile.list",
        description="List the facts held about the user (their profile) that apply in this "
        "conversation: key, value, whether it always shows (pinned) or only when its keywords come "
        "up, and since when it holds.",
        input_schema={"properties": {}},
        run=_profile_list,
    )
)
register(
    Tool(
        name="memory.profile.set",
        description="Remember a stable fact about the user as key = value (name, diet, timezone, "
        "preferred language…). Setting a key that holds already replaces its value; the old value "
        "stays in its history. Use memory.notes.store for events and anything that is not one value.",
        input_schema={
            "properties": {
                "key": KEY,
                "value": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "The value."},
                "pinned": {
                    "type": "boolean",
                    "default": True,
                    "description": "true (default): shown in every conversation; false: only when one "
                    "of `keywords` comes up.",
                },
                "keywords": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 60},
                    "maxItems": 16,
                    "description": "Words that bring an unpinned fact up (required when pinned is false).",
                },
                "project_only": PROJECT_ONLY,
                "category": CATEGORY,
            },
            "required": ["key", "value"],
        },
        run=_profile_set,
    )
)
register(
    Tool(
        name="memory.profile.remove",
        description="Stop holding a fact about the user, e.g. when they say it is no longer true or "
        "ask you to forget it. Its history is kept.",
        input_schema={
            "properties": {"key": KEY, "project_only": PROJECT_ONLY},
            "required": ["key"],
        },
        run=_profile_remove,
    )
)
register(
    Tool(
        name="memory.profile.history",
        description="Every value a fact about the user has had, oldest first, with when each held "
        "(valid_from, valid_to) and which one is active.",
        input_schema={"properties": {"key": KEY}, "required": ["key"]},
        run=_profile_history,
    )
)
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
        run=_notes_store,
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
                "k": _k(),
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
register(
    Tool(
        name="memory.lessons.recall",
        description="Search the lessons distilled from many notes about the user: short principles "
        "(1–3 sentences) such as how they like answers or what went wrong before. Best match first.",
        input_schema={"properties": {"query": QUERY, "k": _k(5)}},
        run=_distilled(Lesson, lesson_search, LessonOut, "lessons"),
    )
)
register(
    Tool(
        name="memory.procedures.recall",
        description="Search the procedures distilled from earlier conversations: a title and 2–8 "
        "steps of how something was done before (advice to follow or adapt; nothing is run). "
        "Best match first.",
        input_schema={"properties": {"query": QUERY, "k": _k(5)}},
        run=_distilled(Procedure, procedure_search, ProcedureOut, "procedures"),
    )
)
register(
    Tool(
        name="memory.read",
        description="Read a memory document by its memory:// address, as cited in your context: "
        "memory://root (the summary of what is known about the user), memory://root/MEMORY.md, "
        "memory://root/skills/<name>/SKILL.md, memory://root/mental_models/<name>.md, or the same "
        "under memory://scope/<project>/ for this conversation's project. Returns its Markdown.",
        input_schema={
            "properties": {
                "url": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 1000,
                    "pattern": "^memory://",
                    "description": "The document's address, e.g. memory://root/MEMORY.md.",
                }
            },
            "required": ["url"],
        },
        run=_memory_read,
    )
)
