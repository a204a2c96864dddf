"""Context windows of well-known chat models: how many tokens a model takes in at once.

The table is data (`context_windows.json`, next to this file): each model with the window its
maker documents and the name prefixes that mean it. A configured model name is matched word by
word, case and separators ignored, after its last slash and with words split where letters
meet digits, the longest prefix winning: `claude-3-5-sonnet-20241022`, `anthropic/claude-3.5-
sonnet` and `meta-llama/Llama-3.1-8B-Instruct` (→ `llama-3.1`) are found; `gpt-4-1106-preview`
is not taken for `gpt-4.1`. `memory.llm.chatContextWindow` gives the window of a model the
table does not know, or one a local server runs with another size.
"""

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from memoryweb.llm.spec import Settings, component_spec

TABLE = Path(__file__).with_name("context_windows.json")
CONFIGURED = "configured"  # the key of the window `llm.chatContextWindow` sets


@dataclass(frozen=True)
class ContextWindow:
    key: str  # "claude-sonnet-4", or CONFIGURED
    label: str  # "Claude Sonnet 4"
    maker: str
    tokens: int


def _words(name: str) -> tuple[str, ...]:
    """`Llama-3.1-8B` → ("llama", "3", "1", "8", "b"): the words a name is matched by."""
    last = name.strip().lower().rsplit("/", 1)[-1]
    return tuple(re.findall(r"[a-z]+|[0-9]+", last))


@cache
def _table() -> tuple[tuple[ContextWindow, tuple[tuple[str, ...], ...]], ...]:
    rows = json.loads(TABLE.read_text(encoding="utf-8"))["models"]
    return tuple(
        (
            ContextWindow(key=row["key"], label=row["label"], maker=row["maker"], tokens=int(row["tokens"])),
            tuple(_words(name) for name in row["names"]),
        )
        for row in rows
    )


def context_windows() -> list[ContextWindow]:
    """Every model of the table, in its order (maker by maker)."""
    return [window for window, _ in _table()]


def window_for_model(model: str) -> ContextWindow | None:
    """The table's entry for a model name ("gpt-4o-mini-2024-07-18"), or None."""
    words = _words(model)
    best, best_length = None, 0
    for window, prefixes in _table():
        for prefix in prefixes:
            if len(prefix) > best_length and words[: len(prefix)] == prefix:
                best, best_length = window, len(prefix)
    return best


def chat_window(config: Settings) -> ContextWindow | None:
    """The context window of the configured chat model (`llm.chat`): `llm.chatContextWindow`
    when it is set, else the table's entry for the model; None when neither says."""
    spec = component_spec("chat", config)
    tokens = config["llm.chatContextWindow"]
    if tokens:
        name = spec.model if not spec.is_none else "the chat model"
        return ContextWindow(
            key=CONFIGURED, label=name, maker="set in memory.llm.chatContextWindow", tokens=tokens
        )
    return None if spec.is_none else window_for_model(spec.model)
