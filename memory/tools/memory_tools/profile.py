"""memory.profile.*: the facts held about the person."""

from memory.api.views import FactOut
from memory.categories import fact_category
from memory.models import ItemKind, ProfileFact
from memory.selectors import fact_history, fact_list
from memory.services import fact_remove
from memory.services.beliefs import fact_set_by_person
from memory.services.scrub import scrub
from memory.tools.memory_tools.common import (
    CATEGORY,
    KEY,
    PROJECT_ONLY,
    config_of,
    consent_route,
    not_stored,
    visible_scopes,
)
from memory.tools.registry import Tool, ToolContext, register
from memoryweb.errors import InvalidInput, NotFound


# --- profile ----------------------------------------------------------------------------------
def _visible_facts(context: ToolContext, facts: list[ProfileFact]) -> list[ProfileFact]:
    scopes = visible_scopes(context)
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
    # declared by the model, else read from the key and value by the consent classifier
    category = arguments.get("category", "").strip() or fact_category(
        arguments["key"].strip(), arguments["value"]
    )
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
        outcome = consent_route(context, kind=ItemKind.FACT, payload=payload, category=category)
        if outcome.action != "stored":
            return not_stored(outcome, category)
        fact = outcome.obj
        assert isinstance(fact, ProfileFact)
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
            config=config_of(context),
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
