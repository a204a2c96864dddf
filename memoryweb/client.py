"""A small Python client for the memoryweb REST sidecar (`/api/v1/`), over httpx.

The loop of a chat app, one model call per user turn::

    from memoryweb.client import MemoryWeb, MemoryWebError

    with MemoryWeb("http://localhost:8000", api_key="mw_…") as memory:
        conversation = memory.conversation("alice", external_id="chat-42")
        while True:
            text = input("> ")
            memory.add_message(conversation["id"], text)
            context = memory.context("alice", text, conversation_id=conversation["id"])
            reply = call_model(system=context.prompt, user=text)  # your LLM call
            memory.respond(conversation["id"], reply)  # queues a reflection on the turn
            print(reply)

Posting the reply makes the server reflect on the turn in the background (new facts and
notes). An app that must read its own writes right away, a test or a script, waits for it
with `memory.flush("alice", conversation["id"])`. Sensitive memories wait for the person's
consent: `memory.pending("alice")`, then `pending_approve` or `pending_reject`.

`context.prompt` is the whole memory text (the stable prefix, then the tail sections). The
server does not resend a block the conversation already received unchanged; this client keeps
the last text of each block per conversation and puts the prompt back together, so the
prompt is always complete. `context.stable_prefix` and `context.tail` are the two halves, for
apps that cache the prefix with their model provider.

Every failure is a `MemoryWebError` with the HTTP status, the error code, the message and the
offending field; a server that cannot be reached gives status 0, code "unreachable", so an
app that treats memory as optional needs one `except`.

Only httpx here: a chat app installs this file without Django.
"""

from __future__ import annotations

import datetime
import os
import threading
from collections import OrderedDict
from typing import Any
from urllib.parse import quote

import httpx

__all__ = ["Context", "MemoryWeb", "MemoryWebError", "connect"]

API_PREFIX = "/api/v1"
# Conversations whose block texts are kept; the oldest is dropped beyond this. A dropped
# conversation costs one extra full fetch, never a wrong prompt.
MAX_CACHED_CONVERSATIONS = 1000

Datetime = datetime.datetime | str | None


