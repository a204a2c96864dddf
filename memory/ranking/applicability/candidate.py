"""A ranked item as the applicability judge sees it, and the policy that keeps items out
before any scoring (memory/ranking/applicability/__init__.py)."""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory.models import Lesson, Procedure, ProfileFact
from memory.modes import Mode


@dataclass
class Candidate:
    """One ranked item as the judge sees it. `section` is the list it competes in: "profile",
    "notes" (recalled and memory-index), "lessons" or "procedures"."""

    kind: str  # fact | note | evidence | lesson | procedure
    obj: Any
    section: str
    retrieval: float
    rank: int
    reason: str
    pinned: bool = False
    scores: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.kind[0]}:{self.obj.pk}"

    @property
    def text(self) -> str:
        return item_text(self.obj)

    @property
    def applicability(self) -> float:
        return self.scores.get("applicability", 0.0)

    @property
    def final(self) -> float:
        return self.scores.get("final", 0.0)


def item_text(obj) -> str:
    if isinstance(obj, ProfileFact):
        return f"{obj.key}: {obj.value}"
    if isinstance(obj, Procedure):
        return " ".join([obj.title, *obj.steps])
    if isinstance(obj, Lesson):
        return obj.text
    return obj.content


def policy_allows(
    obj, *, mode: Mode, conversation_scope: str | None, denied: frozenset[str] = frozenset()
) -> bool:
    """Whether `obj` may render in `mode` at all (module docstring, *Policy*). With
    `conversation_scope` None (no conversation) no scope is out of reach. `denied`: the consent
    categories the person denies now — an item stored while its category was allowed stops
    rendering once the person denies it (it stays stored, to be forgotten or allowed again)."""
    item_mode = getattr(obj, "mode", "")
    if item_mode and item_mode != mode.name:
        return False
    category = getattr(obj, "category", "")
    if category in denied or not mode.category_allowed(category):
        return False
    if conversation_scope is None:
        return True
    return mode.scope_allowed(getattr(obj, "scope", ""), conversation_scope)


def note_scopes(mode: Mode, conversation) -> list[str] | None:
    """The note scopes a build's search reaches (None: every scope; the policy filter then
    drops what the mode keeps out)."""
    if conversation is None or "other" in mode.scopes:
        return None
    scopes = set()
    if "unscoped" in mode.scopes:
        scopes.add("")
    if "same" in mode.scopes:
        scopes.add(conversation.scope)
    return sorted(scopes)


def candidates_of(section: str, kind_of, ranked: list[tuple]) -> list[Candidate]:
    """(item, score, reason) of one ranker → Candidates with the list-normalised retrieval."""
    top = max((score for _, score, _ in ranked), default=0.0)
    out = []
    for rank, (obj, score, reason) in enumerate(ranked):
        pinned = isinstance(obj, ProfileFact) and reason == "pinned"
        retrieval = score / top if top > 0 else 0.0
        out.append(Candidate(kind_of(obj), obj, section, max(retrieval, 0.0), rank, reason, pinned=pinned))
    return out


def when(obj) -> datetime:
    """The time an item speaks of: a fact's valid_from, else its occurred_at or created_at."""
    if isinstance(obj, ProfileFact):
        return obj.valid_from
    return getattr(obj, "occurred_at", None) or obj.created_at
