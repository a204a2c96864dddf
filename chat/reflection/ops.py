"""What reflection proposes to write: profile-fact sets, notes and retractions. Plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

# Keys whose value is a comma-separated list; the writer should union with the active value
# instead of replacing it ("I also speak French" must not forget English).
LIST_KEYS = frozenset(
    {
        "allergies",
        "children",
        "health_conditions",
        "languages",
        "languages.learning",
        "medications",
        "pets",
        "programming_languages",
        "tools",
    }
)


@dataclass
class FactOp:
    key: str
    value: str
    pinned: bool = False
    keywords: list[str] = field(default_factory=list)
    confidence: float = 0.9
    category: str = ""


@dataclass
class NoteOp:
    content: str
    tags: list[str] = field(default_factory=list)
    occurred_at: datetime | None = None
    category: str = ""

    @property
    def kind(self) -> str:
        return self.tags[0] if self.tags else ""


@dataclass
class FactRetraction:
    """The message says a fact is no longer true ("I don't live in Paris anymore")."""

    key: str
    value: str


@dataclass
class Extraction:
    facts: list[FactOp] = field(default_factory=list)
    notes: list[NoteOp] = field(default_factory=list)
    retractions: list[FactRetraction] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.facts or self.notes or self.retractions)


@dataclass
class Operation:
    """One operation a reflection run applies (chat.reflect), from the heuristic extractor or a
    model; `message` is the turn it came from (a memory.Message, or in extraction_eval a
    labelled turn: anything with `text`, `role` and `occurred_at`); the caps count per message
    and chunk."""

    op: str  # SET | NOTE | EVOLVE | RETRACT
    message: Any
    key: str = ""
    value: str = ""
    pinned: bool = True
    keywords: list[str] = field(default_factory=list)
    confidence: float = 1.0
    content: str = ""
    tags: list[str] = field(default_factory=list)
    occurred_at: datetime | None = None
    category: str = ""
    note_id: int | None = None
    add_tags: list[str] = field(default_factory=list)
    remove_tags: list[str] = field(default_factory=list)
    chunk: int = 0  # which chunk of a long message it came from (chat.reflection.chunking)
