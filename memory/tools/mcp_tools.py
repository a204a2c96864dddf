"""The MCP server's own tools (get_context, add_memory, search_memories, list_memories,
delete_memory), registered for MCP only; the memory.* tools are served beside them.

Each runs in the `ToolContext` the server session fixes (the API key's App, the subject the
session names, optionally one conversation of it): none takes a subject, so a client can reach
only the subject its session was opened for. Each returns what the matching REST endpoint
returns, through the same serializers and the same services."""

from memory.api.views import FactOut, NoteOut
from memory.config import get_config
from memory.context import context_build
from memory.selectors import fact_list, note_get, note_recall
from memory.services import note_forget, notes_mark_recalled
from memory.tools.memory_tools.notes import notes_store
from memory.tools.registry import MCP, Tool, ToolContext, register

ONLY_MCP = frozenset({MCP})


def _context_text(as_dict: dict) -> str:
    return "\n\n".join(part for part in (as_dict["stable_prefix"], as_dict["tail"]) if part)


def _get_context(context: ToolContext, arguments: dict) -> dict:
    """POST /api/v1/context, built in full (an MCP client keeps no blocks from a previous turn)."""
    built = context_build(
        subject=context.subject,
        message=arguments["message"],
        config=get_config(context.app),
        conversation=context.conversation,
        k=arguments.get("k"),
    )
    data = built.as_dict(full=True)
    return {
        "context": _context_text(data),
        "items": data["items"],
        "tokens": data["tokens"]["total"],
        "retrieval_event_id": data["retrieval_event_id"],
    }


def _add_memory(context: ToolContext, arguments: dict) -> dict:
    """POST /api/v1/subjects/<subject>/notes as memory.notes.store does it: redaction,
    near-duplicate merge, eviction, and the consent routing of a sensitive note (the classifier
    reads its content); scope and working_dir come from the session's conversation, if any."""
    return notes_store(context, arguments)


def _recalled(results) -> list[dict]:
    notes_mark_recalled(note_ids=[note.pk for note, _ in results])
    return [{**NoteOut(note).data, "score": round(score, 4)} for note, score in results]


def _search_memories(context: ToolContext, arguments: dict) -> dict:
    """GET /api/v1/subjects/<subject>/notes?query=…"""
    results = note_recall(
        subject=context.subject,
        query=arguments["query"],
        k=arguments.get("k") or get_config(context.app)["notes.recallDefaultK"],
    )
    return {"notes": _recalled(results)}


def _list_memories(context: ToolContext, arguments: dict) -> dict:
    """The newest notes and the profile facts (GET …/notes without a query, GET …/profile)."""
    kind = arguments.get("kind", "all")
    result: dict = {}
    if kind in ("all", "notes"):
        result["notes"] = _recalled(note_recall(subject=context.subject, query="", k=arguments.get("k", 20)))
    if kind in ("all", "facts"):
        result["facts"] = FactOut(fact_list(subject=context.subject), many=True).data
    return result


def _delete_memory(context: ToolContext, arguments: dict) -> dict:
    """DELETE /api/v1/subjects/<subject>/notes/<id>: only a note of the session's subject (any
    other, another App's too, is "no note N")."""
    note = note_get(subject=context.subject, note_id=arguments["id"])
    note_forget(note=note, actor=context.actor)
    return {"deleted": arguments["id"]}


register(
    Tool(
        name="get_context",
        description="The memory context for a message: what is known about the user (profile facts, "
        "notes, lessons, the session summary) that bears on it, as text to put before the answer.",
        input_schema={
            "properties": {
                "message": {"type": "string", "minLength": 1, "maxLength": 20000},
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 50,
                    "description": "how many items at most",
                },
            },
            "required": ["message"],
        },
        run=_get_context,
        sets=ONLY_MCP,
    )
)
register(
    Tool(
        name="add_memory",
        description="Remember something about the user or the work, as a note (a repeat of an existing "
        "note is merged into it).",
        input_schema={
            "properties": {
                "content": {"type": "string", "minLength": 1, "maxLength": 20000},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 60}, "maxItems": 16},
            },
            "required": ["content"],
        },
        run=_add_memory,
        sets=ONLY_MCP,
    )
)
register(
    Tool(
        name="search_memories",
        description="Search the stored notes for a query; the best matches first, with their ids.",
        input_schema={
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 20000},
                "k": {"type": "integer", "minimum": 1, "maximum": 100},
            },
            "required": ["query"],
        },
        run=_search_memories,
        sets=ONLY_MCP,
    )
)
register(
    Tool(
        name="list_memories",
        description="List the newest notes and the profile facts held about the user.",
        input_schema={
            "properties": {
                "kind": {"enum": ["all", "notes", "facts"], "default": "all"},
                "k": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
            }
        },
        run=_list_memories,
        sets=ONLY_MCP,
    )
)
register(
    Tool(
        name="delete_memory",
        description="Forget a note by its id (from search_memories or list_memories).",
        input_schema={"properties": {"id": {"type": "integer", "minimum": 1}}, "required": ["id"]},
        run=_delete_memory,
        sets=ONLY_MCP,
    )
)
