"""The note link graph (DESIGN §3 NoteLink, §4): typed edges between one subject's notes,
written in the background after a note is stored (memory.services.links), and followed
breadth-first at recall. This module reads: neighbours, edge kinds, expansion.

Edges read `src -kind-> dst`:
- `same_topic` — both notes share their tags and most of their words;
- `elaborates` — src adds detail to dst (it holds dst's key terms and more, or is newer);
- `contradicts` — src corrects or reverses dst ("no longer", "instead", "actually", …);
- `causes` — the notes are cause and effect. The LLM typer points from cause to effect; the
  heuristic cannot tell which is which and points from the note that states the causal link;
- `related` — similar enough (`links.minSimilarity`) and none of the above.
The weight is the pair's similarity, 0.7 · Jaccard of the word sets + 0.3 · Jaccard of the
tag sets, so it is in [0, 1].

One pair of notes holds at most one automatic edge: a pair already linked in either
direction, by any origin, is left alone. That makes `note_link` (memory.services.links) safe to repeat, never adds a
competing kind next to a hand-made link, and keeps the graph undirected enough for BFS.
Links never cross subjects and never touch archived notes. Scopes are not a linking boundary
(the graph is the subject's knowledge); recall filters the notes it reaches by scope instead.
"""

import re
from dataclasses import dataclass
from typing import NamedTuple

from django.db import connection
from django.db.models import Q

from memory.config import MemoryConfig
from memory.models import LinkKind, Note, NoteLink
from memory.ranking.linked import rank_linked
from memory.search.lexical import NoteFilter, note_search
from memory.text import jaccard, query_terms, word_set
from memoryweb.db import placeholders
from memoryweb.llm import client_for, prompt_schema

# FTS hits fetched per neighbour kept: BM25 order and word-set similarity disagree often
# enough that the best few by similarity need a wider net.
HITS_PER_NEIGHBOUR = 4
MIN_HITS = 20
# "high overlap": the share of the smaller note's words that the other note also holds
HIGH_OVERLAP = 0.5
# "contains the other's key terms"
CONTAINS = 0.8
# "same tags": Jaccard of the two tag sets
SAME_TAGS = 0.5
# edges read per BFS hop, strongest first: bounds the work when a note is a hub
EDGES_PER_HOP = 500

