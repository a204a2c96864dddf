"""Ranking the subject's notes for one message (DESIGN §4, the hot read's candidate search and
scoring). Used by the context builder; reads only.

Retrieval modes (`retrieve.mode`):
- `fts`: the full-text list alone;
- `vector`: the nearest neighbours of the message's embedding alone;
- `hybrid`: both lists fused by weighted reciprocal rank;
- `full` (the default): hybrid plus every signal below. With embeddings off (or failing) the
  vector list is empty, so `full` is the full-text list plus the signals.

Evidence units (memory.models.Evidence: the turns themselves, with `evidence.enabled`) are
candidates beside the notes: their full-text and vector hits join the notes' lists (one list
per kind of search, best score first) and every rule below scores them alike (a unit has no
confirmations: it is the turn; it lifts, and is lifted by, the turns around its message as a
note does). A note stored from a message and that message's unit never both come back: the
better-scored stays.

Every mode scores votes, recency and confirmations on top of relevance (`scoring.*`).
Only `full` adds:
- **neighbouring turns**: a note (or evidence unit) whose source message sits within
  `scoring.neighbourWindow` messages of a candidate's source message in the same conversation
  is lifted by `scoring.neighbours` × that candidate's relevance. The answer to a question often
  sits in the turn after the one that shares its words ("What was it about?" → "It was a poetry
  reading …"); a lifted note or unit that was no candidate joins the ranking as its own item;
- **session**: notes of the conversation whose best candidates are strongest get
  `scoring.session` × that conversation's share;
- **dates**: a date in the message ("in May 2023", "on 3 June", "last week", resolved against
  now) lifts notes whose date falls in it by `scoring.dateMatch`; a "when" question lifts
  notes that themselves mention a date by `scoring.whenDated`;
- **people and things named**: when the message names someone or something (a capitalised
  word that is no question word, weekday or month: "What has Melanie painted?"), a note whose
  speaker is that name (an evidence unit's name, sent with its message, or a note's prefix
  "Melanie: …", as transcripts and imported chats store a turn: `speaker_said`) gains
  `scoring.speakerMatch`, and one that names it elsewhere `scoring.entityMatch`, each times
  the share of the message's names it holds. Questions about one person across many
  sessions ("What activities does Melanie partake in?") otherwise fill their places with the
  other speaker's turns that share the topic's words. With `retrieve.nameTerms` "signals"
  (the default) the names of the people who speak are not full-text terms when the message
  holds other words that are no date (`_full_text`, memory/ranking/names.py): matching every
  turn its person said, such a name filled the full-text list with that person's shortest
  turns, whatever they say.

Link expansion over the note graph (memory/links.py) follows in `fts` and `full` mode; the
context builder does it, after ranking.

Weighted reciprocal rank: a note at rank r (1-based) of a list with weight w earns
w / (`retrieve.fusion.rrfK` + r); the sum over the lists, divided by the best note's sum, is its
relevance in (0, 1]. In `fts` and `vector` mode the list's own scores give the relevance (score
÷ best score), as before fusion existed.
"""

import logging
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import lru_cache

from django.db import connection

from memory.config import MemoryConfig
from memory.embeddings import get_embedder
from memory.models import Evidence, Note
from memory.ranking.names import named_entities, speaker_and_text, without_names
from memory.search.lexical import (
    Hit,
    NoteFilter,
    _note_filter_sql,
    evidence_filter_sql,
    evidence_search,
    note_search,
)
from memory.search.vectors import evidence_vector_search, note_vector_search
from memory.search.vectors.query import query_vector
from memory.temporal import resolve_dates
from memory.text import word_set
from memoryweb.db import placeholders

logger = logging.getLogger(__name__)

MODES = ("fts", "vector", "hybrid", "full")
# candidates whose turn neighbours are looked up: the strongest ones (a weak candidate lifts
# its neighbours too little to matter, and each costs a small index lookup)
NEIGHBOUR_SEEDS = 30
MATCHED = "matched stemmed terms"
# a note's confirmations as its reason states them (memory/ranking/applicability.py reads them)
SAID = "said {times} times"
_SAID = re.compile(r"\bsaid (\d+) times\b")
# a conversation's strength: the sum of its best few candidates' relevance
SESSION_TOP = 3

