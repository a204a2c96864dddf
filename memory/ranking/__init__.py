"""Every scoring rule of the context builder: which notes, facts, lessons and procedures are
worth placing for one message, best first, each with its score and the reason for it. The
builder (memory/context.py) only lays them out in sections under their caps.

- notes and evidence units, the turns themselves (`rank_notes`): full-text and vector
  candidates, fused, plus the signals of `memory.ranking.notes`;
- facts (`rank_facts`): pinned facts, then contextual facts whose keywords the message hits;
- lessons and procedures (`rank_distilled`): full-text relevance and votes.

Reads only.
"""

from memory.ranking.distilled import rank_distilled
from memory.ranking.facts import rank_facts
from memory.ranking.notes import (
    asks_when,
    matched_reason,
    mentions_date,
    message_dates,
    rank_notes,
    weighted_rrf,
)

__all__ = [
    "asks_when",
    "matched_reason",
    "mentions_date",
    "message_dates",
    "rank_distilled",
    "rank_facts",
    "rank_notes",
    "weighted_rrf",
]
