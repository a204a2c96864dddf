"""A small Python client for the memoryweb REST sidecar (`/api/v1/`), over httpx, sync or async.

The loop of a chat app, one model call per user turn::

    from memoryweb.client import MemoryWebError, connect

    with connect() as memory:  # http when MEMORYWEB_BASE_URL is set, else in this process
        conversation = memory.conversation("alice", external_id="chat-42")
        while True:
            text = input("> ")
            memory.add_message(conversation.id, text)
            context = memory.context("alice", text, conversation_id=conversation.id)
            reply = call_model(system=context.prompt, user=text)  # your LLM call
            memory.respond(conversation.id, reply)  # queues a reflection on the turn
            print(reply)

`connect_async()` gives an `AsyncMemoryWeb` (over `httpx.AsyncClient`) with the same methods,
each a coroutine: `conversation = await memory.conversation("alice")`. Both classes take their
requests from one table (`ENDPOINTS`) and one set of request builders (`_Api`), so they cannot
drift apart; `tests/memoryweb/test_client.py` checks that every app-key route of the URL conf
has a method.

Results are typed: `Conversation`, `Message`, `Fact`, `Note`, `Lesson`, `Procedure`,
`PendingItem`, `VoteResult`, `FlushResult`, `ToolCallResult`, … Each is the JSON object itself
(a dict: `note["id"]` works) with typed attributes (`note.id`); fields the server adds later are
kept, and `.raw` is the plain dict.

Posting the reply makes the server reflect on the turn in the background (new facts and
notes). An app that must read its own writes right away, a test or a script, waits for it
with `memory.flush("alice", conversation.id)`. Sensitive memories wait for the person's
consent: `memory.pending("alice")`, then `pending_approve` or `pending_reject`.

`context.prompt` is the whole memory text (the stable prefix, then the tail sections). The
server does not resend a block the conversation already received unchanged; this client keeps
the last text of each block per conversation and puts the prompt back together, so the
prompt is always complete. `context.stable_prefix` and `context.tail` are the two halves, for
apps that cache the prefix with their model provider.

Every failure is a `MemoryWebError` with the HTTP status, the error code, the message and the
offending field; a server that cannot be reached gives status 0, code "unreachable", so an
app that treats memory as optional needs one `except`.

`MemoryWebAdmin` and `AsyncMemoryWebAdmin` cover the operators' routes (/api/v1/admin/, an
admin key) the same way.

Only httpx here: a chat app installs this file without Django (the "local" transport alone
needs the project). docs/client.md has the whole method list.
"""

from __future__ import annotations

import datetime
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar
from urllib.parse import quote

import httpx

__all__ = [
    "ADMIN_ENDPOINTS",
    "ENDPOINTS",
    "AsyncMemoryWeb",
    "AsyncMemoryWebAdmin",
    "Belief",
    "ConsentPolicy",
    "Context",
    "Conversation",
    "Fact",
    "FlushResult",
    "Lesson",
    "MemoryWeb",
    "MemoryWebAdmin",
    "MemoryWebError",
    "MentalModel",
    "Message",
    "Mode",
    "Note",
    "PendingDecision",
    "PendingItem",
    "Procedure",
    "Result",
    "ToolCallResult",
    "VoteResult",
    "connect",
    "connect_async",
]

API_PREFIX = "/api/v1"
# Conversations whose block texts are kept; the oldest is dropped beyond this. A dropped
# conversation costs one extra full fetch, never a wrong prompt.
MAX_CACHED_CONVERSATIONS = 1000

Datetime = datetime.datetime | str | None
T = TypeVar("T")