WHEN_QUESTION = re.compile(
    r"\b(?:when|what (?:date|day|year|month|time)|which (?:date|day|year|month)|how long ago|"
    r"since when|how long (?:has|have|had|did|was|were))\b",
    re.IGNORECASE,
)
_HAS_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
# "in June", "during the summer": named months of no particular year ("next month" is one month)
CALENDAR_MONTHS = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|spring|summer|autumn|fall|winter)", re.IGNORECASE
)
RELATIVE = re.compile(r"\b(?:last|next|this|coming|past|ago)\b", re.IGNORECASE)
# a search term that only dates: a number, a month, a weekday, a season
DATE_WORD = re.compile(
    r"\d+(?:st|nd|rd|th)?|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"spring|summer|autumn|fall|winter"
)
# a cheap test before memory.temporal's full set of rules: no date without one of these
DATE_HINT = re.compile(
    r"\d|\b(?:yesterday|today|tonight|tomorrow|ago|last|next|this|week|weekend|month|year|"
    r"spring|summer|autumn|fall|winter|mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|"
    r"aug|sep|oct|nov|dec)",
    re.IGNORECASE,
)


# a candidate's key: a note's id, or ("e", id) for an evidence unit (the turn itself)
Key = int | tuple[str, int]


@dataclass
class Candidate:
    note: Note | Evidence  # an evidence unit reads like a note (its `content`, `tags`)
    relevance: float = 0.0  # fused list relevance, in [0, 1]
    boost: float = 0.0  # date signals, added to relevance before neighbours see it
    lift: float = 0.0  # from neighbouring turns
    score: float = 0.0
    why: list[str] = field(default_factory=list)

    @property
    def topical(self) -> float:
        return self.relevance + self.boost


def weighted_rrf(lists: list[tuple[list, float]], k: float) -> dict:
    """{id: Σ weight / (k + rank)} over the lists (rank 1-based), divided by the best sum."""
    fused: dict = defaultdict(float)
    for ids, weight in lists:
        if weight <= 0:
            continue
        for rank, item in enumerate(ids, start=1):
            fused[item] += weight / (k + rank)
    top = max(fused.values(), default=0.0)
    return {item: value / top for item, value in fused.items()} if top > 0 else {}


def _by_score(hits: list[tuple]) -> dict:
    """{key: score ÷ best score} of a (key, score) list."""
    top = max((score for _, score in hits), default=0.0)
    return {key: score / top for key, score in hits} if top > 0 else {}


# --- dates -------------------------------------------------------------------------------


@dataclass(frozen=True)
class DateWindow:
    """A date the message names: a range of days, or, without a year, months (any year)."""

    start: date | None = None
    end: date | None = None
    months: frozenset[int] = frozenset()

    def holds(self, day: date, slack_days: int) -> bool:
        if self.months:
            return day.month in self.months or (day - timedelta(days=slack_days)).month in self.months
        assert self.start is not None and self.end is not None
        return self.start <= day <= self.end + timedelta(days=slack_days)


def message_dates(text: str, now: datetime) -> list[DateWindow]:
    """The dates `text` names, resolved against `now` (memory.temporal). A named month or season
    without a year ("in June", "during the summer") matches those months of any year; "next
    month" or "last summer" is the one period they resolve to."""
    windows = []
    for mention in resolve_dates(text, now):
        end = mention.end or mention.start
        if (
            mention.granularity == "month"
            and CALENDAR_MONTHS.search(mention.phrase)
            and not (_HAS_YEAR.search(mention.phrase) or RELATIVE.search(mention.phrase))
        ):
            months: set[int] = set()
            day = mention.start.replace(day=1)
            while day <= end and len(months) < 12:
                months.add(day.month)
                day = (day + timedelta(days=32)).replace(day=1)
            windows.append(DateWindow(months=frozenset(months)))
        else:
            windows.append(DateWindow(start=mention.start, end=end))
    return windows


def asks_when(text: str) -> bool:
    """Whether the message asks for a time: "when …", "what year …", "how long ago …"."""
    return bool(WHEN_QUESTION.search(text))


@lru_cache(maxsize=8192)
def mentions_date(text: str, reference: date) -> bool:
    """Whether `text` names a date ("last week", "May 3", "2023-05-08"); cached per process
    (the same notes come back as candidates again and again)."""
    return bool(DATE_HINT.search(text)) and bool(resolve_dates(text, reference))


