"""Lexical search over notes, facts, lessons and procedures: FTS5 on SQLite, tsvector on PostgreSQL.

User text never reaches MATCH (or to_tsquery) as syntax: it is cut into word tokens, stop words
are dropped, and each remaining term is quoted and OR-ed. An implicit AND of every word in a
question finds almost nothing in conversational memory (see shared/bench/README.md).
"""

import re
from dataclasses import dataclass, field

from django.db import connection

from memory.search.schema import PG_VECTORS

TOKEN_RE = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    also yes ok okay hey hi hello thanks thank please really like get got go going know think
    want let lets s t d ll m re ve don didn doesn isn wasn weren won wouldn shouldn couldn""".split()
)

MAX_TERMS = 32


def query_terms(text: str, *, limit: int = MAX_TERMS) -> list[str]:
    """Distinct lower-case word tokens of `text`, stop words and one-letter tokens dropped."""
    seen: dict[str, None] = {}
    for token in TOKEN_RE.findall(text.lower()):
        if len(token) < 2 and not token.isdigit():
            continue
        if token in STOPWORDS:
            continue
        seen.setdefault(token, None)
        if len(seen) >= limit:
            break
    return list(seen)


def word_set(text: str) -> set[str]:
    """The token set used for Jaccard similarity (dedup)."""
    return set(query_terms(text, limit=10_000))


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def fts5_expression(terms: list[str], column: str | None = None) -> str:
    quoted = " OR ".join(f'"{t}"' for t in terms)  # tokens hold no quotes: TOKEN_RE is \w only
    return f"{column} : ({quoted})" if column else quoted


def tsquery_expression(terms: list[str]) -> str:
    return " | ".join(terms)


@dataclass
class NoteFilter:
    scope: str | None = None
    scopes: list[str] | None = None
    working_dir: str | None = None
    tags: list[str] = field(default_factory=list)
    include_archived: bool = False


@dataclass
class Hit:
    id: int
    score: float  # higher is better, always > 0
    matched: list[str] = field(default_factory=list)


def _note_filter_sql(filters: NoteFilter, alias: str = "n") -> tuple[list[str], list]:
    where, params = [], []
    if not filters.include_archived:
        where.append(f"{alias}.archived_at IS NULL")
    if filters.scope is not None:
        where.append(f"{alias}.scope = %s")
        params.append(filters.scope)
    if filters.scopes is not None:
        where.append(f"{alias}.scope IN ({', '.join(['%s'] * len(filters.scopes))})")
        params.extend(filters.scopes)
    if filters.working_dir is not None:
        where.append(f"{alias}.working_dir = %s")
        params.append(filters.working_dir)
    for tag in filters.tags:
        if connection.vendor == "sqlite":
            where.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE json_each.value = %s)")
            params.append(tag)
        else:
            where.append(f"{alias}.tags @> %s::jsonb")
            params.append(f'["{tag}"]')
    return where, params


def note_filter_queryset(queryset, filters: NoteFilter):
    """The same filters applied to a Note queryset (for listing without a query)."""
    if not filters.include_archived:
        queryset = queryset.filter(archived_at__isnull=True)
    if filters.scope is not None:
        queryset = queryset.filter(scope=filters.scope)
    if filters.scopes is not None:
        queryset = queryset.filter(scope__in=filters.scopes)
    if filters.working_dir is not None:
        queryset = queryset.filter(working_dir=filters.working_dir)
    for tag in filters.tags:
        if connection.vendor == "sqlite":
            queryset = queryset.extra(
                where=["EXISTS (SELECT 1 FROM json_each(memory_note.tags) WHERE json_each.value = %s)"],
                params=[tag],
            )
        else:
            queryset = queryset.filter(tags__contains=[tag])
    return queryset


def note_search(
    subject_id: int, terms: list[str], *, limit: int, filters: NoteFilter | None = None
) -> list[Hit]:
    """Best `limit` notes of the subject for any of `terms`, best first."""
    if not terms or limit <= 0:
        return []
    filters = filters or NoteFilter()
    where, params = _note_filter_sql(filters)
    extra = "".join(f" AND {w}" for w in where)
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT n.id, -bm25(memory_note_fts) AS score FROM memory_note_fts "
                "CROSS JOIN memory_note n ON n.id = memory_note_fts.rowid "
                f"WHERE memory_note_fts MATCH %s AND n.subject_id = %s{extra} "
                "ORDER BY bm25(memory_note_fts) LIMIT %s",
                [fts5_expression(terms), subject_id, *params, limit],
            )
        else:
            vector = PG_VECTORS["memory_note"]  # the indexed expression, verbatim, so GIN is used
            cursor.execute(
                f"SELECT n.id, ts_rank_cd({vector}, q) AS score "
                f"FROM memory_note n, to_tsquery('english', %s) q "
                f"WHERE {vector} @@ q AND n.subject_id = %s{extra} "
                "ORDER BY score DESC, n.id DESC LIMIT %s",
                [tsquery_expression(terms), subject_id, *params, limit],
            )
        rows = cursor.fetchall()
    return [Hit(id=row[0], score=max(float(row[1]), 1e-9)) for row in rows]


def fact_keyword_search(subject_id: int, terms: list[str], *, limit: int = 50) -> list[Hit]:
    """Active contextual facts of the subject whose keywords match any of `terms` (stemmed)."""
    if not terms:
        return []
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT f.id, -bm25(memory_profilefact_fts) FROM memory_profilefact_fts "
                "CROSS JOIN memory_profilefact f ON f.id = memory_profilefact_fts.rowid "
                "WHERE memory_profilefact_fts MATCH %s AND f.subject_id = %s "
                "AND f.valid_to IS NULL AND f.pinned = 0 "
                "ORDER BY bm25(memory_profilefact_fts) LIMIT %s",
                [fts5_expression(terms, column="keywords"), subject_id, limit],
            )
        else:
            cursor.execute(
                "SELECT f.id, ts_rank_cd(to_tsvector('english', f.keywords::text), q) FROM "
                "memory_profilefact f, to_tsquery('english', %s) q "
                "WHERE to_tsvector('english', f.keywords::text) @@ q AND f.subject_id = %s "
                "AND f.valid_to IS NULL AND NOT f.pinned ORDER BY 2 DESC LIMIT %s",
                [tsquery_expression(terms), subject_id, limit],
            )
        rows = cursor.fetchall()
    return [Hit(id=row[0], score=max(float(row[1]), 1e-9)) for row in rows]


def fact_search(subject_id: int, terms: list[str], *, limit: int = 50) -> list[Hit]:
    """Active facts of the subject matching any of `terms` in key, value or keywords."""
    if not terms:
        return []
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT f.id, -bm25(memory_profilefact_fts) FROM memory_profilefact_fts "
                "CROSS JOIN memory_profilefact f ON f.id = memory_profilefact_fts.rowid "
                "WHERE memory_profilefact_fts MATCH %s AND f.subject_id = %s AND f.valid_to IS NULL "
                "ORDER BY bm25(memory_profilefact_fts) LIMIT %s",
                [fts5_expression(terms), subject_id, limit],
            )
        else:
            vector = PG_VECTORS["memory_profilefact"]
            cursor.execute(
                f"SELECT f.id, ts_rank_cd({vector}, q) FROM memory_profilefact f, "
                "to_tsquery('english', %s) q "
                f"WHERE {vector} @@ q AND f.subject_id = %s AND f.valid_to IS NULL "
                "ORDER BY 2 DESC LIMIT %s",
                [tsquery_expression(terms), subject_id, limit],
            )
        rows = cursor.fetchall()
    return [Hit(id=row[0], score=max(float(row[1]), 1e-9)) for row in rows]


def _distilled_search(table: str, subject_id: int, terms: list[str], limit: int) -> list[Hit]:
    """Lessons or procedures of the subject for any of `terms`, best first (see note_search)."""
    if not terms or limit <= 0:
        return []
    fts = f"{table}_fts"
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            # the FTS index is read first and joined to the rows it found (CROSS JOIN keeps
            # SQLite from scanning every row of the subject and probing the index for each)
            cursor.execute(
                f"SELECT t.id, -bm25({fts}) AS score FROM {fts} "
                f"CROSS JOIN {table} t ON t.id = {fts}.rowid "
                f"WHERE {fts} MATCH %s AND t.subject_id = %s "
                f"ORDER BY bm25({fts}) LIMIT %s",
                [fts5_expression(terms), subject_id, limit],
            )
        else:
            vector = PG_VECTORS[table]
            cursor.execute(
                f"SELECT t.id, ts_rank_cd({vector}, q) AS score "
                f"FROM {table} t, to_tsquery('english', %s) q "
                f"WHERE {vector} @@ q AND t.subject_id = %s "
                "ORDER BY score DESC, t.id DESC LIMIT %s",
                [tsquery_expression(terms), subject_id, limit],
            )
        rows = cursor.fetchall()
    return [Hit(id=row[0], score=max(float(row[1]), 1e-9)) for row in rows]


def lesson_search(subject_id: int, terms: list[str], *, limit: int) -> list[Hit]:
    """Best `limit` lessons of the subject for any of `terms` (text and tags), best first."""
    return _distilled_search("memory_lesson", subject_id, terms, limit)


def procedure_search(subject_id: int, terms: list[str], *, limit: int) -> list[Hit]:
    """Best `limit` procedures of the subject for any of `terms` (title and steps), best first."""
    return _distilled_search("memory_procedure", subject_id, terms, limit)
