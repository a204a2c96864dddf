"""The whole score of each candidate (penalties, vitality, confirmation, final), the selection
per section and the diversity rule (memory/ranking/applicability/__init__.py)."""

from datetime import datetime
from functools import lru_cache

from django.db import connection

from memory.config import MemoryConfig
from memory.models import ItemKind, LinkKind, Note, NoteLink, ProfileFact, Signal, VoteEvent
from memory.modes import DEFAULT_MODE, Mode
from memory.ranking.applicability.candidate import Candidate, when
from memory.ranking.applicability.heuristic import NEGATION, clamp, confirmations_of, heuristic_scores
from memory.ranking.applicability.llm import llm_scores
from memory.ranking.notes import said_times
from memory.text import jaccard, query_terms, word_set
from memoryweb.db import placeholders


def _said(candidates: list[Candidate]) -> dict[int, int]:
    """How many more times than once each candidate note was said (its ranker's reason says)."""
    return {c.obj.pk: said_times(c.reason) - 1 for c in candidates if isinstance(c.obj, Note)}


def _contradicted(candidates: list[Candidate]) -> set[int]:
    """Ids of candidate notes contradicted by a newer note, or by an active fact of this build
    (the facts that matter for the message) set after them."""
    notes = {c.obj.pk: c.obj for c in candidates if isinstance(c.obj, Note)}
    if not notes:
        return set()
    out: set[int] = set()
    links = _contradicts_links(list(notes))
    others = Note.objects.only("occurred_at", "created_at").in_bulk({pk for pair in links for pk in pair})
    for src, dst in links:
        for mine, theirs in ((src, dst), (dst, src)):
            if mine in notes and theirs in others and when(others[theirs]) > when(notes[mine]):
                out.add(mine)
    said: dict[int, tuple[set[str], bool]] = {}  # a note's words and negation, read once
    for fact in (c.obj for c in candidates if isinstance(c.obj, ProfileFact)):
        value = word_set(fact.value)
        if not value:
            continue
        fact_negated = bool(NEGATION.search(fact.value))
        for pk, note in notes.items():
            if pk not in said:
                said[pk] = (word_set(note.content), bool(NEGATION.search(note.content)))
            words, note_negated = said[pk]
            negated_here = note_negated != fact_negated
            if value <= words and negated_here and fact.valid_from > when(note):
                out.add(pk)
    return out


def _contradicts_links(note_ids: list[int]) -> list[tuple[int, int]]:
    """(src, dst) of the `contradicts` links touching `note_ids`, in SQL: one statement a build,
    whose ORM compiling cost more than running it."""
    marks = placeholders(note_ids)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT src_id, dst_id FROM {NoteLink._meta.db_table} "
            f"WHERE kind = %s AND (src_id IN ({marks}) OR dst_id IN ({marks}))",
            [LinkKind.CONTRADICTS.value, *note_ids, *note_ids],
        )
        return cursor.fetchall()


VOTED_KINDS = (ItemKind.FACT, ItemKind.NOTE, ItemKind.LESSON, ItemKind.PROCEDURE)


def _intrusive(candidates: list[Candidate], mode: Mode) -> dict[tuple[str, int], int]:
    """How many "intrusive" signals each votable candidate got in `mode`, in one query for the
    whole build ((kind, id) → count; a signal given without a mode counts in none)."""
    ids: dict[str, set[int]] = {}
    for c in candidates:
        if c.kind in VOTED_KINDS:
            ids.setdefault(c.kind, set()).add(c.obj.pk)
    if not ids:
        return {}
    which: list[str] = []
    params: list[int | str] = []
    for kind, pks in ids.items():
        which.append(f"(item_kind = %s AND item_id IN ({placeholders(pks)}))")
        params += [str(kind), *sorted(pks)]
    with connection.cursor() as cursor:  # SQL: the ORM's compiling cost more than the query
        cursor.execute(
            f"SELECT item_kind, item_id, COUNT(*) FROM {VoteEvent._meta.db_table} "
            f"WHERE signal = %s AND mode = %s AND ({' OR '.join(which)}) GROUP BY item_kind, item_id",
            [Signal.INTRUSIVE.value, mode.name, *params],
        )
        return {(kind, item_id): n for kind, item_id, n in cursor.fetchall()}


def _vitality(obj, config: MemoryConfig, now: datetime) -> float:
    half_life = config["scoring.recencyHalfLifeDays"]
    age = max((now - when(obj)).total_seconds() / 86400, 0.0)
    recency = 0.5 ** (age / half_life) if half_life > 0 else 0.0
    recalls = getattr(obj, "recall_count", 0) or 0
    max_vote = config["voting.maxVotePerItem"] or 1.0
    votes = clamp(0.5 + 0.5 * obj.vote_score / max_vote)
    return 0.5 * recency + 0.25 * (1.0 - 0.5 ** (recalls / 3)) + 0.25 * votes


