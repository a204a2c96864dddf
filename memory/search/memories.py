"""One search across a subject's memories — facts, notes, lessons and procedures — for the
dashboard's search page (memory/dashboard/views/search.py). Reads only; counts no recall.

Nothing here ranks on its own: every kind is searched by its full-text search of
memory.search.lexical (FTS5 on SQLite, tsvector on PostgreSQL), with the word still being
typed matched as a prefix (`typed_terms`: "postg" finds PostgreSQL); with embeddings on, the
notes also come by meaning, from the context builder's own vector search
(memory.ranking.notes). The lists are fused as the context builder fuses its full-text and
vector lists: weighted reciprocal rank (`retrieve.fusion`), every list of a kind weighing
`lexicalWeight` and the by-meaning list `vectorWeight`, so a hit's relevance is its fused sum
÷ the best hit's: the best is 1.00 and every hit is above 0. Only notes have vectors
(memory_embedding), so facts, lessons and procedures come by their words alone.

A by-meaning hit is kept only at a cosine of MEANING_MIN_SIMILARITY or more: the context
builder takes its nearest notes whatever their distance (its caps keep the few best), but a
search page listing every note "by meaning" for any word would find nothing in particular.
"""

from dataclasses import dataclass, field
from typing import Any

from memory.config import MemoryConfig
from memory.embeddings import embedding_spec
from memory.models import Lesson, Note, Procedure, ProfileFact, Subject
from memory.ranking.notes import vector_hits, weighted_rrf
from memory.search.lexical import (
    NoteFilter,
    fact_search,
    lesson_search,
    note_search,
    procedure_search,
    typed_terms,
)
from memoryweb.errors import ConfigError

# the kinds, in the order hits of equal relevance are listed
KINDS = ("fact", "note", "lesson", "procedure")
# how many hits each list gives the fusion, and how many the page shows
PER_LIST = 50
LIMIT = 50
# all-MiniLM-L6-v2 (the local model): "dinner" → a note about supper 0.53, "what did we eat"
# → 0.50, "restaurant" → 0.37, while unrelated notes sat at or under 0.2 for every query
# tried ("postg", "xyzzy", "jogging" → a note about running 0.19)
MEANING_MIN_SIMILARITY = 0.3

WORDS, MEANING = "words", "meaning"


@dataclass
class SearchHit:
    kind: str  # one of KINDS
    item: ProfileFact | Note | Lesson | Procedure
    relevance: float  # fused sum ÷ the best hit's: (0, 1], the best is 1
    ways: list[str] = field(default_factory=list)  # WORDS, MEANING: which lists found it

    @property
    def ref(self) -> str:
        """The item's id as the context and the API name it ("n:12", "f:3", "l:4", "p:5")."""
        return f"{self.kind[0]}:{self.item.pk}"


@dataclass
class SearchResults:
    query: str
    terms: list[str]  # typed_terms of the query (a prefix term ends in lexical.PREFIX)
    hits: list[SearchHit]
    # "on": notes were searched by meaning too; "off": embeddings are off for the subject's
    # app; "unavailable": on, but the provider gave no vector (failing, resting, or the
    # operational profile forbids the call), so this search was by words alone
    meaning: str


def meaning_state(config: MemoryConfig) -> str:
    """Whether the subject's app has embeddings on ("on") or off ("off")."""
    try:
        return "off" if embedding_spec(config).is_none else "on"
    except ConfigError:
        return "unavailable"


def memory_search(
    *, subject: Subject, query: str, config: MemoryConfig, include_parked: bool = False, limit: int = LIMIT
) -> SearchResults:
    """The subject's facts, notes, lessons and procedures for `query`, best first (module
    docstring). Parked items (of any kind) only with `include_parked`; archived notes and
    removed facts (their closed versions) never."""
    terms = typed_terms(query)
    meaning = meaning_state(config)
    filters = NoteFilter(include_parked=include_parked)
    fusion = config["retrieve.fusion"]
    lexical_weight, vector_weight = fusion["lexicalWeight"], fusion["vectorWeight"]
    lists: list[tuple[list, float]] = []
    words: set[tuple[str, int]] = set()
    if terms:
        found = {
            "fact": fact_search(subject.pk, terms, limit=PER_LIST, include_parked=include_parked),
            "note": note_search(subject.pk, terms, limit=PER_LIST, filters=filters),
            "lesson": lesson_search(subject.pk, terms, limit=PER_LIST, include_parked=include_parked),
            "procedure": procedure_search(subject.pk, terms, limit=PER_LIST, include_parked=include_parked),
        }
        for kind, kind_hits in found.items():
            keys = [(kind, h.id) for h in kind_hits]
            lists.append((keys, lexical_weight))
            words.update(keys)
    by_meaning: set[tuple[str, int]] = set()
    if meaning == "on" and query.strip():
        vector = vector_hits(
            subject.pk, query, limit=PER_LIST, filters=filters, config=config, evidence=False
        )
        if vector is None:
            meaning = "unavailable"
        else:
            keys = [("note", h.id) for h in vector[0] if h.score >= MEANING_MIN_SIMILARITY]
            lists.append((keys, vector_weight))
            by_meaning.update(keys)
    relevance = weighted_rrf(lists, fusion["rrfK"])
    order = sorted(relevance, key=lambda key: (-relevance[key], KINDS.index(key[0]), -key[1]))[:limit]
    items = _items(order, include_parked=include_parked)
    hits = [
        SearchHit(
            kind=key[0],
            item=items[key],
            relevance=relevance[key],
            ways=[way for way, keys in ((WORDS, words), (MEANING, by_meaning)) if key in keys],
        )
        for key in order
        if key in items
    ]
    return SearchResults(query=query, terms=terms, hits=hits, meaning=meaning)


def _items(keys: list[tuple[str, int]], *, include_parked: bool) -> dict[tuple[str, int], Any]:
    """{(kind, id): item} for the keys whose item still exists (and still qualifies: a note
    archived or a fact closed since the search ran is left out)."""
    querysets: dict[str, Any] = {
        "fact": ProfileFact.objects.filter(valid_to=None),
        "note": Note.objects.filter(archived_at=None),
        "lesson": Lesson.objects.all(),
        "procedure": Procedure.objects.all(),
    }
    if not include_parked:
        querysets = {kind: queryset.filter(parked_at=None) for kind, queryset in querysets.items()}
    items: dict[tuple[str, int], Any] = {}
    for kind, queryset in querysets.items():
        ids = [pk for k, pk in keys if k == kind]
        if ids:
            items.update({(kind, pk): item for pk, item in queryset.in_bulk(ids).items()})
    return items