# Every request the clients make: method name → (HTTP method, path under /api/v1). The path's
# {names} are filled in from the method's arguments, each quoted as one segment.
ENDPOINTS: dict[str, tuple[str, str]] = {
    # conversations and messages
    "conversation": ("POST", "/conversations"),
    "conversations": ("GET", "/conversations"),
    "conversation_get": ("GET", "/conversations/{conversation_id}"),
    "conversation_state": ("GET", "/conversations/{conversation_id}/state"),
    "messages": ("GET", "/conversations/{conversation_id}/messages"),
    "add_message": ("POST", "/conversations/{conversation_id}/messages"),
    "add_messages": ("POST", "/conversations/{conversation_id}/messages"),
    "respond": ("POST", "/conversations/{conversation_id}/responses"),
    "flush": ("POST", "/flush"),
    # context, modes, tools
    "context": ("POST", "/context"),
    "modes": ("GET", "/modes"),
    "mode": ("GET", "/modes/{name}"),
    "tools": ("GET", "/tools"),
    "tool_call": ("POST", "/tools/call"),
    # profile
    "profile_set": ("POST", "/subjects/{subject}/profile"),
    "profile": ("GET", "/subjects/{subject}/profile"),
    "profile_history": ("GET", "/subjects/{subject}/profile/{key}/history"),
    "profile_remove": ("DELETE", "/subjects/{subject}/profile/{key}"),
    "profile_park": ("PATCH", "/subjects/{subject}/profile/{key}"),
    # notes and votes
    "note_store": ("POST", "/subjects/{subject}/notes"),
    "notes_recall": ("GET", "/subjects/{subject}/notes"),
    "note": ("GET", "/subjects/{subject}/notes/{note_id}"),
    "note_edit": ("PATCH", "/subjects/{subject}/notes/{note_id}"),
    "note_forget": ("DELETE", "/subjects/{subject}/notes/{note_id}"),
    "vote": ("POST", "/subjects/{subject}/votes"),
    # lessons, procedures, consequences
    "lessons": ("GET", "/subjects/{subject}/lessons"),
    "lesson": ("GET", "/subjects/{subject}/lessons/{lesson_id}"),
    "lesson_edit": ("PATCH", "/subjects/{subject}/lessons/{lesson_id}"),
    "lesson_park": ("PATCH", "/subjects/{subject}/lessons/{lesson_id}"),
    "lesson_delete": ("DELETE", "/subjects/{subject}/lessons/{lesson_id}"),
    "procedures": ("GET", "/subjects/{subject}/procedures"),
    "procedure": ("GET", "/subjects/{subject}/procedures/{procedure_id}"),
    "procedure_edit": ("PATCH", "/subjects/{subject}/procedures/{procedure_id}"),
    "procedure_park": ("PATCH", "/subjects/{subject}/procedures/{procedure_id}"),
    "procedure_delete": ("DELETE", "/subjects/{subject}/procedures/{procedure_id}"),
    "consequences": ("GET", "/subjects/{subject}/consequences"),
    "consequence": ("GET", "/subjects/{subject}/consequences/{consequence_id}"),
    "consequence_edit": ("PATCH", "/subjects/{subject}/consequences/{consequence_id}"),
    "consequence_delete": ("DELETE", "/subjects/{subject}/consequences/{consequence_id}"),
    # beliefs and evidence
    "beliefs": ("GET", "/subjects/{subject}/beliefs"),
    "belief": ("GET", "/subjects/{subject}/beliefs/{belief_id}"),
    "belief_revise": ("POST", "/subjects/{subject}/beliefs/{belief_id}/revise"),
    "revisions": ("GET", "/subjects/{subject}/revisions"),
    "evidence": ("GET", "/evidence/{evidence_id}"),
    "evidence_delete": ("DELETE", "/evidence/{evidence_id}"),
    # contracts
    "contracts": ("GET", "/subjects/{subject}/contract"),
    "contract_edit": ("PATCH", "/subjects/{subject}/contract"),
    "contract_reset": ("DELETE", "/subjects/{subject}/contract"),
    "contract": ("GET", "/subjects/{subject}/contract/{mode}"),
    "contract_mode_edit": ("PATCH", "/subjects/{subject}/contract/{mode}"),
    "contract_mode_reset": ("DELETE", "/subjects/{subject}/contract/{mode}"),
    # memory:// documents and the memory operations
    "memory_read": ("GET", "/subjects/{subject}/memory"),
    "memory_documents": ("GET", "/subjects/{subject}/memory/documents"),
    "memory_history": ("GET", "/subjects/{subject}/memory/history"),
    "memory_view": ("POST", "/subjects/{subject}/memory/view"),
    "memory_stats": ("GET", "/subjects/{subject}/memory/stats"),
    "memory_diagnose": ("GET", "/subjects/{subject}/memory/diagnose"),
    "memory_clear": ("POST", "/subjects/{subject}/memory/clear"),
    "memory_reset": ("POST", "/subjects/{subject}/memory/reset"),
    "memory_enqueue": ("POST", "/subjects/{subject}/memory/enqueue"),
    "memory_rebuild": ("POST", "/subjects/{subject}/memory/rebuild"),
    "memory_reload": ("POST", "/subjects/{subject}/memory/reload"),
    "mental_models": ("GET", "/subjects/{subject}/memory/mental-models"),
    "mental_model_create": ("POST", "/subjects/{subject}/memory/mental-models"),
    "mental_models_seed": ("POST", "/subjects/{subject}/memory/mental-models/seed"),
    "mental_models_refresh": ("POST", "/subjects/{subject}/memory/mental-models/refresh"),
    "mental_model": ("GET", "/subjects/{subject}/memory/mental-models/{name}"),
    "mental_model_delete": ("DELETE", "/subjects/{subject}/memory/mental-models/{name}"),
    "mental_model_refresh": ("POST", "/subjects/{subject}/memory/mental-models/{name}/refresh"),
    "mental_model_history": ("GET", "/subjects/{subject}/memory/mental-models/{name}/history"),
    "consolidate": ("POST", "/subjects/{subject}/consolidate"),
    # consent
    "consent_categories": ("GET", "/consent/categories"),
    "consent": ("GET", "/subjects/{subject}/consent"),
    "consent_set": ("POST", "/subjects/{subject}/consent"),
    "pending": ("GET", "/subjects/{subject}/pending"),
    "pending_approve": ("POST", "/subjects/{subject}/pending/{pending_id}/approve"),
    "pending_reject": ("POST", "/subjects/{subject}/pending/{pending_id}/reject"),
    # the subject as a whole
    "export": ("GET", "/subjects/{subject}"),
    "subject_delete": ("DELETE", "/subjects/{subject}"),
    "subject_import": ("POST", "/subjects/{subject}/import"),
}


# The operators' routes (an admin key, never an app's): MemoryWebAdmin and AsyncMemoryWebAdmin.
ADMIN_ENDPOINTS: dict[str, tuple[str, str]] = {
    "admin_retrieval": ("GET", "/admin/retrievals/{event_id}"),
    "admin_replay": ("POST", "/admin/replay"),
    "admin_reindex": ("POST", "/admin/reindex"),
    "admin_metrics": ("GET", "/admin/metrics"),
    "admin_metrics_compute": ("POST", "/admin/metrics"),
    "admin_metrics_history": ("GET", "/admin/metrics/history"),
    "admin_rebuild": ("POST", "/admin/rebuild"),
    "admin_conversation_export": ("GET", "/admin/conversations/{conversation_id}/export"),
    "admin_lifecycle": ("POST", "/admin/lifecycle"),
}


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