def judge(
    candidates: list[Candidate],
    *,
    message: str,
    mode: Mode,
    config: MemoryConfig,
    now: datetime,
) -> None:
    """Score every candidate in place (`Candidate.scores`: the breakdown of the module
    docstring, with `judge` "heuristic" or "llm")."""
    if not candidates:
        return
    terms = query_terms(message)
    said = _said(candidates)
    contradicted = _contradicted(candidates)
    intrusive = _intrusive(candidates, mode)
    max_intrusive = config["voting.maxVotePerItem"]
    weights = config["applicability.weights"]
    max_vote = config["voting.maxVotePerItem"] or 1.0
    personalization = mode.applicability.get("personalization", 0.5)
    for c in candidates:
        c.scores = {
            **heuristic_scores(c, message=message, terms=terms, mode=mode, now=now, said=said),
            "judge": "heuristic",
        }
    best = sorted(candidates, key=lambda c: (-c.retrieval, c.rank))[
        : config["applicability.llmMaxCandidates"]
    ]
    judged = llm_scores(message, mode, best, config)  # one batched call per build
    for c in best:
        if c.id in judged:
            c.scores.update(judged[c.id], judge="llm")
    for c in candidates:
        s = c.scores
        s["applicability"] = (
            s["temporal"] * s["epistemic"] * max(0.7 * s["task_fit"] + 0.3 * s["mode_fit"], s["risk"])
        )
        s["retrieval"] = c.retrieval
        s["vitality"] = _vitality(c.obj, config, now)
        confirmations = confirmations_of(c, said)
        s["confirmation"] = clamp(0.7 * min(confirmations, 3) / 3 + 0.3 * max(c.obj.vote_score, 0) / max_vote)
        s["privacy_penalty"] = (
            config["applicability.privacyPenalty"] * max(0.0, 0.5 - personalization)
            if getattr(c.obj, "category", "")
            else 0.0
        )
        s["contradiction_penalty"] = (
            config["applicability.contradictionPenalty"]
            if isinstance(c.obj, Note) and c.obj.pk in contradicted
            else 0.0
        )
        s["intrusive_penalty"] = config["feedback.intrusivePenalty"] * min(
            intrusive.get((c.kind, c.obj.pk), 0), max_intrusive
        )
        s["final"] = (
            weights["applicability"] * s["applicability"]
            + weights["retrieval"] * s["retrieval"]
            + weights["vitality"] * s["vitality"]
            + weights["confirmation"] * s["confirmation"]
            - s["privacy_penalty"]
            - s["contradiction_penalty"]
            - s["intrusive_penalty"]
        )


def breakdown(c: Candidate) -> dict:
    """The candidate's scores as every context item carries them (rounded)."""
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in c.scores.items()}


def selected(candidates: list[Candidate], *, mode: Mode, config: MemoryConfig) -> list[Candidate]:
    """The candidates a section may place, best `final` first: applicability at least
    `applicability.minApplicability` (pinned facts in the default mode always, and in any mode
    a pinned fact qualified by that mode: what the person wants there, e.g. a SPLIT_BY_MODE's
    "answer_style: concise" in coding_debug). With `applicability.enabled` false the ranker's
    order stands and nothing is cut."""
    if not config["applicability.enabled"]:
        return sorted(candidates, key=lambda c: c.rank)
    floor = config["applicability.minApplicability"]
    kept = [
        c
        for c in candidates
        if c.applicability >= floor
        or (c.pinned and (mode.name == DEFAULT_MODE or getattr(c.obj, "mode", "") == mode.name))
    ]
    return sorted(kept, key=lambda c: (-c.final, c.rank))


class Diversity:
    """Which texts a section holds already, to skip a near-duplicate of one of them."""

    def __init__(self, config: MemoryConfig):
        self.threshold = config["applicability.diversityThreshold"]
        self.held: list[frozenset[str]] = []

    def repeats(self, text: str) -> bool:
        if not self.held:
            return False
        words = _words(text)
        return any(jaccard(words, other) >= self.threshold for other in self.held)

    def hold(self, text: str) -> None:
        self.held.append(_words(text))


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    """`word_set(text)`, kept per process: a build asks for each candidate's up to three times
    (its section's check, the hold, the other section's check), and the same notes come back
    from one message to the next."""
    return frozenset(word_set(text))
