"""The MCP server, built with the official SDK's low-level `Server`: the registry's MCP tools
(memory/tools: get_context, add_memory, … and the memory.* tools) and the subject's memory://
documents as resources.

A server session is fixed to one `McpSession`: the API key (its App bounds everything), the
subject's external id, and optionally one conversation of that subject (its scope and
working_dir then apply, as for a model's tool call). Over stdio it comes from the environment
once; over HTTP from each request's headers (memoryweb/mcp/http.py). No tool takes a subject.

Tools are listed under their wire name (`memory_profile_list`): MCP allows dots, but the clients
hand the names on to the OpenAI and Anthropic APIs, which do not; a call by either name works.

The Django ORM is synchronous: every handler does its work in one `sync_to_async` call, and
that call returns its database connection (closed when CONN_MAX_AGE is 0, as in the web
process) before it returns.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from asgiref.sync import sync_to_async
from django.db import close_old_connections
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from rest_framework import exceptions

from memory.api.auth import ApiKeyAuthentication
from memory.documents import document_resolve, document_url, documents_current
from memory.models import ApiKey, App, Subject
from memory.selectors import conversation_get, subject_access_check
from memory.services import Actor
from memory.services.apps import subject_get_or_create
from memory.tools import MCP, ToolContext, tool_execute, tools
from memoryweb.errors import AppPaused, AppPausedForSubject, InvalidInput, MemorywebError

NAME = "memoryweb"
MIME = "text/markdown"


class Unauthorized(MemorywebError):
    status_code = 401
    code = "not_authenticated"


@dataclass(frozen=True)
class McpSession:
    key: ApiKey
    subject: str  # the subject's external id, within the key's App
    conversation: int | None = None


def session_open(*, raw_key: str | None, subject: str | None, conversation: str | None = None) -> McpSession:
    """Authenticate the key and check what the session names (sync; raises Unauthorized,
    AppPaused, InvalidInput or NotFound). The subject is created on first write, not here."""
    if not raw_key or not raw_key.strip():
        raise Unauthorized("missing API key: send 'Authorization: Bearer <api key>'", field="api_key")
    try:
        _, key = ApiKeyAuthentication().authenticate_key(raw_key.strip())
    except exceptions.AuthenticationFailed as exc:
        raise Unauthorized(str(exc.detail), field="api_key") from exc
    if key.app.paused:
        raise AppPaused("this app is paused")
    subject = (subject or "").strip()
    if not subject or len(subject) > 200 or "/" in subject:
        raise InvalidInput("the subject must be 1–200 characters without '/'", field="subject")
    conversation_id = None
    if conversation not in (None, ""):
        if not str(conversation).isdigit() or int(conversation) < 1:
            raise InvalidInput("the conversation must be a positive integer id", field="conversation")
        conversation_id = int(conversation)
        found = conversation_get(app=key.app, conversation_id=conversation_id)
        if found.subject.external_id != subject:
            raise InvalidInput(f"conversation {conversation_id} is not the subject's", field="conversation")
    return McpSession(key=key, subject=subject, conversation=conversation_id)


def _app(session: McpSession) -> App:
    """The key's App as it is now (a stdio session outlives a pause)."""
    app = App.objects.get(pk=session.key.app_id)
    if app.paused:
        raise AppPaused("this app is paused")
    return app


def _tool_context(session: McpSession) -> ToolContext:
    app = _app(session)
    subject = subject_get_or_create(app=app, external_id=session.subject)
    subject_access_check(app=app, subject=subject)
    conversation = (
        conversation_get(app=app, conversation_id=session.conversation, subject=subject)
        if session.conversation is not None
        else None
    )
    return ToolContext(app=app, subject=subject, actor=Actor.api_key(session.key), conversation=conversation)


def _subject(session: McpSession) -> Subject | None:
    app = _app(session)
    subject = Subject.objects.filter(app=app, external_id=session.subject).first()
    if subject is not None:
        subject_access_check(app=app, subject=subject)
    return subject


async def _db(fn: Callable[..., Any], *args: Any) -> Any:
    def call():
        try:
            return fn(*args)
        finally:
            close_old_connections()

    return await sync_to_async(call, thread_sensitive=False)()


# --- handlers (sync halves) -----------------------------------------------------------------
def _call(session: McpSession, name: str, arguments: dict | None) -> types.CallToolResult:
    try:
        context = _tool_context(session)
    except MemorywebError as exc:
        error = {"code": exc.code, "message": exc.message}
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps({"error": error}))],
            structured_content={"error": error},
            is_error=True,
        )
    outcome = tool_execute(name=name, arguments=arguments, context=context, kind=MCP)
    payload = json.loads(outcome.text())
    return types.CallToolResult(
        content=[types.TextContent(text=outcome.text())], structured_content=payload, is_error=not outcome.ok
    )


def _resources(session: McpSession) -> list[types.Resource]:
    try:
        subject = _subject(session)
    except AppPausedForSubject as exc:
        raise MCPError(types.INVALID_REQUEST, exc.message) from exc
    if subject is None:
        return []
    return [
        types.Resource(
            uri=document_url(document.scope, document.path),
            name=document_url(document.scope, document.path).removeprefix("memory://"),
            title=document.path,
            description=f"{document.get_kind_display()} ({'scope ' + document.scope if document.scope else 'subject-wide'})",
            mime_type=MIME,
        )
        for document in documents_current(subject=subject)
    ]


def _read(session: McpSession, uri: str) -> types.ReadResourceResult:
    try:
        subject = _subject(session)
        if subject is None:
            raise MemorywebError(f"no memory document at {uri}")
        document = document_resolve(subject=subject, url=uri)
    except MemorywebError as exc:
        raise MCPError(types.INVALID_PARAMS, exc.message) from exc
    assert document.current is not None
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, text=document.current.content, mime_type=MIME)]
    )


def _tool_list() -> list[types.Tool]:
    return [
        types.Tool(name=t.wire_name, description=t.description, input_schema=t.schema) for t in tools(MCP)
    ]


# --- the server -----------------------------------------------------------------------------
SessionOf = Callable[[ServerRequestContext], McpSession]


def server_build(session_of: SessionOf) -> Server:
    """The MCP server; `session_of(ctx)` names the session a request runs in."""

    async def list_tools(ctx: ServerRequestContext, params) -> types.ListToolsResult:
        session_of(ctx)
        return types.ListToolsResult(tools=await _db(_tool_list))

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await _db(_call, session_of(ctx), params.name, params.arguments)

    async def list_resources(ctx: ServerRequestContext, params) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=await _db(_resources, session_of(ctx)))

    async def read_resource(
        ctx: ServerRequestContext, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await _db(_read, session_of(ctx), str(params.uri))

    return Server(
        NAME,
        instructions="memoryweb: the user's long-term memory. Call get_context with the user's message "
        "before answering; add_memory to remember something; memory:// resources are the session "
        "summaries.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