def _note_day(note: Note) -> date:
    return (note.occurred_at or note.created_at).date()


# --- neighbouring turns ----------------------------------------------------------------------


# one side of a seed's source message: the `window` messages before it (or after it) in its
# conversation's timeline order, a short range scan of the message_timeline index (the id breaks
# ties), so the cost does not grow with the length of the conversation
_SIDE = (
    "SELECT {columns} FROM memory_message x WHERE x.conversation_id = s.conversation_id "
    "AND (x.occurred_at, x.id) {op} (s.occurred_at, s.id) ORDER BY x.occurred_at {order}, x.id {order} LIMIT %s"
)


def _turn_neighbours(
    seed_ids: list[int],
    *,
    subject_id: int,
    filters: NoteFilter,
    window: int,
    unit_seed_ids: list[int] | None = None,
    units: bool = False,
) -> list[tuple[Key, Key]]:
    """(seed, neighbour) for every live note of the subject (under `filters`), and with `units`
    every retrievable evidence unit (in `filters.scopes`), whose message is one of the `window`
    messages before or after a seed's message in the same conversation (timeline order:
    occurred_at, id). Seeds are notes (`seed_ids`: their source messages) and evidence units
    (`unit_seed_ids`: their message); keys as `rank_notes` keys candidates (a note's id, ("e",
    id) for a unit). A seed never pairs with itself, nor with the items of its own message. In
    timeline order: by conversation, the seed's message, then the neighbouring message.

    One statement: seed messages, the turns around them, their notes (and units) and the filters."""
    unit_seed_ids = unit_seed_ids or []
    if (not seed_ids and not unit_seed_ids) or window <= 0:
        return []
    where, params = _note_filter_sql(filters, alias="n")
    # PostgreSQL runs the side as a LATERAL subquery once per seed; as `o.id IN (…)` its planner
    # evaluated it once per message of the table. SQLite has no LATERAL and plans the IN well.
    lateral = connection.vendor == "postgresql"
    sides = " UNION ALL ".join(
        "SELECT seed.kind AS seed_kind, seed.item_id AS seed_id, s.conversation_id, s.occurred_at AS seed_at, "
        "s.id AS seed_message, o.occurred_at AS near_at, o.id AS message_id "
        "FROM seed JOIN memory_message s ON s.id = seed.message_id "
        + (
            f"CROSS JOIN LATERAL ({_SIDE.format(columns='x.id, x.occurred_at', op=op, order=order)}) o"
            if lateral
            else f"JOIN memory_message o ON o.id IN ({_SIDE.format(columns='x.id', op=op, order=order)})"
        )
        for op, order in (("<", "DESC"), (">", "ASC"))
    )
    seeds = (
        [
            f"SELECT 'n' AS kind, note_id AS item_id, message_id FROM memory_notesource "
            f"WHERE note_id IN ({placeholders(seed_ids)}) AND message_id IS NOT NULL"
        ]
        if seed_ids
        else []
    )
    if unit_seed_ids:
        seeds.append(
            f"SELECT 'e' AS kind, id AS item_id, message_id FROM memory_evidence "
            f"WHERE id IN ({placeholders(unit_seed_ids)})"
        )
    # +subject_id keeps SQLite on the primary key (the subject index walks all its notes);
    # PostgreSQL plans the plain column well and the unary plus badly
    subject_column = "n.subject_id" if lateral else "+n.subject_id"
    columns = "near.conversation_id, near.seed_at, near.seed_message, near.near_at, near.message_id"
    found = [
        f"SELECT near.seed_kind, near.seed_id, 'n' AS kind, n.id, {columns} FROM near "
        "JOIN memory_notesource ns ON ns.message_id = near.message_id "
        "JOIN memory_note n ON n.id = ns.note_id "
        f"WHERE {subject_column} = %s AND NOT (near.seed_kind = 'n' AND n.id = near.seed_id)"
        + "".join(f" AND {clause}" for clause in where)
    ]
    found_params = [subject_id, *params]
    if units:
        unit_where, unit_params = evidence_filter_sql(filters.scopes)
        found.append(
            f"SELECT near.seed_kind, near.seed_id, 'e' AS kind, n.id, {columns} FROM near "
            f"JOIN memory_evidence n ON n.message_id = near.message_id WHERE {subject_column} = %s"
            + "".join(f" AND {clause}" for clause in unit_where)
        )
        found_params += [subject_id, *unit_params]
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH seed AS ({' UNION ALL '.join(seeds)}), near AS ({sides}) "
            + " UNION ALL ".join(found)
            + " ORDER BY 5, 6, 7, 8, 9, 3, 4",
            [*seed_ids, *unit_seed_ids, window, window, *found_params],
        )
        rows = cursor.fetchall()

    def key(kind: str, pk: int) -> Key:
        return pk if kind == "n" else ("e", pk)

    return [(key(seed_kind, seed_id), key(kind, pk)) for seed_kind, seed_id, kind, pk, *_ in rows]