# --- typed results ----------------------------------------------------------------------------
class Result(dict):
    """One JSON object of an answer: the dict itself (`result["id"]`), with its fields as
    attributes (`result.id`). The annotations of a subclass name the fields the server always
    sends; any other field is kept too. `raw` is a plain-dict copy."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"

    @property
    def raw(self) -> dict:
        return dict(self)


class Conversation(Result):
    id: int
    subject: str
    external_id: str
    mode: str
    scope: str


class Message(Result):
    id: int
    role: str
    name: str  # who said it ("" when not said)
    text: str
    occurred_at: str


class Fact(Result):
    id: int
    key: str
    value: str
    pinned: bool


class Note(Result):
    id: int
    content: str
    tags: list[str]
    version: int


class Lesson(Result):
    id: int
    text: str


class Procedure(Result):
    id: int


class PendingItem(Result):
    id: int
    kind: str
    category: str
    status: str
    payload: dict


class PendingDecision(Result):
    id: int
    status: str
    result_id: int | None


class VoteResult(Result):
    score: float


class FlushResult(Result):
    done: bool
    pending: int
    waited_ms: int


class ToolCallResult(Result):
    result: Any


class Mode(Result):
    name: str
    summary: str


class ConsentPolicy(Result):
    category: str
    policy: str
    is_default: bool


class Belief(Result):
    id: str


class MentalModel(Result):
    name: str


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


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and how its JSON answer becomes the result."""

    method: str
    path: str
    parse: Callable[[Any], T]
    json: Any = None
    params: dict | None = None


# A method's plan: one Call, or a generator that yields Calls, receives each one's parsed result
# and returns the method's result (the context's retry in full).
Plan = Call[T] | Generator[Call[Any], Any, T]


def _call(
    endpoint: str, parse: Callable[[Any], T], /, *, json: Any = None, params: dict | None = None, **path: Any
) -> Call[T]:
    method, template = ENDPOINTS[endpoint] if endpoint in ENDPOINTS else ADMIN_ENDPOINTS[endpoint]
    return Call(method, template.format(**{k: _seg(v) for k, v in path.items()}), parse, json, params)


def _one(cls: type[T]) -> Callable[[Any], T]:
    return lambda data: cls(data)  # type: ignore[call-arg]


def _many(cls: type[T], key: str) -> Callable[[Any], list[T]]:
    return lambda data: [cls(item) for item in data[key]]  # type: ignore[call-arg]


def _none(data: Any) -> None:
    return None


def _iso(value: Datetime) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    raise TypeError(f"expected a datetime or an ISO 8601 string, got {type(value).__name__}")


def _seg(value: Any) -> str:
    """One URL path segment: a subject name or a fact key may hold spaces, ':' or '.'."""
    return quote(str(value), safe="")


def _qualifiers(mode: str, scope: str) -> dict:
    """A fact's `mode` and `scope` as query parameters, the empty ones left out."""
    return {k: v for k, v in {"mode": mode, "scope": scope}.items() if v}


def _drop_none(data: dict) -> dict:
    return {k: v for k, v in data.items() if v is not None}