CONTRADICTION_CUES = re.compile(
    r"\b(?:not|no longer|no more|instead|actually|changed|anymore|any more|never|stopped|switched)\b"
    r"|n['’]t\b",
    re.IGNORECASE,
)
CAUSAL_CUES = re.compile(
    r"\b(?:because|so that|caused|causes|led to|leads to|due to|as a result|therefore|resulted in)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Neighbour:
    note: Note
    similarity: float  # 0.7 · word Jaccard + 0.3 · tag Jaccard
    overlap: float  # |A ∩ B| / min(|A|, |B|) of the word sets
    tag_overlap: float  # Jaccard of the tag sets, 0 when either note has none
    words: int  # size of the neighbour's word set


class Reached(NamedTuple):
    """A note reached by `expand`: from `from_id` over an edge of `kind` and `weight`."""

    note_id: int
    from_id: int
    kind: str
    weight: float


def _tag_overlap(a: list[str], b: list[str]) -> float:
    if not a or not b:
        return 0.0
    return jaccard(set(a), set(b))


def link_neighbours(note: Note, config: MemoryConfig) -> list[Neighbour]:
    """The note's best `links.neighbours` live notes of the same subject above `minSimilarity`."""
    wanted = config["links.neighbours"]
    terms = query_terms(f"{note.content} {' '.join(note.tags)}")
    if wanted <= 0 or not terms:
        return []
    limit = max(wanted * HITS_PER_NEIGHBOUR, MIN_HITS)
    hits = note_search(note.subject_id, terms, limit=limit + 1, filters=NoteFilter())
    others = Note.objects.filter(
        pk__in=[h.id for h in hits if h.id != note.pk],
        subject_id=note.subject_id,
        archived_at__isnull=True,
        parked_at__isnull=True,
    )
    words = word_set(note.content)
    scored: list[Neighbour] = []
    for other in others:
        other_words = word_set(other.content)
        if not words or not other_words:
            continue
        shared = len(words & other_words)
        tag_overlap = _tag_overlap(note.tags, other.tags)
        similarity = 0.7 * jaccard(words, other_words) + 0.3 * tag_overlap
        if similarity < config["links.minSimilarity"]:
            continue
        scored.append(
            Neighbour(
                note=other,
                similarity=similarity,
                overlap=shared / min(len(words), len(other_words)),
                tag_overlap=tag_overlap,
                words=len(other_words),
            )
        )
    scored.sort(key=lambda n: (-n.similarity, -n.note.pk))
    return scored[:wanted]


def link_kind_heuristic(note: Note, neighbour: Neighbour) -> tuple[str, bool]:
    """The edge between `note` and `neighbour.note` from cue words and overlap: (kind, whether
    `note` is the source). First match wins: contradicts, causes, elaborates, same_topic, related."""
    other = neighbour.note
    negated, other_negated = (bool(CONTRADICTION_CUES.search(n.content)) for n in (note, other))
    if neighbour.overlap >= HIGH_OVERLAP and negated != other_negated:
        return LinkKind.CONTRADICTS, negated
    causal, other_causal = (bool(CAUSAL_CUES.search(n.content)) for n in (note, other))
    if causal or other_causal:
        return LinkKind.CAUSES, causal
    if neighbour.overlap >= CONTAINS:
        words = len(word_set(note.content))
        if words != neighbour.words:
            return LinkKind.ELABORATES, words > neighbour.words
        return LinkKind.ELABORATES, (note.created_at, note.pk) >= (other.created_at, other.pk)
    if neighbour.tag_overlap >= SAME_TAGS and neighbour.overlap >= HIGH_OVERLAP:
        return LinkKind.SAME_TOPIC, True
    return LinkKind.RELATED, True


def _prompt_line(note: Note) -> str:
    when = note.occurred_at or note.created_at
    tags = f" ({', '.join(note.tags)})" if note.tags else ""
    return f"[{note.pk}] {when:%Y-%m-%d}{tags}: {' '.join(note.content.split())}"


def link_kinds_llm(note: Note, neighbours: list[Neighbour], config: MemoryConfig) -> dict | None:
    """{neighbour id: (kind or None for "no link", whether `note` is the source)} from the
    consolidation model, or None when none is configured or its answer is unusable."""
    if not config["links.llmTyping"]:
        return None

    client = client_for("consolidation", config)
    if client is None:
        return None
    result = client.complete_json(
        component="consolidation",
        prompt="link_typing",
        variables={
            "note": _prompt_line(note),
            "candidates": "\n".join(_prompt_line(n.note) for n in neighbours),
        },
        schema=prompt_schema("link_typing"),
    )
    if result is None:
        return None
    asked = {n.note.pk for n in neighbours}
    kinds: dict[int, tuple[str | None, bool]] = {}
    for entry in result["links"]:
        if entry["id"] in asked and entry["id"] not in kinds:
            kind = None if entry["kind"] == "none" else entry["kind"]
            kinds[entry["id"]] = (kind, entry["direction"] == "new_to_candidate")
    return kinds


def linked_to(note_id: int, other_ids: list[int]) -> set[int]:
    pairs = NoteLink.objects.filter(
        Q(src_id=note_id, dst_id__in=other_ids) | Q(dst_id=note_id, src_id__in=other_ids)
    ).values_list("src_id", "dst_id")
    return {dst if src == note_id else src for src, dst in pairs}


# a hop's two statements in SQL: they run in every context build, and the ORM's compiling of
# them cost more than running them


def _edges(frontier: list[int]) -> list[tuple[int, int, str, float]]:
    """(src, dst, kind, weight) of the links touching `frontier`, strongest first (the id breaks
    ties), at most EDGES_PER_HOP."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT src_id, dst_id, kind, weight FROM {NoteLink._meta.db_table} "
            f"WHERE src_id IN ({placeholders(frontier)}) OR dst_id IN ({placeholders(frontier)}) "
            "ORDER BY weight DESC, id ASC LIMIT %s",
            [*frontier, *frontier, EDGES_PER_HOP],
        )
        return cursor.fetchall()


def _live(note_ids: set[int], *, subject_id: int | None, scopes: list[str] | None) -> set[int]:
    """The notes among `note_ids` that are neither archived nor parked (of `subject_id`, in
    `scopes`, when given)."""
    ids = sorted(note_ids)
    where = [f"id IN ({placeholders(ids)})", "archived_at IS NULL", "parked_at IS NULL"]
    params: list[int | str] = list(ids)
    if subject_id is not None:
        where.append("subject_id = %s")
        params.append(subject_id)
    if scopes is not None:
        if not scopes:
            return set()
        where.append(f"scope IN ({placeholders(scopes)})")
        params += scopes
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {Note._meta.db_table} WHERE {' AND '.join(where)}", params)
        return {pk for (pk,) in cursor.fetchall()}


def expand(
    note_ids: list[int],
    depth: int,
    limit: int,
    *,
    subject_id: int | None = None,
    scopes: list[str] | None = None,
    exclude: set[int] | frozenset[int] = frozenset(),
) -> list[Reached]:
    """Notes reached from `note_ids` over NoteLink in either direction, breadth first: up to
    `depth` hops, at most `limit` notes, each once, in the order reached.

    Within a hop, notes hanging off an earlier seed come first, then stronger edges. Archived
    notes are never reached (nor walked through), nor are `note_ids` and `exclude` themselves;
    `subject_id` and `scopes` restrict the notes reached the way a search filter would.
    """
    if depth <= 0 or limit <= 0 or not note_ids:
        return []
    frontier = list(dict.fromkeys(note_ids))
    seen = set(frontier) | set(exclude)
    reached: list[Reached] = []
    for _hop in range(depth):
        position = {note_id: i for i, note_id in enumerate(frontier)}
        options = []
        for src, dst, kind, weight in _edges(frontier):
            for here, there in ((src, dst), (dst, src)):
                if here in position and there not in seen:
                    options.append((position[here], -weight, there, here, kind, weight))
        if not options:
            break
        live_ids = _live({o[2] for o in options}, subject_id=subject_id, scopes=scopes)
        frontier = []
        for _position, _weight, there, here, kind, weight in sorted(options):
            if there in seen or there not in live_ids:
                continue
            seen.add(there)
            reached.append(Reached(there, here, kind, weight))
            frontier.append(there)
            if len(reached) >= limit:
                return reached
        if not frontier:
            break
    return reached


def ranked_expand(ranked: list, *, subject_id: int, scopes: list[str] | None, config: MemoryConfig):
    """Add the notes linked to the context's ranked notes; returns (ranked, expanded note ids).

    `ranked` is the context builder's [(note, score, reason)], best first. The seeds are the
    notes that can be selected (the first `recallInjection.k + index.limit`); every
    ranked note is already a candidate on its own merit, so none is reached again. A reached
    note scores parent score × `links.expandedScoreFactor` × edge weight (the parent may itself
    be reached, at depth 2 and beyond) and its reason names the edge and the parent:
    "linked (same_topic) from n:12".

    Placement: direct hits keep the `### recalled` slots they win; reached notes take recalled
    slots only when fewer than k direct hits exist, and otherwise compete by score with the
    remaining direct hits for the `### memory-index`. So expansion adds pointers next to the
    full notes, and never pushes a note that matched the message out of `recalled`.
    Off when `links.enabled` is false or `links.expansionDepth` is 0.
    """
    depth, limit = config["links.expansionDepth"], config["links.maxExpanded"]
    if not ranked or not config["links.enabled"] or depth <= 0 or limit <= 0:
        return ranked, set()
    seeds = ranked[: config["recallInjection.k"] + config["index.limit"]]
    # the graph links notes: evidence units among the ranked neither seed nor are reached
    reached = expand(
        [note.pk for note, _, _ in seeds if isinstance(note, Note)],
        depth,
        limit,
        subject_id=subject_id,
        scopes=scopes,
        exclude={note.pk for note, _, _ in ranked if isinstance(note, Note)},
    )
    if not reached:
        return ranked, set()
    return rank_linked(ranked, reached, config=config)