def _neighbour_lifts(
    candidates: dict, *, subject_id: int, filters: NoteFilter, config: MemoryConfig, units: bool = False
) -> dict[Key, tuple[float, Key]]:
    """{key: (lift, from key)}: the best `scoring.neighbours` × relevance that a seed candidate
    passes to the notes (and with `units` the evidence units) of the turns around its own. A
    seed is a note or a unit alike: the strongest NEIGHBOUR_SEEDS candidates. In timeline order
    (see `_turn_neighbours`): on a tie the earlier seed turn wins, and equal lifts keep that
    order."""
    weight, window = config["scoring.neighbours"], config["scoring.neighbourWindow"]
    if weight <= 0 or window <= 0 or not candidates:
        return {}
    seeds = sorted(candidates.items(), key=lambda pair: -pair[1].topical)[:NEIGHBOUR_SEEDS]
    pairs = _turn_neighbours(
        [key for key, _ in seeds if isinstance(key, int)],
        subject_id=subject_id,
        filters=filters,
        window=window,
        unit_seed_ids=[key[1] for key, _ in seeds if isinstance(key, tuple)],
        units=units,
    )
    lifts: dict[Key, tuple[float, Key]] = {}
    for seed, neighbour in pairs:
        value = weight * candidates[seed].topical
        if value > lifts.get(neighbour, (0.0, 0))[0]:
            lifts[neighbour] = (value, seed)
    return lifts


def _note_sources(note_ids: list[int]) -> dict[int, list[int | None]]:
    """{note id: the messages it was stored from, one per source row (None: a source without a
    message)} for the notes among `note_ids`: how often each was said, and which turns it
    came from."""
    if not note_ids:
        return {}
    marks = placeholders(note_ids)
    sources: dict[int, list[int | None]] = defaultdict(list)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT note_id, message_id FROM memory_notesource WHERE note_id IN ({marks})", note_ids
        )
        for note_id, message_id in cursor.fetchall():
            sources[note_id].append(message_id)
    return sources


# --- ranking ---------------------------------------------------------------------------------

# what ranking and the context builder read of a candidate (a third of the columns: loading
# all of them for the 40-odd candidates of each build cost more than the ranking itself)
RANKED_FIELDS = (
    "id",
    "subject_id",
    "content",
    "tags",
    "scope",
    "conversation_id",
    "source_message_id",
    "occurred_at",
    "created_at",
    "vote_score",
    # what the applicability policy and judge read (memory/ranking/applicability.py)
    "mode",
    "category",
    "origin",
    "recall_count",
    # what mirror retrieval reads of a placed note (memory/context.py, Mirror)
    "confidence",
)
EVIDENCE_FIELDS = (
    "id",
    "subject_id",
    "conversation_id",
    "message_id",
    "role",
    "name",
    "text",
    "occurred_at",
    "created_at",
    "vote_score",
    "scope",
    "category",
    "recall_count",
)


def _ref(key: Key) -> str:
    """How a reason names a candidate: n:ID, or e:ID for an evidence unit."""
    return f"e:{key[1]}" if isinstance(key, tuple) else f"n:{key}"


def _ranked_notes():
    return Note.objects.only(*RANKED_FIELDS)


def _merged(notes: list[Hit], evidence: list[Hit]) -> list[tuple[Key, float]]:
    """Both kinds in one list, best first (their scores are of one measure: bm25 for the
    full-text lists, cosine for the vector lists); a note before a unit on a tie."""
    pairs: list[tuple[Key, float]] = [(h.id, h.score) for h in notes]
    pairs += [(("e", h.id), h.score) for h in evidence]
    return sorted(pairs, key=lambda pair: -pair[1])


