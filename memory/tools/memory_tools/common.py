"""What the memory tools share: argument schemas, what a conversation can see, consent routing."""

from memory.api.consent import PendingOut
from memory.config import get_config
from memory.models import Origin
from memory.services.consent import RouteOutcome, memory_candidate_route
from memory.tools.registry import ToolContext

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


def k_schema(default: int | None = None) -> dict:
    schema: dict = {"type": "integer", "minimum": 1, "maximum": 50}
    if default is None:
        return {
            **schema,
            "description": "How many to return at most (default: the app's memory.notes.recallDefaultK, 10 unless changed).",
        }
    return {**schema, "default": default, "description": f"How many to return at most (default {default})."}


# --- what a conversation can see --------------------------------------------------------------
def visible_scopes(context: ToolContext) -> list[str]:
    """The scopes a conversation reaches: unscoped items, and its own scope's."""
    return sorted({"", context.scope})


def config_of(context: ToolContext):
    return get_config(context.app)


def consent_route(context: ToolContext, *, kind: str, payload: dict, category: str) -> RouteOutcome:
    """A memory in a consent category, stored, queued or dropped as the subject's policy says."""
    return memory_candidate_route(
        subject=context.subject,
        kind=kind,
        payload=payload,
        category=category,
        actor=context.actor,
        config=config_of(context),
        origin=Origin.API,
    )


NOT_STORED = {
    "denied": "Not stored: the person does not allow memories about {category}.",
    "pending": "Not stored yet: it waits for the person's approval (their consent setting for "
    "{category} is 'ask').",
    "already_pending": "Not stored yet: the same memory already waits for the person's approval.",
    "rejected_before": "Not stored: the person rejected this memory before.",
}


def not_stored(outcome: RouteOutcome, category: str) -> dict:
    result: dict = {
        "status": outcome.action,
        "category": category,
        "message": NOT_STORED[outcome.action].format(category=category),
    }
    if outcome.obj is not None:
        result["pending"] = PendingOut(outcome.obj).data
    return result


TAGS = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 50},
    "maxItems": 16,
}
