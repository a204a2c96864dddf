"""The MCP server over streamable HTTP, at /mcp of the ASGI app (memoryweb/asgi.py).

Every request is authenticated on its own: `Authorization: Bearer mw_…` (401 JSON without a
usable key, 403 for a paused App), the subject from `X-Memoryweb-Subject` (400 without one) and
optionally `X-Memoryweb-Conversation` (a conversation id of that subject). The request then
runs in that session (the key's App, that subject) and nothing else.

The SDK's session manager runs stateless, answering in JSON: a request carries its own
session, so any web process may answer it (runall starts several behind one port) and no MCP
session can outlive or change its key. Daphne sends no ASGI lifespan events, so the manager's
task group is started on the first request, in a task that lives as long as the process.
"""

from __future__ import annotations

import asyncio
import json

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from memoryweb.errors import MemorywebError, error_body
from memoryweb.mcp.server import McpSession, server_build, session_open

PATHS = ("/mcp", "/mcp/")
SCOPE_KEY = "memoryweb.mcp"


def _session_of(ctx) -> McpSession:
    request = ctx.request
    session = request.scope.get(SCOPE_KEY) if request is not None else None
    if not isinstance(session, McpSession):  # never: every request passes McpApp.__call__
        raise RuntimeError("an MCP request without a session")
    return session


def _open(headers: dict[bytes, bytes]) -> McpSession:
    try:
        header = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, raw_key = header.partition(" ")
        return session_open(
            raw_key=raw_key if scheme.lower() == "bearer" else None,
            subject=headers.get(b"x-memoryweb-subject", b"").decode("utf-8", "replace"),
            conversation=headers.get(b"x-memoryweb-conversation", b"").decode("latin-1") or None,
        )
    finally:
        close_old_connections()


async def _refuse(send, exc: MemorywebError) -> None:
    body = json.dumps(error_body(exc.code, exc.message, exc.field)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if exc.status_code == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": exc.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class McpApp:
    """ASGI app for /mcp: authenticates, then hands the request to the SDK's session manager."""

    def __init__(self) -> None:
        self.manager = StreamableHTTPSessionManager(
            server_build(_session_of), json_response=True, stateless=True
        )
        self._ready: asyncio.Event | None = None
        self._task: asyncio.Task | None = None

    async def _started(self) -> None:
        if self._ready is None:  # no await before the assignment: one task starts it
            self._ready = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run(self._ready))
        await self._ready.wait()

    async def _run(self, ready: asyncio.Event) -> None:
        async with self.manager.run():
            ready.set()
            await asyncio.Future()  # for the life of the process

    async def __call__(self, scope, receive, send) -> None:
        headers = {name.lower(): value for name, value in scope.get("headers", [])}
        try:
            session = await sync_to_async(_open, thread_sensitive=False)(headers)
        except MemorywebError as exc:
            await _refuse(send, exc)
            return
        await self._started()
        await self.manager.handle_request({**scope, SCOPE_KEY: session}, receive, send)