def vector_hits(
    subject_id: int, query: str, *, limit: int, filters: NoteFilter, config, evidence: bool
) -> tuple[list[Hit], list[Hit]] | None:
    """The nearest notes and evidence units to the message's embedding; None when embeddings
    are off or failing (memory.services.embeddings counts and logs the failure)."""

    vector = query_vector(config, query)
    if vector is None:
        return None
    embedder = get_embedder(config)
    if embedder is None:
        return None
    try:
        notes = note_vector_search(
            subject_id, vector, model_id=embedder.model_id, limit=limit, filters=filters
        )
        units = (
            evidence_vector_search(
                subject_id, vector, model_id=embedder.model_id, limit=limit, scopes=filters.scopes
            )
            if evidence
            else []
        )
        return notes, units
    except Exception as exc:  # a broken index must not break recall: full-text still answers
        logger.warning("vector search failed: %s", exc)
        return None


def _full_text(
    subject_id: int, query: str, terms: list[str], filters: NoteFilter, limit: int, units: bool, names: str
) -> list[tuple[Key, float]]:
    """The full-text list: notes (and with `units` evidence units) for `terms`, best first.

    With `names` "signals" (`retrieve.nameTerms`), the names of the people the message names
    who speak in the first hits ("Melanie: …") are searched no more when the message holds other
    words that are no date: the hits are searched again without them, and the speaker signal
    carries them (`scoring.speakerMatch`, `entityMatch`). A name matches every turn its person
    said, so it filled the list's places with their shortest turns, whatever those say. A thing's
    name ("Max", the dog; "Chicago") is as topical as any word, and a question whose other words
    only date ("What did Nate do for Joanna on 25 May?") is the date signal's: both keep every
    term."""
    found = note_search(subject_id, terms, limit=limit, filters=filters)
    said = evidence_search(subject_id, terms, limit=limit, scopes=filters.scopes) if units else []
    named = named_entities(query) if names == "signals" else set()
    speakers = _speakers([h.id for h in found], [h.id for h in said]) & named if named else set()
    words = without_names(terms, speakers)
    if not speakers or len(words) == len(terms) or all(DATE_WORD.fullmatch(t) for t in words):
        return _merged(found, said)
    found = note_search(subject_id, words, limit=limit, filters=filters)
    said = evidence_search(subject_id, words, limit=limit, scopes=filters.scopes) if units else []
    return _merged(found, said)


def _speakers(note_ids: list[int], unit_ids: list[int]) -> set[str]:
    """The words of the speaker prefixes ("Melanie: …") of these notes and of the names these
    evidence units were posted with (`speaker_said`), in one statement."""
    parts, params = [], []
    if note_ids:
        parts.append(f"SELECT content, '' FROM {Note._meta.db_table} WHERE id IN ({placeholders(note_ids)})")
        params += note_ids
    if unit_ids:
        parts.append(f"SELECT '', name FROM {Evidence._meta.db_table} WHERE id IN ({placeholders(unit_ids)})")
        params += unit_ids
    if not parts:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        rows = cursor.fetchall()
    return {word for content, name in rows for word in speaker_and_text(content, name)[0].split()}


def _one_per_turn(ranked: list[Candidate], sources: dict[int, list[int | None]]) -> list[Candidate]:
    """`ranked` without the candidates that repeat a better one's turn: a note stored from a
    message and that message's evidence unit never both take a place; the better-scored stays."""
    turns_taken: set[int] = set()  # messages of the notes kept
    units_taken: set[int] = set()  # messages of the units kept
    kept = []
    for c in ranked:
        if isinstance(c.note, Evidence):
            if c.note.message_id in turns_taken:
                continue
            units_taken.add(c.note.message_id)
        else:
            messages = {m for m in sources.get(c.note.pk, []) if m is not None}
            if c.note.source_message_id:
                messages.add(c.note.source_message_id)
            if messages & units_taken:
                continue
            turns_taken |= messages
        kept.append(c)
    return kept


