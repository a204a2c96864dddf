"""Which lessons and procedures a message gets: full-text relevance (÷ the best hit's) weighted
by `scoring.relevance`, plus votes (÷ `voting.maxVotePerItem`) weighted by `scoring.votes`, as
for notes."""

from typing import Any

from memory.config import MemoryConfig
from memory.models import Lesson, Procedure
from memory.search.lexical import lesson_search, procedure_search

SOURCES: dict[str, tuple[Any, Any]] = {
    "lessons": (Lesson, lesson_search),
    "procedures": (Procedure, procedure_search),
}


def rank_distilled(*, name: str, subject_id: int, terms: list[str], config: MemoryConfig) -> list[tuple]:
    """The best `<name>.k` lessons or procedures (`name` is "lessons" or "procedures") for a
    message of `terms`, best first, as (item, score); parked ones never."""
    model, search = SOURCES[name]
    k = config[f"{name}.k"]
    hits = search(subject_id, terms, limit=max(k * 3, 6))
    found = model._default_manager.filter(parked_at=None).in_bulk([h.id for h in hits])  # never parked
    top = max((h.score for h in hits), default=1.0)
    max_vote = config["voting.maxVotePerItem"] or 1.0
    scored = []
    for hit in hits:
        obj = found.get(hit.id)
        votes = obj.vote_score / max_vote if obj is not None else 0.0
        scored.append((obj, config["scoring.relevance"] * hit.score / top + config["scoring.votes"] * votes))
    scored.sort(key=lambda pair: -pair[1])
    return [(obj, score) for obj, score in scored[:k] if obj is not None]
