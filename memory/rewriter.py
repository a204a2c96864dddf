"""Query rewriting for the hot read (`retrieve.rewriter.*`).

With `gateMode` heuristic (the default) the gate sends only short or referential messages
("what did we decide about that?") to expansion, and a long, specific question is searched as
typed; `always` expands every message, `never` none (as `enabled` false does). Expansion adds the content words
of the conversation's last `historyTurns` messages. With `llm.rewriter` configured the model
rewrites the query instead, bounded by `timeoutMs`; when it is slow or unusable the original
message is searched (and the fallback counted).
"""

import contextvars
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from memory.config import MemoryConfig
from memory.text import query_terms
from memoryweb.counters import counter_add
from memoryweb.llm import client_for, prompt_schema
from memoryweb.profiles import remote_calls_allowed

REFERENTIAL = re.compile(
    r"\b(that|this|it|those|these|them|they|there|then|he|she|him|her|the same|what about|how about|"
    r"and the|what else|which one|the other)\b",
    re.IGNORECASE,
)
logger = logging.getLogger(__name__)
MAX_EXTRA_TERMS = 8
_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="rewriter")


def needs_rewrite(message: str, config: MemoryConfig) -> bool:
    gate = config["retrieve.rewriter.gateMode"]
    if gate != "heuristic":
        return gate == "always"
    terms = query_terms(message)
    limit = config["retrieve.rewriter.maxWords"]
    return len(terms) <= limit or (bool(REFERENTIAL.search(message)) and len(terms) <= 2 * limit)


def _history(conversation, message: str, turns: int) -> list[str]:
    texts = list(
        conversation.messages.order_by("-occurred_at", "-id").values_list("text", flat=True)[: turns + 1]
    )
    if texts and texts[0].strip() == message.strip():
        texts = texts[1:]  # the chat app posted this very message before asking for context
    return texts[:turns]


def _llm_rewrite(message: str, history: list[str], config: MemoryConfig) -> str | None:

    client = client_for("rewriter", config)
    if client is None:
        return None
    result = client.complete_json(
        component="rewriter",
        prompt="rewriter",
        variables={"history": "\n".join(f"- {h}" for h in reversed(history)), "message": message},
        schema=prompt_schema("rewriter"),
    )
    query = (result or {}).get("query")
    return query.strip() if isinstance(query, str) and query.strip() else None


def rewrite_query(*, message: str, conversation, config: MemoryConfig) -> tuple[str, str]:
    """Return (query to search, how: "none" | "heuristic" | "llm" | "llm-fallback")."""
    if not config["retrieve.rewriter.enabled"] or conversation is None or not needs_rewrite(message, config):
        return message, "none"
    history = _history(conversation, message, config["retrieve.rewriter.historyTurns"])
    if not history:
        return message, "none"
    if config["llm.rewriter"] != "none" and remote_calls_allowed():
        # the worker thread runs in a copy of this context: it sees the operational profile
        future = _pool.submit(contextvars.copy_context().run, _llm_rewrite, message, history, config)
        try:
            rewritten = future.result(timeout=config["retrieve.rewriter.timeoutMs"] / 1000)
        except FutureTimeout:
            rewritten = None
            counter_add("llm.fallback.rewriter.timeout")
        except Exception:  # the hot read never fails because of the rewriter
            logger.exception("query rewriter failed; searching the message as typed")
            rewritten = None
            counter_add("llm.fallback.rewriter.error")
        return (rewritten, "llm") if rewritten else (message, "llm-fallback")
    own = set(query_terms(message))
    extra: list[str] = []
    for text in history:  # most recent first
        for term in query_terms(text):
            if term not in own and term not in extra:
                extra.append(term)
    extra = extra[:MAX_EXTRA_TERMS]
    if not extra:
        return message, "none"
    return f"{message} {' '.join(extra)}", "heuristic"