def rank_notes(
    *,
    subject_id: int,
    query: str,
    terms: list[str],
    filters: NoteFilter,
    config: MemoryConfig,
    now: datetime,
    mode: str | None = None,
) -> list[tuple[Note | Evidence, float, str]]:
    """The subject's notes and evidence units (with `evidence.enabled`) for `query`, best
    first, as (item, score, reason) (module docstring)."""
    mode = mode or config["retrieve.mode"]
    limit = config["recallInjection.candidates"]
    with_evidence = config["evidence.enabled"]
    lexical: list[tuple[Key, float]] = []
    if mode != "vector":
        names = config["retrieve.nameTerms"] if mode == "full" else "search"
        lexical = _full_text(subject_id, query, terms, filters, limit, with_evidence, names)
    vector: list[tuple[Key, float]] = []
    if mode != "fts":
        found = vector_hits(
            subject_id, query, limit=limit, filters=filters, config=config, evidence=with_evidence
        )
        vector = _merged(*found) if found else []
    if mode in ("fts", "vector") or not vector or not lexical:
        relevance = _by_score(lexical or vector)
    else:
        fusion = config["retrieve.fusion"]
        relevance = weighted_rrf(
            [
                ([key for key, _ in lexical], fusion["lexicalWeight"]),
                ([key for key, _ in vector], fusion["vectorWeight"]),
            ],
            fusion["rrfK"],
        )
    if not relevance:
        return []
    notes = _ranked_notes().in_bulk([key for key in relevance if isinstance(key, int)])
    unit_ids = [key[1] for key in relevance if isinstance(key, tuple)]
    units_by_id = Evidence.objects.only(*EVIDENCE_FIELDS).in_bulk(unit_ids) if unit_ids else {}
    candidates: dict[Key, Candidate] = {}
    for key, value in relevance.items():
        item = notes.get(key) if isinstance(key, int) else units_by_id.get(key[1])
        if item is not None:
            candidates[key] = Candidate(note=item, relevance=value)
    lexical_keys, vector_keys = {key for key, _ in lexical}, {key for key, _ in vector}
    for key, c in candidates.items():
        if key in lexical_keys:
            c.why.append(MATCHED)  # the words themselves are named for the items shown (below)
        if key in vector_keys:
            c.why.append("similar meaning")
        if isinstance(c.note, Evidence):
            c.why.append(f"said by the {c.note.role}")
    if mode == "full":
        _date_signals(candidates, query, config, now)
        lifts = _neighbour_lifts(
            candidates, subject_id=subject_id, filters=filters, config=config, units=with_evidence
        )
        # notes and units that are no candidate join with their lift alone: the strongest few suffice
        new = sorted((key for key in lifts if key not in candidates), key=lambda key: -lifts[key][0])[:limit]
        reached: dict[Key, Note | Evidence] = dict(
            _ranked_notes().in_bulk([key for key in new if isinstance(key, int)])
        )
        unit_ids = [key[1] for key in new if isinstance(key, tuple)]
        if unit_ids:
            reached_units = Evidence.objects.only(*EVIDENCE_FIELDS).in_bulk(unit_ids)
            reached |= {("e", pk): unit for pk, unit in reached_units.items()}
        lifts = {key: lift for key, lift in lifts.items() if key in candidates or key in reached}
        for key, item in reached.items():
            candidates[key] = Candidate(note=item)
        for key, (lift, source) in lifts.items():
            candidates[key].lift = lift
            candidates[key].why.append(f"next to {_ref(source)} in its conversation")
    sources = _note_sources([key for key in candidates if isinstance(key, int)])
    _score(candidates, config, now, session=mode == "full", sources=sources)
    if mode == "full":
        _entity_signal(candidates, query, config)
    ranked = sorted(candidates.values(), key=lambda c: (-c.score, -c.note.pk))
    ranked = _one_per_turn(ranked, sources)
    terms_set = set(terms)
    for c in ranked[: config["recallInjection.k"] + config["index.limit"]]:
        if MATCHED in c.why:
            c.why[c.why.index(MATCHED)] = matched_reason(
                terms_set, c.note.content + " " + " ".join(c.note.tags)
            )
    return [(c.note, c.score, "; ".join(c.why)) for c in ranked]


