"""The memory tools: each defined once (name, description, JSON schema of its arguments, the
function that runs it) and rendered in the shapes the official SDKs take.

A tool runs in a `ToolContext`: the App and subject of the conversation the model talks in, and
that conversation's scope and working directory. Nothing a model sends can widen it — a tool's
schema has no `subject`, `scope` or `working_dir` argument, and `tool_execute` refuses arguments
the schema does not name.

Names are dotted (`memory.profile.set`); the OpenAI and Anthropic APIs allow only letters, digits,
`_` and `-` in a tool name, so they see the wire name (`memory_profile_set`), and either form
finds the tool."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import jsonschema
from django.db import transaction

from memory.models import App, Conversation, Subject
from memory.services import Actor
from memoryweb.counters import counter_add
from memoryweb.errors import MemorywebError

logger = logging.getLogger(__name__)

FORMATS = ("openai", "anthropic")
MODEL = "model"  # the memory.* tools: GET /api/v1/tools, POST /api/v1/tools/call, and MCP
MCP = "mcp"  # the MCP server's own tools (get_context, add_memory, …)


@dataclass(frozen=True)
class ToolContext:
    """Where a tool call runs: never taken from the model's arguments."""

    app: App
    subject: Subject
    actor: Actor
    conversation: Conversation | None = None

    @property
    def scope(self) -> str:
        return self.conversation.scope if self.conversation is not None else ""

    @property
    def working_dir(self) -> str:
        return self.conversation.working_dir if self.conversation is not None else ""


@dataclass(frozen=True)
class Tool:
    name: str  # dotted: memory.profile.set
    description: str
    input_schema: dict  # a JSON schema object; "additionalProperties": false is added
    run: Callable[[ToolContext, dict], dict]  # returns a JSON-serialisable result
    sets: frozenset[str] = field(default_factory=lambda: frozenset({MODEL, MCP}))

    @property
    def wire_name(self) -> str:
        return self.name.replace(".", "_")

    @property
    def schema(self) -> dict:
        return {"type": "object", "properties": {}, "additionalProperties": False, **self.input_schema}


@dataclass(frozen=True)
class ToolOutcome:
    tool: str  # the canonical name, or what was asked for when no tool has it
    ok: bool
    result: dict | None = None
    error: dict | None = None  # {"code", "message", "field"?}

    def payload(self) -> dict:
        return (self.result or {}) if self.ok else {"error": self.error}

    def text(self) -> str:
        return json.dumps(self.payload(), ensure_ascii=False, sort_keys=True, default=str)


_TOOLS: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    if tool.name in _TOOLS or any(t.wire_name == tool.wire_name for t in _TOOLS.values()):
        raise ValueError(f"tool {tool.name} is registered twice")
    jsonschema.Draft202012Validator.check_schema(tool.schema)
    _TOOLS[tool.name] = tool
    return tool


def tools(kind: str = MODEL) -> list[Tool]:
    _load()
    return sorted((t for t in _TOOLS.values() if kind in t.sets), key=lambda t: t.name)


def tool_find(name: str) -> Tool | None:
    _load()
    return _TOOLS.get(name) or next((t for t in _TOOLS.values() if t.wire_name == name), None)


def definitions(format: str, kind: str = MODEL) -> list[dict]:
    """The tools as the SDKs take them: OpenAI chat `tools=[{"type": "function", …}]`, Anthropic
    messages `tools=[{"name", "description", "input_schema"}]`."""
    if format == "openai":
        return [
            {
                "type": "function",
                "function": {"name": t.wire_name, "description": t.description, "parameters": t.schema},
            }
            for t in tools(kind)
        ]
    if format == "anthropic":
        return [
            {"name": t.wire_name, "description": t.description, "input_schema": t.schema} for t in tools(kind)
        ]
    raise ValueError(f"unknown tool format {format!r}")


def _error(tool: str, code: str, message: str, field: str | None = None) -> ToolOutcome:
    error = {"code": code, "message": message}
    if field:
        error["field"] = field
    counter_add(f"tools.error.{code}")
    return ToolOutcome(tool=tool, ok=False, error=error)


def tool_execute(*, name: str, arguments, context: ToolContext, kind: str = MODEL) -> ToolOutcome:
    """Run one tool call. Every failure is an outcome with an error (unknown tool, arguments that
    do not fit the schema, what the service refuses, and — logged — anything unexpected), so the
    model reads what went wrong and the caller never sees a 500."""
    tool = tool_find(name)
    if tool is None or kind not in tool.sets:
        return _error(name, "unknown_tool", f"no tool is called {name!r}", "name")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return _error(tool.name, "invalid", f"the arguments are not JSON: {exc.msg}", "arguments")
    if arguments is None:
        arguments = {}
    errors = sorted(jsonschema.Draft202012Validator(tool.schema).iter_errors(arguments), key=lambda e: e.path)
    if errors:
        first = errors[0]
        where = ".".join(str(p) for p in first.absolute_path)
        if first.validator == "additionalProperties":
            extra = (
                sorted(set(arguments) - set(tool.schema.get("properties", {})))
                if isinstance(arguments, dict)
                else []
            )
            where = extra[0] if extra else where
        elif first.validator == "required":
            where = str(first.message).split("'")[1] if "'" in first.message else where
        return _error(tool.name, "invalid", first.message, where or "arguments")
    try:
        # a savepoint: a tool that fails half-way leaves none of its writes behind, and a
        # database error inside it does not break the caller's transaction
        with transaction.atomic():
            result = tool.run(context, arguments)
    except MemorywebError as exc:
        return _error(tool.name, exc.code, exc.message, exc.field)
    except Exception:
        logger.exception("tool %s failed", tool.name)
        return _error(tool.name, "internal", f"{tool.name} failed on the server; it was logged")
    counter_add(f"tools.call.{tool.name}")
    return ToolOutcome(tool=tool.name, ok=True, result=result)


def tool_result_message(outcome: ToolOutcome, *, format: str, call_id: str) -> dict:
    """The outcome as the SDK takes it back: OpenAI a `role: tool` message, Anthropic a
    `tool_result` content block (`is_error` set on failures)."""
    if format == "openai":
        return {"role": "tool", "tool_call_id": call_id, "content": outcome.text()}
    if format == "anthropic":
        block: dict[str, object] = {"type": "tool_result", "tool_use_id": call_id, "content": outcome.text()}
        if not outcome.ok:
            block["is_error"] = True
        return block
    raise ValueError(f"unknown tool format {format!r}")


_LOADED = False


def _load() -> None:
    """Import the modules that register tools (once, on first use: they import services that
    import this module's neighbours)."""
    global _LOADED
    if not _LOADED:
        _LOADED = True
        from memory.tools import mcp_tools, memory_tools  # noqa: F401