class _Api:
    """Every method of both clients, once: each builds its plan and hands it to `_run`, which
    `MemoryWeb` carries out with blocking calls and `AsyncMemoryWeb` with awaited ones (so
    there, every method returns an awaitable of the result named here)."""

    def __init__(self) -> None:
        self._blocks: OrderedDict[int, dict[str, tuple[str, str]]] = OrderedDict()
        self._lock = threading.Lock()

    def _run(self, plan: Plan[T]) -> T:
        raise NotImplementedError

    # --- conversations and messages -----------------------------------------------------------
    def conversation(
        self, subject: str, external_id: str = "", mode: str = "", scope: str = "", working_dir: str = ""
    ) -> Conversation:
        """Open a conversation, or get the subject's one with this `external_id`."""
        body = {
            "subject": subject,
            "external_id": external_id,
            "mode": mode,
            "scope": scope,
            "working_dir": working_dir,
        }
        return self._run(_call("conversation", _one(Conversation), json=body))

    def conversations(self, subject: str, limit: int | None = None) -> list[Conversation]:
        """The subject's conversations, most recently active first."""
        params = _drop_none({"subject": subject, "limit": limit})
        return self._run(_call("conversations", _many(Conversation, "conversations"), params=params))

    def conversation_get(self, conversation_id: int) -> Conversation:
        """One conversation, with its `message_count`."""
        return self._run(_call("conversation_get", _one(Conversation), conversation_id=int(conversation_id)))

    def conversation_state(self, conversation_id: int) -> Result:
        """What the conversation is about right now (its goal, open questions, …)."""
        return self._run(_call("conversation_state", _one(Result), conversation_id=int(conversation_id)))

    def messages(
        self, conversation_id: int, limit: int | None = None, before: int | None = None
    ) -> list[Message]:
        """The conversation's messages, oldest first (the last `limit`, before message id `before`)."""
        params = _drop_none({"limit": limit, "before": before})
        return self._run(
            _call("messages", _many(Message, "messages"), params=params, conversation_id=int(conversation_id))
        )

    def add_message(
        self,
        conversation_id: int,
        text: str,
        role: str = "user",
        occurred_at: Datetime = None,
        external_id: str = "",
        profile: str | None = None,
        name: str | None = None,
    ) -> Message:
        """Post one message. Posting again with the same `external_id` returns the first one.
        `profile`: the operational profile the reflection it starts runs under. `name`: who
        said it ("Melanie"), when the app knows: a group chat's member, one of several agents."""
        body = _drop_none(
            {
                "role": role,
                "name": name,
                "text": text,
                "occurred_at": _iso(occurred_at),
                "external_id": external_id,
                "profile": profile,
            }
        )
        return self._run(_call("add_message", _one(Message), json=body, conversation_id=int(conversation_id)))

    def add_messages(
        self, conversation_id: int, messages: list[dict], profile: str | None = None
    ) -> list[Message]:
        """Post a batch of `{"text", "role"?, "name"?, "occurred_at"?, "external_id"?}`: all or
        nothing."""
        items = []
        for message in messages:
            item = dict(message)
            if "occurred_at" in item:
                item["occurred_at"] = _iso(item["occurred_at"])
            items.append(_drop_none(item))
        body = _drop_none({"messages": items, "profile": profile})
        return self._run(
            _call("add_messages", _many(Message, "messages"), json=body, conversation_id=int(conversation_id))
        )

    def respond(
        self,
        conversation_id: int,
        text: str,
        occurred_at: Datetime = None,
        external_id: str = "",
        profile: str | None = None,
        name: str | None = None,
    ) -> Message:
        """Post the assistant's reply (`profile`: the one its reflection runs under; `name`: the
        assistant's, when there are several)."""
        body = _drop_none(
            {
                "text": text,
                "name": name,
                "occurred_at": _iso(occurred_at),
                "external_id": external_id,
                "profile": profile,
            }
        )
        return self._run(_call("respond", _one(Message), json=body, conversation_id=int(conversation_id)))

    def flush(
        self, subject: str, conversation_id: int | None = None, timeout_ms: int = 10_000
    ) -> FlushResult:
        """Wait, at most `timeout_ms`, until the background work of the subject is done — the
        reflections of its conversations (or of one) and its queued or running jobs such as a
        "consolidate now": `{"done", "pending", "reflections", "jobs", "waited_ms"}`. Not done in
        time is no error."""
        body = _drop_none({"subject": subject, "conversation": conversation_id, "timeout_ms": timeout_ms})
        return self._run(_call("flush", _one(FlushResult), json=body))

    # --- context, modes and tools -------------------------------------------------------------
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
        return self._run(self._context_plan(conversation_id, body))

    def _context_plan(self, conversation_id: int | None, body: dict) -> Generator[Call[Any], Any, Context]:
        data = yield _call("context", dict, json=body)
        texts = self._texts(conversation_id, data)
        if texts is None:
            data = yield _call("context", dict, json={**body, "full": True})
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

    def modes(self) -> list[Mode]:
        """Every known assistant mode (the App's default first), each with its `summary`."""
        return self._run(_call("modes", _many(Mode, "modes")))

    def mode(self, name: str) -> Mode:
        """One assistant mode by name (NotFound when there is none)."""
        return self._run(_call("mode", _one(Mode), name=name))

    def tools(self, format: str = "openai") -> list[dict]:
        """The memory tools as the SDK takes them (`format` "openai" or "anthropic"): pass as `tools=`."""
        return self._run(_call("tools", lambda data: data["tools"], params={"format": format}))

    def tool_call(self, conversation_id: int, call: Any, format: str = "openai") -> ToolCallResult:
        """Run a model's tool call in the conversation; `call` is the SDK's object (OpenAI
        `message.tool_calls[i]`, Anthropic a `tool_use` block) or its dict. The answer's `result`
        is what goes back to the SDK (a `role: tool` message, or a `tool_result` block)."""
        if hasattr(call, "model_dump"):
            call = call.model_dump(exclude_none=True)
        body = {"conversation": int(conversation_id), "format": format, "call": call}
        return self._run(_call("tool_call", _one(ToolCallResult), json=body))

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
    ) -> Fact:
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
        return self._run(_call("profile_set", _one(Fact), json=body, subject=subject))

    def profile(self, subject: str) -> list[Fact]:
        """The subject's active facts."""
        return self._run(_call("profile", _many(Fact, "facts"), subject=subject))

    def profile_history(self, subject: str, key: str) -> list[Fact]:
        """Every version of the fact `key`, oldest first."""
        return self._run(_call("profile_history", _many(Fact, "versions"), subject=subject, key=key))

    def profile_remove(self, subject: str, key: str, mode: str = "", scope: str = "") -> Fact:
        """Close the active version of `key` (its history stays)."""
        params = _qualifiers(mode, scope)
        return self._run(_call("profile_remove", _one(Fact), params=params, subject=subject, key=key))

    def profile_park(
        self, subject: str, key: str, parked: bool = True, mode: str = "", scope: str = ""
    ) -> Fact:
        """Park the active version of `key` (kept, in no context) or, with parked=False, unpark it."""
        params = _qualifiers(mode, scope)
        body = {"parked": parked}
        return self._run(
            _call("profile_park", _one(Fact), json=body, params=params, subject=subject, key=key)
        )

    # --- notes and votes --------------------------------------------------------------------
    def note_store(
        self,
        subject: str,
        content: str,
        tags: list[str] | None = None,
        conversation_id: int | None = None,
        message_id: int | None = None,
        occurred_at: Datetime = None,
        mode: str | None = None,
    ) -> Note:
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
        return self._run(_call("note_store", _one(Note), json=body, subject=subject))

    def notes_recall(
        self,
        subject: str,
        query: str = "",
        k: int | None = None,
        tags: list[str] | None = None,
        scope: str | None = None,
        working_dir: str | None = None,
        archived: bool = False,
    ) -> list[Note]:
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
        return self._run(_call("notes_recall", _many(Note, "notes"), params=params, subject=subject))

    def note(self, subject: str, id: int) -> Note:
        """One note by id (archived ones too), with its versions and sources."""
        return self._run(_call("note", _one(Note), subject=subject, note_id=int(id)))

    def note_edit(
        self,
        subject: str,
        id: int,
        content: str | None = None,
        tags: list[str] | None = None,
        parked: bool | None = None,
    ) -> Note:
        """Write a new version of a note (content, tags), and/or park it (kept, in no context) or
        unpark it (parked=False)."""
        body = _drop_none({"content": content, "tags": tags, "parked": parked})
        return self._run(_call("note_edit", _one(Note), json=body, subject=subject, note_id=int(id)))

    def note_forget(self, subject: str, id: int) -> None:
        """Delete a note and its versions."""
        return self._run(_call("note_forget", _none, subject=subject, note_id=int(id)))

    def vote(self, subject: str, item: str, signal: str, mode: str | None = None) -> VoteResult:
        """Vote on an item of a context (`n:ID` or `f:ID`): up, down, used, useful, irrelevant, …
        `mode`: the assistant mode the signal was given in ("intrusive" lowers the item there)."""
        body = _drop_none({"item": item, "signal": signal, "mode": mode})
        return self._run(_call("vote", _one(VoteResult), json=body, subject=subject))

    # --- lessons, procedures and consequences -----------------------------------------------
    def lessons(self, subject: str, query: str = "", k: int | None = None) -> list[Lesson]:
        """The subject's best `k` lessons for `query` (each with a `score`)."""
        params = _drop_none({"query": query, "k": k})
        return self._run(_call("lessons", _many(Lesson, "lessons"), params=params, subject=subject))

    def lesson(self, subject: str, id: int) -> Lesson:
        return self._run(_call("lesson", _one(Lesson), subject=subject, lesson_id=int(id)))

    def lesson_edit(self, subject: str, id: int, text: str) -> Lesson:
        """Rewrite a lesson's text."""
        body = {"text": text}
        return self._run(_call("lesson_edit", _one(Lesson), json=body, subject=subject, lesson_id=int(id)))

    def lesson_park(self, subject: str, id: int, parked: bool = True) -> Lesson:
        """Park a lesson (kept, in no context, recall or tool) or, with parked=False, unpark it."""
        body = {"parked": parked}
        return self._run(_call("lesson_park", _one(Lesson), json=body, subject=subject, lesson_id=int(id)))

    def lesson_delete(self, subject: str, id: int) -> None:
        return self._run(_call("lesson_delete", _none, subject=subject, lesson_id=int(id)))

    def procedures(self, subject: str, query: str = "", k: int | None = None) -> list[Procedure]:
        """The subject's best `k` procedures for `query` (each with a `score`)."""
        params = _drop_none({"query": query, "k": k})
        return self._run(_call("procedures", _many(Procedure, "procedures"), params=params, subject=subject))

    def procedure(self, subject: str, id: int) -> Procedure:
        return self._run(_call("procedure", _one(Procedure), subject=subject, procedure_id=int(id)))

    def procedure_edit(self, subject: str, id: int, **fields: Any) -> Procedure:
        """Change a procedure: the fields of PATCH …/procedures/{id} (docs/api.md)."""
        return self._run(
            _call("procedure_edit", _one(Procedure), json=fields, subject=subject, procedure_id=int(id))
        )

    def procedure_park(self, subject: str, id: int, parked: bool = True) -> Procedure:
        """Park a procedure (kept, in no context, recall or tool) or, with parked=False, unpark it."""
        body = {"parked": parked}
        return self._run(
            _call("procedure_park", _one(Procedure), json=body, subject=subject, procedure_id=int(id))
        )

    def procedure_delete(self, subject: str, id: int) -> None:
        return self._run(_call("procedure_delete", _none, subject=subject, procedure_id=int(id)))

    def consequences(self, subject: str, **params: Any) -> list[Result]:
        """The subject's consequence chains (query parameters as GET …/consequences takes them)."""
        return self._run(
            _call("consequences", _many(Result, "consequences"), params=_drop_none(params), subject=subject)
        )

    def consequence(self, subject: str, id: int) -> Result:
        return self._run(_call("consequence", _one(Result), subject=subject, consequence_id=int(id)))

    def consequence_edit(self, subject: str, id: int, **fields: Any) -> Result:
        return self._run(
            _call("consequence_edit", _one(Result), json=fields, subject=subject, consequence_id=int(id))
        )

    def consequence_delete(self, subject: str, id: int) -> None:
        return self._run(_call("consequence_delete", _none, subject=subject, consequence_id=int(id)))

    # --- beliefs and evidence ---------------------------------------------------------------
    def beliefs(self, subject: str, **params: Any) -> list[Belief]:
        """The subject's facts and notes as beliefs, with their evidence (docs/layers.md)."""
        return self._run(
            _call("beliefs", _many(Belief, "beliefs"), params=_drop_none(params), subject=subject)
        )

    def belief(self, subject: str, belief_id: str) -> Belief:
        """One belief (`f:ID` or `n:ID`) with its versions, evidence and revisions."""
        return self._run(_call("belief", _one(Belief), subject=subject, belief_id=belief_id))

    def belief_revise(self, subject: str, belief_id: str, **fields: Any) -> Result:
        """Revise a belief (the body of POST …/beliefs/{id}/revise): the revision and the beliefs it left."""
        return self._run(
            _call("belief_revise", _one(Result), json=fields, subject=subject, belief_id=belief_id)
        )

    def revisions(self, subject: str, **params: Any) -> list[Result]:
        return self._run(
            _call("revisions", _many(Result, "revisions"), params=_drop_none(params), subject=subject)
        )

    def evidence(self, id: int) -> Result:
        return self._run(_call("evidence", _one(Result), evidence_id=int(id)))

    def evidence_delete(self, id: int) -> None:
        return self._run(_call("evidence_delete", _none, evidence_id=int(id)))

    # --- contracts --------------------------------------------------------------------------
    def contracts(self, subject: str) -> list[Result]:
        """The subject's interaction contracts, one per mode that has one."""
        return self._run(_call("contracts", _many(Result, "contracts"), subject=subject))

    def contract_edit(self, subject: str, **fields: Any) -> Result:
        return self._run(_call("contract_edit", _one(Result), json=fields, subject=subject))

    def contract_reset(self, subject: str) -> None:
        return self._run(_call("contract_reset", _none, subject=subject))

    def contract(self, subject: str, mode: str) -> Result:
        """The contract of one mode (the defaults when none was learned)."""
        return self._run(_call("contract", _one(Result), subject=subject, mode=mode))

    def contract_mode_edit(self, subject: str, mode: str, **fields: Any) -> Result:
        return self._run(_call("contract_mode_edit", _one(Result), json=fields, subject=subject, mode=mode))

    def contract_mode_reset(self, subject: str, mode: str, **params: Any) -> None:
        return self._run(
            _call("contract_mode_reset", _none, params=_drop_none(params), subject=subject, mode=mode)
        )

    # --- memory:// documents and the memory operations --------------------------------------
    def memory_read(self, subject: str, uri: str, **params: Any) -> Result:
        """One memory:// document (GET …/memory?uri=…)."""
        params = _drop_none({"uri": uri, **params})
        return self._run(_call("memory_read", _one(Result), params=params, subject=subject))

    def memory_documents(self, subject: str, **params: Any) -> list[Result]:
        return self._run(
            _call("memory_documents", _many(Result, "documents"), params=_drop_none(params), subject=subject)
        )

    def memory_history(self, subject: str, **params: Any) -> Result:
        return self._run(_call("memory_history", _one(Result), params=_drop_none(params), subject=subject))

    def memory_view(self, subject: str, **fields: Any) -> Result:
        """What the memory would show for a message (POST …/memory/view)."""
        return self._run(_call("memory_view", _one(Result), json=fields, subject=subject))

    def memory_stats(self, subject: str) -> Result:
        return self._run(_call("memory_stats", _one(Result), subject=subject))

    def memory_diagnose(self, subject: str) -> Result:
        return self._run(_call("memory_diagnose", _one(Result), subject=subject))

    def memory_clear(self, subject: str, **fields: Any) -> Result:
        return self._run(_call("memory_clear", _one(Result), json=fields, subject=subject))

    def memory_reset(self, subject: str, **fields: Any) -> Result:
        return self._run(_call("memory_reset", _one(Result), json=fields, subject=subject))

    def memory_enqueue(self, subject: str, **fields: Any) -> Result:
        return self._run(_call("memory_enqueue", _one(Result), json=fields, subject=subject))

    def memory_rebuild(self, subject: str, **fields: Any) -> Result:
        return self._run(_call("memory_rebuild", _one(Result), json=fields, subject=subject))

    def memory_reload(self, subject: str, **fields: Any) -> Result:
        return self._run(_call("memory_reload", _one(Result), json=fields, subject=subject))

    def mental_models(self, subject: str) -> list[MentalModel]:
        return self._run(_call("mental_models", _many(MentalModel, "mental_models"), subject=subject))

    def mental_model_create(
        self, subject: str, name: str, description: str, auto_refresh: bool = True
    ) -> MentalModel:
        """A mental model `name` (lowercase letters, digits, '-'), written at once from what is known."""
        body = {"name": name, "description": description, "auto_refresh": auto_refresh}
        return self._run(_call("mental_model_create", _one(MentalModel), json=body, subject=subject))

    def mental_models_seed(self, subject: str) -> list[MentalModel]:
        return self._run(_call("mental_models_seed", _many(MentalModel, "mental_models"), subject=subject))

    def mental_models_refresh(self, subject: str) -> Result:
        return self._run(_call("mental_models_refresh", _one(Result), subject=subject))

    def mental_model(self, subject: str, name: str) -> MentalModel:
        return self._run(_call("mental_model", _one(MentalModel), subject=subject, name=name))

    def mental_model_delete(self, subject: str, name: str) -> None:
        return self._run(_call("mental_model_delete", _none, subject=subject, name=name))

    def mental_model_refresh(self, subject: str, name: str) -> Result:
        return self._run(_call("mental_model_refresh", _one(Result), subject=subject, name=name))

    def mental_model_history(self, subject: str, name: str) -> Result:
        return self._run(_call("mental_model_history", _one(Result), subject=subject, name=name))

    def consolidate(self, subject: str, **fields: Any) -> Result:
        """Queue a "consolidate now" job: `{"job_run", "status"}` (`flush` waits for it)."""
        return self._run(_call("consolidate", _one(Result), json=fields, subject=subject))

    # --- consent ----------------------------------------------------------------------------
    def consent_categories(self) -> list[Result]:
        """The sensitive categories (`slug`, `name`, `description`, `default_policy`)."""
        return self._run(_call("consent_categories", _many(Result, "categories")))

    def consent(self, subject: str) -> list[ConsentPolicy]:
        """The subject's effective policy per category (`category`, `policy`, `is_default`, …)."""
        return self._run(_call("consent", _many(ConsentPolicy, "policies"), subject=subject))

    def consent_set(self, subject: str, category: str, policy: str) -> list[ConsentPolicy]:
        """Set `allow`, `ask` or `deny` for one category; returns every policy of the subject."""
        body = {"category": category, "policy": policy}
        return self._run(_call("consent_set", _many(ConsentPolicy, "policies"), json=body, subject=subject))

    def pending(self, subject: str, status: str = "pending") -> list[PendingItem]:
        """Memories waiting for consent (or decided ones: `approved`, `rejected`, `expired`), newest first."""
        params = {"status": status}
        return self._run(_call("pending", _many(PendingItem, "pending"), params=params, subject=subject))

    def pending_approve(self, subject: str, id: int) -> PendingDecision:
        """Store a pending memory; the answer's `result_id` is the new fact or note."""
        return self._run(_call("pending_approve", _one(PendingDecision), subject=subject, pending_id=int(id)))

    def pending_reject(self, subject: str, id: int) -> PendingDecision:
        """Drop a pending memory; the same content is not asked about again."""
        return self._run(_call("pending_reject", _one(PendingDecision), subject=subject, pending_id=int(id)))

    # --- the subject as a whole -------------------------------------------------------------
    def export(self, subject: str) -> Result:
        """Everything held about the subject: facts with history, notes with versions,
        conversations with messages, consent policies and pending memories."""
        return self._run(_call("export", _one(Result), subject=subject))

    def subject_delete(self, subject: str) -> None:
        """Delete the subject and everything held about it. Cannot be undone."""
        return self._run(_call("subject_delete", _none, subject=subject))

    def subject_import(self, subject: str, document: dict) -> Result:
        """Load an `export()` document into the subject (POST /subjects/{subject}/import): the counts."""
        return self._run(_call("subject_import", _one(Result), json=document, subject=subject))