def speaker_said(item: Note | Evidence) -> tuple[str, str]:
    """Who said a note or evidence unit, and what they said: a unit's speaker name (sent with
    its message, `Evidence.name`), else the name a stored turn opens with ("Melanie: …",
    SPEAKER_PREFIX); ("", the whole text) when neither names one."""
    if isinstance(item, Evidence):
        return speaker_and_text(item.text, item.name)
    return speaker_and_text(item.content)


def _entity_signal(candidates: dict, query: str, config: MemoryConfig) -> None:
    """The lift of the notes said by, or naming, the people and things the message names
    (module docstring)."""
    w_speaker, w_named = config["scoring.speakerMatch"], config["scoring.entityMatch"]
    names = named_entities(query)
    if (w_speaker <= 0 and w_named <= 0) or not names:
        return
    patterns = {name: re.compile(rf"\b{re.escape(name)}\b") for name in names}
    for c in candidates.values():
        who, rest = speaker_said(c.note)
        speaker = set(who.split()) & names
        named = sorted(name for name, pattern in patterns.items() if pattern.search(rest))
        lift = (w_speaker * len(speaker) + w_named * len(named)) / len(names)
        if lift <= 0:
            continue
        c.score += lift
        if speaker:
            c.why.append(f"said by {', '.join(sorted(speaker))}")
        if named:
            c.why.append(f"names {', '.join(named)}")


def said_times(reason: str) -> int:
    """How many times a ranked note was said, as its reason states (1 when it does not say)."""
    match = _SAID.search(reason)
    return int(match.group(1)) if match else 1


def matched_reason(terms: set[str], text: str) -> str:
    """Why a full-text match was chosen: the message's words that `text` holds (or, when only
    their stems matched, that)."""
    matched = sorted(terms & word_set(text))
    return f"matched {', '.join(matched[:6])}" if matched else MATCHED


def _date_signals(candidates: dict, query: str, config: MemoryConfig, now: datetime) -> None:
    windows = message_dates(query, now)
    weight, slack = config["scoring.dateMatch"], config["scoring.dateSlackDays"]
    if windows and weight > 0:
        for c in candidates.values():
            day = _note_day(c.note)
            if any(w.holds(day, slack) for w in windows):
                c.boost += weight
                c.why.append(f"dated {day:%Y-%m-%d}, as asked")
    when_weight = config["scoring.whenDated"]
    if when_weight > 0 and asks_when(query):
        for c in candidates.values():
            if mentions_date(c.note.content, _note_day(c.note)):
                c.boost += when_weight
                c.why.append("mentions a date")


def _score(
    candidates: dict, config: MemoryConfig, now: datetime, *, session: bool, sources: dict[int, list]
) -> None:
    """score = relevance × scoring.relevance + date boosts + neighbour lift + session
    + votes + recency + confirmations."""
    w_rel, w_votes, w_rec = config["scoring.relevance"], config["scoring.votes"], config["scoring.recency"]
    w_conf = config["scoring.confirmations"]
    half_life = config["scoring.recencyHalfLifeDays"]
    max_vote = config["voting.maxVotePerItem"] or 1.0
    strength: dict[int | None, float] = {}
    if session and config["scoring.session"] > 0:
        per_conversation: dict[int | None, list[float]] = defaultdict(list)
        for c in candidates.values():
            if c.note.conversation_id is not None and c.relevance > 0:
                per_conversation[c.note.conversation_id].append(c.topical)
        sums = {conv: sum(sorted(v, reverse=True)[:SESSION_TOP]) for conv, v in per_conversation.items()}
        top = max(sums.values(), default=0.0)
        strength = {conv: value / top for conv, value in sums.items()} if top > 0 else {}
    for c in candidates.values():
        note = c.note
        age_days = max((now - (note.occurred_at or note.created_at)).total_seconds() / 86400, 0.0)
        recency = 0.5 ** (age_days / half_life) if half_life > 0 else 0.0
        confirmations = max(len(sources.get(note.pk, [])), 1) - 1 if isinstance(note, Note) else 0
        c.score = (
            w_rel * c.relevance
            + c.boost
            + c.lift
            + config["scoring.session"] * strength.get(note.conversation_id, 0.0)
            + w_votes * note.vote_score / max_vote
            + w_rec * recency
            + w_conf * min(confirmations, 2) / 2
        )
        if note.vote_score:
            c.why.append(f"votes {note.vote_score:+g}")
        if confirmations:
            c.why.append(SAID.format(times=confirmations + 1))