class MemoryWebError(Exception):
    """An error answer from the sidecar, parsed from `{"error": {"code", "message", "field"}}`."""

    def __init__(
        self, status: int, code: str, message: str, field: str | None = None, fields: dict | None = None
    ):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.fields = fields or {}

    def __repr__(self):
        return f"MemoryWebError(status={self.status}, code={self.code!r}, field={self.field!r})"

    @classmethod
    def from_response(cls, response: httpx.Response) -> MemoryWebError:
        try:
            error = response.json()["error"]
            return cls(
                response.status_code,
                str(error.get("code") or "error"),
                str(error.get("message") or response.reason_phrase),
                error.get("field"),
                error.get("fields"),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            # not our JSON (a proxy's page, an unknown URL, a crash): keep a short excerpt
            return cls(response.status_code, f"http_{response.status_code}", response.text[:200].strip())


class Context:
    """The memory context for one message.

    `data` is the raw response (blocks already held by the conversation have `text: null`).
    `prompt`, `stable_prefix` and `tail` are the full texts, filled in from the client's cache.
    """

    def __init__(self, data: dict, texts: dict[str, str]):
        self.data = data
        self._texts = texts  # block name → full text, for this response

    def __repr__(self):
        return f"<Context {self.tokens.get('total', 0)} tokens, unchanged={self.unchanged}>"

    def text(self, block: str) -> str:
        """The full text of one block (`stable_prefix`, `profile`, `recalled`, `memory-index`)."""
        return self._texts.get(block, "")

    @property
    def stable_prefix(self) -> str:
        return self.text("stable_prefix")

    @property
    def tail(self) -> str:
        names = [b["name"] for b in self.data.get("blocks", []) if b["name"] != "stable_prefix"]
        return "\n\n".join(t for t in (self.text(n) for n in names) if t)

    @property
    def prompt(self) -> str:
        """stable_prefix + blank line + the tail sections in order; '' when memory is off."""
        return "\n\n".join(t for t in (self.stable_prefix, self.tail) if t)

    @property
    def unchanged(self) -> bool:
        return bool(self.data.get("unchanged"))

    @property
    def items(self) -> list[dict]:
        return self.data.get("items", [])

    @property
    def tokens(self) -> dict[str, int]:
        return self.data.get("tokens", {})

    @property
    def retrieval_event_id(self) -> int | None:
        return self.data.get("retrieval_event_id")

    @property
    def mode(self) -> str:
        """The assistant mode the context was built in."""
        return self.data.get("mode", "")

    @property
    def from_cache(self) -> bool:
        """Served from the server's context cache (`staleness` says how far the talk moved since)."""
        return bool(self.data.get("from_cache"))

    @property
    def staleness(self) -> float:
        return float(self.data.get("staleness") or 0.0)


def _iso(value: Datetime) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    raise TypeError(f"expected a datetime or an ISO 8601 string, got {type(value).__name__}")


def _seg(value: Any) -> str:
    """One URL path segment: a subject name or a fact key may hold spaces, ':' or '.'."""
    return quote(str(value), safe="")


def _drop_none(data: dict) -> dict:
    return {k: v for k, v in data.items() if v is not None}


class MemoryWeb:
    """The sidecar for a chat app. Thread-safe; use one instance per process."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ):
        base = base_url.rstrip("/")
        if not base.endswith(API_PREFIX):
            base += API_PREFIX
        self._http = httpx.Client(
            base_url=base,
            headers={"Authorization": f"Bearer {api_key}", "User-Agent": "memoryweb-client/1"},
            timeout=timeout,
            transport=transport,
        )
        self._blocks: OrderedDict[int, dict[str, tuple[str, str]]] = OrderedDict()
        self._lock = threading.Lock()

    # --- plumbing ---------------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> MemoryWeb:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _request(self, method: str, path: str, *, json: Any = None, params: dict | None = None) -> Any:
        try:
            response = self._http.request(method, path, json=json, params=params)
        except httpx.HTTPError as exc:
            raise MemoryWebError(0, "unreachable", f"{type(exc).__name__}: {exc}") from exc
        if response.status_code >= 400:
            raise MemoryWebError.from_response(response)
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    # --- conversations and messages -----------------------------------------------------------
    def conversation(
        self, subject: str, external_id: str = "", mode: str = "", scope: str = "", working_dir: str = ""
    ) -> dict:
        """Open a conversation, or get the subject's one with this `external_id`."""
        body = {
            "subject": subject,
            "external_id": external_id,
            "mode": mode,
            "scope": scope,
            "working_dir": working_dir,
        }
        return self._request("POST", "/conversations", json=body)

    def modes(self) -> list[dict]:
        """Every known assistant mode (the App's default first), each with its `summary`."""
        return self._request("GET", "/modes")["modes"]

    def mode(self, name: str) -> dict:
        """One assistant mode by name (NotFound when there is none)."""
        return self._request("GET", f"/modes/{_seg(name)}")

    def conversations(self, subject: str, limit: int | None = None) -> list[dict]:
        """The subject's conversations, most recently active first."""
        params = _drop_none({"subject": subject, "limit": limit})
        return self._request("GET", "/conversations", params=params)["conversations"]

    def conversation_get(self, conversation_id: int) -> dict:
        """One conversation, with its `message_count`."""
        return self._request("GET", f"/conversations/{int(conversation_id)}")

    def messages(
        self, conversation_id: int, limit: int | None = None, before: int | None = None
    ) -> list[dict]:
        """The conversation's messages, oldest first (the last `limit`, before message id `before`)."""
        params = _drop_none({"limit": limit, "before": before})
        return self._request("GET", f"/conversations/{int(conversation_id)}/messages", params=params)[
            "messages"
        ]

    def add_message(
        self,
        conversation_id: int,
        text: str,
        role: str = "user",
        occurred_at: Datetime = None,
        external_id: str = "",
        profile: str | None = None,
    ) -> dict:
        """Post one message. Posting again with the same `external_id` returns the first one.
        `profile`: the operational profile the reflection it starts runs under."""
        body = _drop_none(
            {
                "role": role,
                "text": text,
                "occurred_at": _iso(occurred_at),
                "external_id": external_id,
                "profile": profile,
            }
        )
        return self._request("POST", f"/conversations/{int(conversation_id)}/messages", json=body)

    def add_messages(
        self, conversation_id: int, messages: list[dict], profile: str | None = None
    ) -> list[dict]:
        """Post a batch of `{"text", "role"?, "occurred_at"?, "external_id"?}`: all or nothing."""
        items = []
        for message in messages:
            item = dict(message)
            if "occurred_at" in item:
                item["occurred_at"] = _iso(item["occurred_at"])
            items.append(_drop_none(item))
        path = f"/conversations/{int(conversation_id)}/messages"
        return self._request("POST", path, json=_drop_none({"messages": items, "profile": profile}))[
            "messages"
        ]

    def respond(
        self,
        conversation_id: int,
        text: str,
        occurred_at: Datetime = None,
        external_id: str = "",
        profile: str | None = None,
    ) -> dict:
        """Post the assistant's reply (`profile`: the one its reflection runs under)."""
        body = _drop_none(
            {"text": text, "occurred_at": _iso(occurred_at), "external_id": external_id, "profile": profile}
        )
        return self._request("POST", f"/conversations/{int(conversation_id)}/responses", json=body)

    def flush(self, subject: str, conversation_id: int | None = None, timeout_ms: int = 10_000) -> dict:
        """Wait, at most `timeout_ms`, until the background work of the subject is done — the
        reflections of its conversations (or of one) and its queued or running jobs such as a
        "consolidate now": `{"done", "pending", "reflections", "jobs", "waited_ms"}`. Not done in
        time is no error."""
        body = _drop_none({"subject": subject, "conversation": conversation_id, "timeout_ms": timeout_ms})
        return self._request("POST", "/flush", json=body)

    # --- context ----------------------------------------------------------------------------
    def context(
        self,
        subject: str,
        message: str,
        conversation_id: int | None = None,
        k: int | None = None,
        full: bool = False,
        mode: str | None = None,
        profile: str | None = None,
    ) -> Context:
        """The memory context for `message`; see `Context.prompt`. `mode` builds it in that
        assistant mode instead of the conversation's; `profile` names the operational profile.

        Blocks the server left out as unchanged come from this client's cache. If one is
        missing there (another process received it, or this client was restarted), the
        context is asked for again with `full: true`, once.
        """
        body = _drop_none(
            {
                "subject": subject,
                "message": message,
                "conversation": conversation_id,
                "k": k,
                "mode": mode,
                "profile": profile,
            }
        )
        if full:
            body["full"] = True
        data = self._request("POST", "/context", json=body)
        texts = self._texts(conversation_id, data)
        if texts is None:
            data = self._request("POST", "/context", json={**body, "full": True})
            texts = self._texts(conversation_id, data)
        return Context(data, texts or {})

    def _texts(self, conversation_id: int | None, data: dict) -> dict[str, str] | None:
        """Every block's full text (None if one cannot be filled in); updates the cache."""
        blocks = data.get("blocks", [])
        if conversation_id is None:
            return {b["name"]: b["text"] or "" for b in blocks}
        with self._lock:
            held = self._blocks.get(conversation_id, {})
            texts = {}
            for block in blocks:
                name, text = block["name"], block["text"]
                if text is None:
                    cached = held.get(name)
                    if cached is None or cached[0] != block["digest"]:
                        return None
                    text = cached[1]
                texts[name] = text
            self._blocks[conversation_id] = {b["name"]: (b["digest"], texts[b["name"]]) for b in blocks}
            self._blocks.move_to_end(conversation_id)
            while len(self._blocks) > MAX_CACHED_CONVERSATIONS:
                self._blocks.popitem(last=False)
        return texts

    # --- profile ----------------------------------------------------------------------------
    def profile_set(
        self,
        subject: str,
        key: str,
        value: str,
        pinned: bool = True,
        keywords: list[str] | None = None,
        mode: str = "",
        scope: str = "",
        confidence: float | None = None,
    ) -> dict:
        """Set a fact. Unpinned (contextual) facts need `keywords`; they render when one matches."""
        body = _drop_none(
            {
                "key": key,
                "value": value,
                "pinned": pinned,
                "keywords": keywords,
                "mode": mode,
                "scope": scope,
                "confidence": confidence,
            }
        )
        return self._request("POST", f"/subjects/{_seg(subject)}/profile", json=body)

    def profile(self, subject: str) -> list[dict]:
        """The subject's active facts."""
        return self._request("GET", f"/subjects/{_seg(subject)}/profile")["facts"]

    def profile_history(self, subject: str, key: str) -> list[dict]:
        """Every version of the fact `key`, oldest first."""
        return self._request("GET", f"/subjects/{_seg(subject)}/profile/{_seg(key)}/history")["versions"]

    def profile_remove(self, subject: str, key: str, mode: str = "", scope: str = "") -> dict:
        """Close the active version of `key` (its history stays)."""
        params = {k: v for k, v in {"mode": mode, "scope": scope}.items() if v}
        return self._request("DELETE", f"/subjects/{_seg(subject)}/profile/{_seg(key)}", params=params)

    # --- notes ------------------------------------------------------------------------------
    def note_store(
        self,
        subject: str,
        content: str,
        tags: list[str] | None = None,
        conversation_id: int | None = None,
        message_id: int | None = None,
        occurred_at: Datetime = None,
        mode: str | None = None,
    ) -> dict:
        """Store a note (`merged: true` when it repeated an existing one). Scope comes from the
        conversation; `mode` (a known assistant mode, `modes()`) makes it render only there."""
        body = _drop_none(
            {
                "content": content,
                "tags": tags,
                "conversation": conversation_id,
                "message": message_id,
                "occurred_at": _iso(occurred_at),
                "mode": mode,
            }
        )
        return self._request("POST", f"/subjects/{_seg(subject)}/notes", json=body)

    def notes_recall(
        self,
        subject: str,
        query: str = "",
        k: int | None = None,
        tags: list[str] | None = None,
        scope: str | None = None,
        working_dir: str | None = None,
        archived: bool = False,
    ) -> list[dict]:
        """The best `k` notes for `query` (newest first without one), each with a `score`;
        without `k`, the App's `memory.notes.recallDefaultK`."""
        params = _drop_none(
            {
                "query": query,
                "k": k,
                "tags": ",".join(tags) if tags else None,
                "scope": scope,
                "working_dir": working_dir,
                "archived": "true" if archived else None,
            }
        )
        return self._request("GET", f"/subjects/{_seg(subject)}/notes", params=params)["notes"]

    def note(self, subject: str, id: int) -> dict:
        """One note by id (archived ones too), with its versions and sources."""
        return self._request("GET", f"/subjects/{_seg(subject)}/notes/{int(id)}")

    def note_edit(
        self, subject: str, id: int, content: str | None = None, tags: list[str] | None = None
    ) -> dict:
        """Write a new version of a note."""
        body = _drop_none({"content": content, "tags": tags})
        return self._request("PATCH", f"/subjects/{_seg(subject)}/notes/{int(id)}", json=body)

    def note_forget(self, subject: str, id: int) -> None:
        """Delete a note and its versions."""
        self._request("DELETE", f"/subjects/{_seg(subject)}/notes/{int(id)}")

    # --- feedback ---------------------------------------------------------------------------
    def vote(self, subject: str, item: str, signal: str, mode: str | None = None) -> dict:
        """Vote on an item of a context (`n:ID` or `f:ID`): up, down, used, useful, irrelevant, …
        `mode`: the assistant mode the signal was given in ("intrusive" lowers the item there)."""
        body = _drop_none({"item": item, "signal": signal, "mode": mode})
        return self._request("POST", f"/subjects/{_seg(subject)}/votes", json=body)

    # --- consent ----------------------------------------------------------------------------
    def consent_categories(self) -> list[dict]:
        """The sensitive categories (`slug`, `name`, `description`, `default_policy`)."""
        return self._request("GET", "/consent/categories")["categories"]

    def consent(self, subject: str) -> list[dict]:
        """The subject's effective policy per category (`category`, `policy`, `is_default`, …)."""
        return self._request("GET", f"/subjects/{_seg(subject)}/consent")["policies"]

    def consent_set(self, subject: str, category: str, policy: str) -> list[dict]:
        """Set `allow`, `ask` or `deny` for one category; returns every policy of the subject."""
        body = {"category": category, "policy": policy}
        return self._request("POST", f"/subjects/{_seg(subject)}/consent", json=body)["policies"]

    def pending(self, subject: str, status: str = "pending") -> list[dict]:
        """Memories waiting for consent (or decided ones: `approved`, `rejected`, `expired`), newest first."""
        return self._request("GET", f"/subjects/{_seg(subject)}/pending", params={"status": status})[
            "pending"
        ]

    def pending_approve(self, subject: str, id: int) -> dict:
        """Store a pending memory; the answer's `result_id` is the new fact or note."""
        return self._request("POST", f"/subjects/{_seg(subject)}/pending/{int(id)}/approve")

    def pending_reject(self, subject: str, id: int) -> dict:
        """Drop a pending memory; the same content is not asked about again."""
        return self._request("POST", f"/subjects/{_seg(subject)}/pending/{int(id)}/reject")

    # --- memory tools for models -------------------------------------------------------------
    def tools(self, format: str = "openai") -> list[dict]:
        """The memory tools as the SDK takes them (`format` "openai" or "anthropic"): pass as `tools=`."""
        return self._request("GET", "/tools", params={"format": format})["tools"]

    def tool_call(self, conversation_id: int, call: Any, format: str = "openai") -> dict:
        """Run a model's tool call in the conversation; `call` is the SDK's object (OpenAI
        `message.tool_calls[i]`, Anthropic a `tool_use` block) or its dict. The answer's `result`
        is what goes back to the SDK (a `role: tool` message, or a `tool_result` block)."""
        if hasattr(call, "model_dump"):
            call = call.model_dump(exclude_none=True)
        return self._request(
            "POST", "/tools/call", json={"conversation": int(conversation_id), "format": format, "call": call}
        )

    # --- the subject as a whole -------------------------------------------------------------
    def export(self, subject: str) -> dict:
        """Everything held about the subject: facts with history, notes with versions,
        conversations with messages, consent policies and pending memories."""
        return self._request("GET", f"/subjects/{_seg(subject)}")

    def subject_delete(self, subject: str) -> None:
        """Delete the subject and everything held about it. Cannot be undone."""
        self._request("DELETE", f"/subjects/{_seg(subject)}")

    def subject_import(self, subject: str, document: dict) -> dict:
        """Load an `export()` document into the subject (POST /subjects/{subject}/import): the counts."""
        return self._request("POST", f"/subjects/{_seg(subject)}/import", json=document)


def connect(
    transport: str = "auto", base_url: str | None = None, api_key: str | None = None, *, timeout: float = 10.0
) -> MemoryWeb:
    """A client over `transport`: "http" (to `base_url` or MEMORYWEB_BASE_URL), "local" (in this
    process, through Django's own WSGI stack against the configured database; DJANGO_SETTINGS_MODULE
    defaults to memoryweb.settings), or "auto" (http when MEMORYWEB_BASE_URL is set, else local).
    The key is `api_key` or MEMORYWEB_API_KEY (mint one with `manage.py createapp`)."""
    base_url = base_url or os.environ.get("MEMORYWEB_BASE_URL")
    api_key = api_key or os.environ.get("MEMORYWEB_API_KEY")
    if transport == "auto":
        transport = "http" if base_url else "local"
    if not api_key:
        raise MemoryWebError(0, "no_api_key", "pass api_key or set MEMORYWEB_API_KEY", "api_key")
    if transport == "http":
        if not base_url:
            raise MemoryWebError(0, "no_base_url", "pass base_url or set MEMORYWEB_BASE_URL", "base_url")
        return MemoryWeb(base_url, api_key, timeout=timeout)
    if transport == "local":
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
        import django
        from django.core.wsgi import get_wsgi_application

        django.setup()
        wsgi = httpx.WSGITransport(app=get_wsgi_application())
        return MemoryWeb("http://localhost", api_key, timeout=timeout, transport=wsgi)
    raise ValueError(f"transport must be 'auto', 'local' or 'http', not {transport!r}")