def _client_args(base_url: str, api_key: str, timeout: float) -> dict:
    base = base_url.rstrip("/")
    if not base.endswith(API_PREFIX):
        base += API_PREFIX
    return {
        "base_url": base,
        "headers": {"Authorization": f"Bearer {api_key}", "User-Agent": "memoryweb-client/1"},
        "timeout": timeout,
    }


def _answer(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        raise MemoryWebError.from_response(response)
    if response.status_code == 204 or not response.content:
        return None
    return response.json()


def _unreachable(exc: httpx.HTTPError) -> MemoryWebError:
    return MemoryWebError(0, "unreachable", f"{type(exc).__name__}: {exc}")


def _steps(plan: Plan[T]) -> Generator[Call[Any], Any, T]:
    if isinstance(plan, Call):
        return (yield plan)
    return (yield from plan)


class _Sync:
    """Carries plans out with blocking calls over `httpx.Client`."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ):
        super().__init__()
        self._http = httpx.Client(**_client_args(base_url, api_key, timeout), transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _send(self, call: Call[T]) -> T:
        try:
            response = self._http.request(call.method, call.path, json=call.json, params=call.params)
        except httpx.HTTPError as exc:
            raise _unreachable(exc) from exc
        return call.parse(_answer(response))

    def _run(self, plan: Plan[T]) -> T:
        steps = _steps(plan)
        try:
            call = next(steps)
            while True:
                call = steps.send(self._send(call))
        except StopIteration as done:
            return done.value


class _Async:
    """Carries plans out with awaited calls over `httpx.AsyncClient`: `_run` returns the coroutine."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        super().__init__()
        self._http = httpx.AsyncClient(**_client_args(base_url, api_key, timeout), transport=transport)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()

    async def _send(self, call: Call[T]) -> T:
        try:
            response = await self._http.request(call.method, call.path, json=call.json, params=call.params)
        except httpx.HTTPError as exc:
            raise _unreachable(exc) from exc
        return call.parse(_answer(response))

    async def _arun(self, plan: Plan[T]) -> T:
        steps = _steps(plan)
        try:
            call = next(steps)
            while True:
                call = steps.send(await self._send(call))
        except StopIteration as done:
            return done.value

    def _run(self, plan: Plan[T]) -> T:
        return self._arun(plan)  # type: ignore[return-value]  # the coroutine; see AsyncMemoryWeb


class MemoryWeb(_Sync, _Api):
    """The sidecar for a chat app, over `httpx.Client`. Thread-safe; use one instance per process.
    `MemoryWeb(base_url, api_key, timeout=10.0, transport=None)`."""


class AsyncMemoryWeb(_Async, _Api):
    """The same client over `httpx.AsyncClient`: every method is a coroutine (`await
    memory.context(...)`). Under a type checker the methods read as the sync ones (one
    definition serves both); at run time each returns an awaitable of that result."""


class _AdminApi:
    """The operators' routes under /api/v1/admin/ (an admin key, `manage.py admin_key create`);
    bodies and query fields as docs/admin-api.md names them, as keyword arguments."""

    def _run(self, plan: Plan[T]) -> T:
        raise NotImplementedError

    def retrieval(self, event_id: int) -> Result:
        """One retrieval event with what it selected and why."""
        return self._run(_call("admin_retrieval", _one(Result), event_id=int(event_id)))

    def replay(self, **fields: Any) -> Result:
        return self._run(_call("admin_replay", _one(Result), json=fields))

    def reindex(self, **fields: Any) -> Result:
        return self._run(_call("admin_reindex", _one(Result), json=fields))

    def metrics(self, **params: Any) -> Result:
        return self._run(_call("admin_metrics", _one(Result), params=_drop_none(params)))

    def metrics_compute(self, **fields: Any) -> Result:
        """Compute and store a metrics snapshot now (`app`, `window_hours`)."""
        return self._run(_call("admin_metrics_compute", _one(Result), json=fields))

    def metrics_history(self, **params: Any) -> Result:
        return self._run(_call("admin_metrics_history", _one(Result), params=_drop_none(params)))

    def rebuild(self, **fields: Any) -> Result:
        return self._run(_call("admin_rebuild", _one(Result), json=fields))

    def conversation_export(self, conversation_id: int) -> Result:
        return self._run(
            _call("admin_conversation_export", _one(Result), conversation_id=int(conversation_id))
        )

    def lifecycle(self, **fields: Any) -> Result:
        return self._run(_call("admin_lifecycle", _one(Result), json=fields))


class MemoryWebAdmin(_Sync, _AdminApi):
    """The operators' client (an admin key), over `httpx.Client`."""


class AsyncMemoryWebAdmin(_Async, _AdminApi):
    """The operators' client over `httpx.AsyncClient`: every method is a coroutine."""


class _WSGIAsyncTransport(httpx.AsyncBaseTransport):
    """The "local" transport of `AsyncMemoryWeb`: each request goes through Django's WSGI stack,
    in this process, against the configured database."""

    def __init__(self, app: Any):
        self._wsgi = httpx.WSGITransport(app=app)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        from asgiref.sync import sync_to_async  # Django's own dependency

        await request.aread()
        # Django's ORM refuses to run on an event loop's thread: the request runs in Django's
        # one thread for sync code (the caller's, under async_to_sync), as its ASGI handler does
        response = await sync_to_async(self._wsgi.handle_request, thread_sensitive=True)(request)
        content = b"".join(response.stream)  # type: ignore[arg-type]  # the raw body, undecoded
        return httpx.Response(response.status_code, headers=response.headers, content=content)


def _settings(transport: str, base_url: str | None, api_key: str | None) -> tuple[str, str | None, str]:
    base_url = base_url or os.environ.get("MEMORYWEB_BASE_URL")
    api_key = api_key or os.environ.get("MEMORYWEB_API_KEY")
    if transport == "auto":
        transport = "http" if base_url else "local"
    if transport not in ("http", "local"):
        raise ValueError(f"transport must be 'auto', 'local' or 'http', not {transport!r}")
    if not api_key:
        raise MemoryWebError(0, "no_api_key", "pass api_key or set MEMORYWEB_API_KEY", "api_key")
    if transport == "http" and not base_url:
        raise MemoryWebError(0, "no_base_url", "pass base_url or set MEMORYWEB_BASE_URL", "base_url")
    return transport, base_url, api_key


def _wsgi_app() -> Any:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
    import django
    from django.core.wsgi import get_wsgi_application

    django.setup()
    return get_wsgi_application()


def connect(
    transport: str = "auto", base_url: str | None = None, api_key: str | None = None, *, timeout: float = 10.0
) -> MemoryWeb:
    """A client over `transport`: "http" (to `base_url` or MEMORYWEB_BASE_URL), "local" (in this
    process, through Django's own WSGI stack against the configured database; DJANGO_SETTINGS_MODULE
    defaults to memoryweb.settings), or "auto" (http when MEMORYWEB_BASE_URL is set, else local).
    The key is `api_key` or MEMORYWEB_API_KEY (mint one with `manage.py createapp`)."""
    transport, base_url, key = _settings(transport, base_url, api_key)
    if transport == "http":
        return MemoryWeb(base_url or "", key, timeout=timeout)
    return MemoryWeb("http://localhost", key, timeout=timeout, transport=httpx.WSGITransport(app=_wsgi_app()))


def connect_async(
    transport: str = "auto", base_url: str | None = None, api_key: str | None = None, *, timeout: float = 10.0
) -> AsyncMemoryWeb:
    """`connect` for asyncio: an `AsyncMemoryWeb` over the same transports ("local" runs each
    request through Django's WSGI stack in Django's thread for sync code)."""
    transport, base_url, key = _settings(transport, base_url, api_key)
    if transport == "http":
        return AsyncMemoryWeb(base_url or "", key, timeout=timeout)
    return AsyncMemoryWeb(
        "http://localhost", key, timeout=timeout, transport=_WSGIAsyncTransport(_wsgi_app())
    )
