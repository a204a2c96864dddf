"""Lexical search over notes, evidence (the turns), facts, lessons and procedures: FTS5 on SQLite, tsvector on PostgreSQL.

User text never reaches MATCH (or to_tsquery) as syntax: it is cut into word tokens, stop words
are dropped, and each remaining term is quoted and OR-ed. An implicit AND of every word in a
question finds almost nothing in conversational memory (see shared/bench/README.md).

A term that ends in PREFIX matches every word it begins (FTS5 `"postg"*`, tsquery `'postg':*`):
`typed_terms` marks the word a person is still typing in a search box that way, so "postg"
finds PostgreSQL before the word is finished.
"""

from dataclasses import dataclass, field

from django.db import connection

from memory.search.schema import (
    EVIDENCE_BM25,
    EVIDENCE_TEXT_COLUMNS,
    NOTE_BM25,
    NOTE_TEXT_COLUMNS,
    PG_TS_CONFIG,
    pg_vector,
    vocabulary_table,
)
from memory.text import TOKEN_RE, query_terms
from memoryweb.db import placeholders

PREFIX = "*"


def typed_terms(text: str) -> list[str]:
    """The search terms of `text` as a person types it (`query_terms`), the last word marked
    as a prefix (PREFIX) when the text ends inside it: "best postg" → ["best", "postg*"]. A
    word followed by a space or punctuation is finished and matches as a word."""
    terms = query_terms(text)
    if terms and TOKEN_RE.fullmatch(text[-1:]):
        last = TOKEN_RE.findall(text.lower())[-1]
        terms = [f"{t}{PREFIX}" if t == last else t for t in terms]
    return terms


def term_word(term: str) -> str:
    """The word of a term, without its prefix mark."""
    return term.removesuffix(PREFIX)


def fts5_phrase(term: str) -> str:
    # a quoted FTS5 string, its quotes doubled (tokens hold none: memory.text.TOKEN_RE is \w
    # only, but nothing else may turn a term into syntax either)
    word = term_word(term).replace('"', '""')
    return f'"{word}"*' if term.endswith(PREFIX) else f'"{word}"'


def fts5_expression(terms: list[str], column: str | None = None) -> str:
    quoted = " OR ".join(fts5_phrase(t) for t in terms)
    return f"{column} : ({quoted})" if column else quoted


def tsquery_term(term: str) -> str:
    # a quoted tsquery operand, its quotes and backslashes escaped (see fts5_phrase)
    word = term_word(term).replace("\\", "\\\\").replace("'", "''")
    return f"'{word}':*" if term.endswith(PREFIX) else f"'{word}'"


def tsquery_expression(terms: list[str]) -> str:
    return " | ".join(tsquery_term(t) for t in terms)


def pg_tsquery(terms: list[str]) -> tuple[str, list[str]]:
    """SQL for the tsquery of `terms` on PostgreSQL, and its parameters. A prefix is stemmed as
    the index's words are (the `memoryweb` configuration: "happ" begins "happi", happiness's
    stem) and also asked of the `simple` configuration, unstemmed: Porter stems the prefix
    "kay" to "kai", which begins no stem of "kayak"."""
    sql, params = f"to_tsquery('{PG_TS_CONFIG}', %s)", [tsquery_expression(terms)]
    prefixes = [t for t in terms if t.endswith(PREFIX)]
    if prefixes:
        sql = f"({sql} || to_tsquery('simple', %s))"
        params.append(tsquery_expression(prefixes))
    return sql, params


# how many of the index's words one prefix may stand for (SQLite: _prefix_words), most
# frequent first
PREFIX_WORDS = 16


def _prefix_words(cursor, fts: str, terms: list[str]) -> list[str]:
    """`terms` with, after each prefix, the words of the FTS5 index `fts` that it begins
    (its fts5vocab table, memory.search.schema.vocabulary_table): FTS5's porter tokenizer stems
    the prefix of a query as well, and the prefix "kay" stemmed ("kai") begins no stem of
    "kayak". The words themselves are stems already ("happi"), so matched as words."""
    if not any(t.endswith(PREFIX) for t in terms):
        return terms
    expanded = list(terms)
    for term in terms:
        if not term.endswith(PREFIX):
            continue
        word = term_word(term)
        cursor.execute(
            f"SELECT term FROM {vocabulary_table(fts)} WHERE term >= %s AND term < %s "
            "ORDER BY doc DESC, term LIMIT %s",
            [word, word + "\U0010ffff", PREFIX_WORDS],
        )
        expanded += [w for (w,) in cursor.fetchall() if TOKEN_RE.fullmatch(w) and w not in expanded]
    return expanded


@dataclass(frozen=True)
class TextIndex:
    """A full-text index searched the way notes are (`note_search`): its content table, FTS5
    table, the columns user terms may match and its bm25 (the subject column weighted 0)."""

    table: str
    fts: str
    text_columns: str
    bm25: str


NOTE_INDEX = TextIndex("memory_note", "memory_note_fts", NOTE_TEXT_COLUMNS, NOTE_BM25)
EVIDENCE_INDEX = TextIndex("memory_evidence", "memory_evidence_fts", EVIDENCE_TEXT_COLUMNS, EVIDENCE_BM25)


@dataclass
class NoteFilter:
    scope: str | None = None
    scopes: list[str] | None = None
    working_dir: str | None = None
    mode: str | None = None  # the note's mode qualifier ("" = unqualified)
    tags: list[str] = field(default_factory=list)
    include_archived: bool = False
    # parked notes (the person set them aside) are kept but never retrieved; only the
    # dashboard's own list asks for them
    include_parked: bool = False


@dataclass
class Hit:
    id: int
    score: float  # higher is better, always > 0
    matched: list[str] = field(default_factory=list)


def _note_filter_sql(filters: NoteFilter, alias: str = "n") -> tuple[list[str], list]:
    where, params = [], []
    if not filters.include_archived:
        where.append(f"{alias}.archived_at IS NULL")
    if not filters.include_parked:
        where.append(f"{alias}.parked_at IS NULL")
    if filters.scope is not None:
        where.append(f"{alias}.scope = %s")
        params.append(filters.scope)
    if filters.scopes is not None:
        where.append(f"{alias}.scope IN ({placeholders(filters.scopes)})")
        params.extend(filters.scopes)
    if filters.working_dir is not None:
        where.append(f"{alias}.working_dir = %s")
        params.append(filters.working_dir)
    if filters.mode is not None:
        where.append(f"{alias}.mode = %s")
        params.append(filters.mode)
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
    if not filters.include_parked:
        queryset = queryset.filter(parked_at__isnull=True)
    if filters.scope is not None:
        queryset = queryset.filter(scope=filters.scope)
    if filters.scopes is not None:
        queryset = queryset.filter(scope__in=filters.scopes)
    if filters.working_dir is not None:
        queryset = queryset.filter(working_dir=filters.working_dir)
    if filters.mode is not None:
        queryset = queryset.filter(mode=filters.mode)
    for tag in filters.tags:
        if connection.vendor == "sqlite":
            queryset = queryset.extra(
                where=["EXISTS (SELECT 1 FROM json_each(memory_note.tags) WHERE json_each.value = %s)"],
                params=[tag],
            )
        else:
            queryset = queryset.filter(tags__contains=[tag])
    return queryset


# How many rows bm25 may rank in one note search on SQLite. Below it the search is exact; above
# it, the candidates are narrowed by rarity (see _note_plan).
RANK_BUDGET = 4000


@dataclass
class _Plan:
    """One FTS5 note query: its MATCH expression, the factor by which that expression's bm25
    exceeds the bm25 of the plain OR of all terms, an optional lower rowid bound, and how many
    rows the expression matches when the plan counted them."""

    expression: str
    multiplier: int = 1
    min_rowid: int | None = None
    rows: int | None = None
    # the notes the candidates left out (they match only common terms), for when the
    # candidates are too few: `C NOT E`, whose bm25 is exactly the plain OR's for those notes
    rest: str | None = None


def _any_of(terms: list[str], index: TextIndex = NOTE_INDEX) -> str:
    return f"{index.text_columns} : ({fts5_expression(terms)})"


def _fts5_counts(cursor, expressions: list[str], index: TextIndex = NOTE_INDEX) -> list[int]:
    """Rows of the FTS table matching each expression (counting never runs bm25)."""
    count = f"(SELECT count(*) FROM {index.fts} WHERE {index.fts} MATCH %s)"
    cursor.execute("SELECT " + ", ".join([count] * len(expressions)), expressions)
    return [int(n) for n in cursor.fetchone()]


def _fts5_counts_narrowed(
    cursor, everything: str, subject: str, *, above: int, index: TextIndex = NOTE_INDEX
) -> tuple[int, int | None]:
    """Rows of the index matching `everything`, and, only when those are more than `above`,
    the rows of the subject among them: one statement (SQLite runs the CASE's subquery only
    when it is asked for)."""
    count = f"(SELECT count(*) FROM {index.fts} WHERE {index.fts} MATCH %s)"
    cursor.execute(
        f"SELECT g, CASE WHEN g > %s THEN {count} END FROM (SELECT {count} AS g)",
        [above, f"{subject} AND {everything}", everything],
    )
    global_rows, subject_rows = cursor.fetchone()
    return int(global_rows), None if subject_rows is None else int(subject_rows)


def _first_depth(limit: int) -> int:
    """How many of bm25's best rows the ranked query's first pass joins (_fts5_ranked)."""
    return max(limit * 2, 50)


def _note_plan(
    cursor,
    subject_id: int,
    terms: list[str],
    *,
    budget: int,
    rarest: int | None,
    depth: int,
    index: TextIndex = NOTE_INDEX,
) -> _Plan:
    """Choose how to run a note search so that bm25 ranks at most about `budget` rows.

    bm25 costs a few microseconds per matching row, and an OR of common words matches tens of
    thousands of a large subject's notes. So:
    1. when the whole index, or else the subject alone, has at most `budget` matches, the plain
       OR runs (the subject phrase `subject_id : "N"` narrows MATCH to the subject when the
       subject is a small part of the index, else the join filters it; the subject is not
       counted when the whole index has at most `depth` matches (the first pass's) and at
       most `budget`): exact;
    2. otherwise the rarest terms (by document frequency) whose matches fit the budget pick
       the candidates, and every candidate is ranked by all the terms: the expression
       `E AND (E OR C OR C)` repeats every phrase exactly twice, so its bm25 is exactly twice
       that of the plain OR. Notes that match only common terms are left out;
    3. when even the rarest term matches more than the budget, its newest `budget` matches are
       the candidates (a lower rowid bound).
    If step 2's candidates are fewer than the search's limit, the newest `budget` notes that
    match only the other terms fill the ranking (`_Plan.rest`).
    With `rarest` (the near-duplicate search) the candidates are always exactly the notes that
    match one of the `rarest` rarest terms, ranked by those terms alone: no counting of the
    whole query, and rarity is estimated on the newest RARITY_WINDOW notes (any choice of
    terms keeps every duplicate among the candidates; rarer ones just make fewer).
    """
    if rarest is not None:
        frequency, whole = _window_counts(cursor, terms, index)
        if whole and sum(frequency) <= budget:
            return _Plan(_any_of(terms, index))  # a small index: the plain query, exact
        order = sorted(range(len(terms)), key=lambda i: (frequency[i], i))
        return _Plan(_any_of([terms[i] for i in sorted(order[: max(rarest, 1)])], index))
    everything = _any_of(terms, index)
    subject = f'subject_id : "{int(subject_id)}"'
    global_rows, subject_rows = _fts5_counts_narrowed(
        cursor, everything, subject, above=min(depth, budget), index=index
    )
    if subject_rows is None:  # every match fits the budget and the ranked query's first pass
        return _Plan(everything, rows=global_rows)
    # the subject phrase pays off when it drops most rows; for a subject that holds most of
    # the index, the join is cheaper than intersecting with its (long) subject doclist. Its
    # column weighs 0 in NOTE_BM25, so it changes no score: the plan stays exact, and the
    # ranked query's first pass sees only the subject's rows (not a pass that comes short)
    narrow = subject_rows * 2 < global_rows
    prefix = f"{subject} AND " if narrow else ""
    if global_rows <= budget or subject_rows <= budget:
        return _Plan(prefix + everything, rows=subject_rows if narrow else global_rows)
    rows_per_match = subject_rows / global_rows if narrow else 1.0
    frequency = _fts5_counts(cursor, [f"{index.text_columns} : {fts5_phrase(t)}" for t in terms], index)
    order = sorted(range(len(terms)), key=lambda i: (frequency[i], i))
    chosen: list[int] = []
    rows = 0.0
    for i in order:
        if chosen and rows + frequency[i] * rows_per_match > budget:
            break
        chosen.append(i)
        rows += frequency[i] * rows_per_match
    seeds = [terms[i] for i in sorted(chosen)]
    rest = [t for i, t in enumerate(terms) if i not in set(chosen)]
    plan = _Plan(prefix + _any_of(seeds, index))
    if rest:
        plan = _Plan(f"{plan.expression} AND {_any_of([*seeds, *rest, *rest], index)}", multiplier=2)
        plan.rest = f"{prefix}{_any_of(rest, index)} NOT {_any_of(seeds, index)}"
    if frequency[chosen[0]] * rows_per_match > budget:
        plan.min_rowid = _newest_bound(cursor, prefix + _any_of(seeds, index), budget, index)
        plan.rest = None  # `budget` candidates are plenty
    return plan


# how many of the newest notes the near-duplicate search counts its terms in
RARITY_WINDOW = 8192


def _window_counts(cursor, terms: list[str], index: TextIndex = NOTE_INDEX) -> tuple[list[int], bool]:
    """Matches of each term among the newest RARITY_WINDOW rows of the index (a rarity
    estimate that costs a fraction of counting a large index), and whether the window holds
    the whole index (the counts are then exact)."""
    cursor.execute(f"SELECT max(id) FROM {index.table}")
    newest = cursor.fetchone()[0] or 0
    count = f"(SELECT count(*) FROM {index.fts} WHERE {index.fts} MATCH %s AND rowid > %s)"
    params: list = []
    for term in terms:
        params += [f"{index.text_columns} : {fts5_phrase(term)}", newest - RARITY_WINDOW]
    cursor.execute("SELECT " + ", ".join([count] * len(terms)), params)
    return [int(n) for n in cursor.fetchone()], newest <= RARITY_WINDOW


def _newest_bound(cursor, expression: str, budget: int, index: TextIndex = NOTE_INDEX) -> int | None:
    """The lowest rowid among the newest `budget` matches of `expression` (None: fewer match)."""
    cursor.execute(
        f"SELECT rowid FROM {index.fts} WHERE {index.fts} MATCH %s ORDER BY rowid DESC LIMIT 1 OFFSET %s",
        [expression, budget - 1],
    )
    row = cursor.fetchone()
    return row[0] if row else None


def note_search(
    subject_id: int,
    terms: list[str],
    *,
    limit: int,
    filters: NoteFilter | None = None,
    budget: int | None = None,
    rarest: int | None = None,
) -> list[Hit]:
    """Best `limit` notes of the subject for any of `terms`, best first.

    Exact while the subject has at most `budget` (default RANK_BUDGET) matches; above that
    (SQLite) the candidates are the notes that match the rarest terms, ranked by all of them
    (see _note_plan).
    `rarest=m` makes the candidates exactly the notes that match one of the m rarest terms: a
    near-duplicate search uses it (a note holding 80 % of the words holds one of any 20 %+1).
    """
    where, params = _note_filter_sql(filters or NoteFilter())
    return _indexed_search(NOTE_INDEX, subject_id, terms, limit, where, params, budget=budget, rarest=rarest)


def evidence_filter_sql(scopes: list[str] | None) -> tuple[list[str], list]:
    """What a retrievable evidence unit is (alias `n`): visible, not archived, and in one of
    `scopes` when they are given (a conversation's scope, as for notes)."""
    where, params = ["n.status = 'visible'", "n.archived_at IS NULL"], []
    if scopes is not None:
        where.append(f"n.scope IN ({placeholders(scopes)})")
        params.extend(scopes)
    return where, params


def evidence_search(
    subject_id: int,
    terms: list[str],
    *,
    limit: int,
    scopes: list[str] | None = None,
    budget: int | None = None,
) -> list[Hit]:
    """Best `limit` retrievable evidence units (turns) of the subject for any of `terms`, best
    first (`evidence_filter_sql`); searched exactly as notes are (`note_search`)."""
    where, params = evidence_filter_sql(scopes)
    return _indexed_search(EVIDENCE_INDEX, subject_id, terms, limit, where, params, budget=budget)


def _indexed_search(
    index: TextIndex,
    subject_id: int,
    terms: list[str],
    limit: int,
    where: list[str],
    params: list,
    *,
    budget: int | None = None,
    rarest: int | None = None,
) -> list[Hit]:
    """Best `limit` rows of `index` of the subject for any of `terms` that pass `where` (SQL
    over the alias `n`), best first: the note search's plan (SQLite) or BM25 (PostgreSQL)."""
    if not terms or limit <= 0:
        return []
    extra = "".join(f" AND {w}" for w in where)
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            terms = _prefix_words(cursor, index.fts, terms)
            budget = RANK_BUDGET if budget is None else max(budget, 1)
            plan = _note_plan(
                cursor,
                subject_id,
                terms,
                budget=budget,
                rarest=rarest,
                depth=_first_depth(limit),
                index=index,
            )
            rows = _fts5_ranked(cursor, plan, subject_id, where, params, limit, index)
            if len(rows) < limit and plan.rest is not None:
                rest = _Plan(plan.rest, min_rowid=_newest_bound(cursor, plan.rest, budget, index))
                more = _fts5_ranked(cursor, rest, subject_id, where, params, limit - len(rows), index)
                rows = sorted([*rows, *more], key=lambda row: (-row[1], -row[0]))
        else:
            cursor.execute(*_postgres_bm25(subject_id, terms, extra, params, limit, index.table))
            rows = cursor.fetchall()
    return [Hit(id=row[0], score=max(float(row[1]), 1e-9)) for row in rows]


# how many of the newest notes give the average note length
_PG_AVGDL_SAMPLE = 1000


def _postgres_bm25(
    subject_id: int, terms: list[str], extra: str, params: list, limit: int, table: str = "memory_note"
) -> tuple:
    """BM25 over the GIN matches on PostgreSQL, computed as FTS5's bm25 computes it.

    ts_rank_cd has no inverse document frequency, so a common word weighs as much as a rare
    one (LoCoMo recall@10 three points under SQLite's). Here, as in FTS5, every term adds
    idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl)), k1 = 1.2, b = 0.75, with
    idf = ln((N − n + 0.5) / (n + 0.5)) (at least 1e-6), tf the term's occurrences in the
    note, dl the note's length in distinct words (`length(tsvector)`, read from the vector's
    header; counting positions cost more than the rest of the query) and avgdl its mean over
    the newest notes. N and n count the whole notes table, as FTS5 counts its whole index:
    one GIN scan over the OR of the terms gives every n (`count(*) FILTER`). Counting within the subject instead was a
    point of LoCoMo recall lower, mostly on names: the people of one conversation are in
    most of its turns but rare elsewhere.
    """
    vector = pg_vector(table)  # the stored, GIN-indexed tsvector column
    query, query_params = pg_tsquery(terms)
    term_queries = [pg_tsquery([t]) for t in terms]
    counts = ", ".join(
        f"count(*) FILTER (WHERE {vector} @@ {sql}) AS d{i}" for i, (sql, _) in enumerate(term_queries)
    )
    # occurrences of term i in the note: the positions of its lexeme(s), all terms in one
    # pass over the note's lexemes
    # (a prefix term: the lexemes that begin with its stemmed word or with the word itself, as
    # pg_tsquery's two `:*` match)
    tfs = ", ".join(
        "coalesce(sum(array_length(u.positions, 1)) FILTER (WHERE "
        + (
            f"starts_with(u.lexeme, (tsvector_to_array(to_tsvector('{PG_TS_CONFIG}', %s)))[1]) "
            "OR starts_with(u.lexeme, lower(%s))"
            if term.endswith(PREFIX)
            else f"u.lexeme = ANY(tsvector_to_array(to_tsvector('{PG_TS_CONFIG}', %s)))"
        )
        + f"), 0) AS f{i}"
        for i, term in enumerate(terms)
    )
    score = " + ".join(
        f"(CASE WHEN f{i} > 0 THEN greatest(ln((g.total - g.d{i} + 0.5) / (g.d{i} + 0.5)), 1e-6) "
        f"* f{i} * 2.2 / (f{i} + 1.2 * (0.25 + 0.75 * t.dl / g.avgdl)) ELSE 0 END)"
        for i in range(len(terms))
    )
    # every CTE is MATERIALIZED: inlined, the planner would evaluate g's counts and t's term
    # frequencies once per use in the score instead of once
    sql = (
        f"WITH m AS MATERIALIZED (SELECT n.id, n.{vector} AS v FROM {table} n "
        f"WHERE n.{vector} @@ {query} AND n.subject_id = %s{extra}), "
        f"t AS MATERIALIZED (SELECT m.id, greatest(length(m.v), 1) AS dl, f.* "
        f"FROM m CROSS JOIN LATERAL (SELECT {tfs} FROM unnest(m.v) u) f), "
        f"g AS MATERIALIZED (SELECT d.*, (SELECT count(*) FROM {table})::float AS total, "
        f"(SELECT greatest(avg(length({vector})), 1) FROM (SELECT {vector} FROM {table} "
        f"ORDER BY id DESC LIMIT {_PG_AVGDL_SAMPLE}) recent) AS avgdl "
        f"FROM (SELECT {counts} FROM {table} WHERE {vector} @@ {query}) d) "
        f"SELECT t.id, {score} AS score FROM t CROSS JOIN g ORDER BY score DESC, t.id DESC LIMIT %s"
    )
    count_params = [p for _, term_params in term_queries for p in term_params]
    tf_params = [p for t in terms for p in ([term_word(t)] * (2 if t.endswith(PREFIX) else 1))]
    return sql, [*query_params, subject_id, *params, *tf_params, *count_params, *query_params, limit]


def _fts5_ranked(
    cursor,
    plan: _Plan,
    subject_id: int,
    where: list[str],
    params: list,
    limit: int,
    index: TextIndex = NOTE_INDEX,
) -> list:
    """(id, score) of the best `limit` rows of the plan that pass the subject and filters.

    bm25 ranks inside the FTS table and only its best `depth` rows are joined to memory_note
    for the subject and the filters; if fewer than `limit` of them pass, a deeper pass follows
    (the last one without a depth). Joining every candidate would cost as much as ranking it.
    """
    bound = f" AND {index.fts}.rowid >= %s" if plan.min_rowid is not None else ""
    bound_params = [plan.min_rowid] if plan.min_rowid is not None else []
    extra = "".join(f" AND {w}" for w in where)
    depth: int | None = _first_depth(limit)
    while True:
        if depth is not None and plan.rows is not None and plan.rows <= depth:
            depth = None  # every match fits: one pass
        cursor.execute(
            f"SELECT n.id, -f.bm / %s FROM (SELECT rowid AS id, {index.bm25} AS bm "
            f"FROM {index.fts} WHERE {index.fts} MATCH %s{bound} "
            f"ORDER BY bm{' LIMIT %s' if depth is not None else ''}) f "
            f"CROSS JOIN {index.table} n ON n.id = f.id "
            f"WHERE n.subject_id = %s{extra} ORDER BY f.bm, n.id DESC LIMIT %s",
            [
                float(plan.multiplier),
                plan.expression,
                *bound_params,
                *([depth] if depth is not None else []),
                subject_id,
                *params,
                limit,
            ],
        )
        rows = cursor.fetchall()
        if len(rows) >= limit or depth is None:
            return rows
        depth = depth * 8 if depth < 20_000 else None


def fact_keyword_search(subject_id: int, terms: list[str], *, limit: int = 50) -> list[Hit]:
    """Active (unparked) contextual facts of the subject whose keywords match any of `terms` (stemmed)."""
    if not terms:
        return []
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT f.id, -bm25(memory_profilefact_fts) FROM memory_profilefact_fts "
                "CROSS JOIN memory_profilefact f ON f.id = memory_profilefact_fts.rowid "
                "WHERE memory_profilefact_fts MATCH %s AND f.subject_id = %s "
                "AND f.valid_to IS NULL AND f.parked_at IS NULL AND f.pinned = 0 "
                "ORDER BY bm25(memory_profilefact_fts) LIMIT %s",
                [fts5_expression(terms, column="keywords"), subject_id, limit],
            )
        else:
            cursor.execute(
                f"SELECT f.id, ts_rank_cd(to_tsvector('{PG_TS_CONFIG}', f.keywords::text), q) FROM "
                f"memory_profilefact f, to_tsquery('{PG_TS_CONFIG}', %s) q "
                f"WHERE to_tsvector('{PG_TS_CONFIG}', f.keywords::text) @@ q AND f.subject_id = %s "
                "AND f.valid_to IS NULL AND f.parked_at IS NULL AND NOT f.pinned ORDER BY 2 DESC LIMIT %s",
                [tsquery_expression(terms), subject_id, limit],
            )
        rows = cursor.fetchall()
    return [Hit(id=row[0], score=max(float(row[1]), 1e-9)) for row in rows]


def fact_search(
    subject_id: int, terms: list[str], *, limit: int = 50, include_parked: bool = False
) -> list[Hit]:
    """Active facts of the subject matching any of `terms` in key, value or keywords; parked
    ones only with `include_parked` (the dashboard's search, when the person asks for them)."""
    if not terms:
        return []
    parked = "" if include_parked else " AND f.parked_at IS NULL"
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            terms = _prefix_words(cursor, "memory_profilefact_fts", terms)
            cursor.execute(
                "SELECT f.id, -bm25(memory_profilefact_fts) FROM memory_profilefact_fts "
                "CROSS JOIN memory_profilefact f ON f.id = memory_profilefact_fts.rowid "
                "WHERE memory_profilefact_fts MATCH %s AND f.subject_id = %s AND f.valid_to IS NULL"
                f"{parked} ORDER BY bm25(memory_profilefact_fts) LIMIT %s",
                [fts5_expression(terms), subject_id, limit],
            )
        else:
            vector = pg_vector("memory_profilefact")
            query, query_params = pg_tsquery(terms)
            cursor.execute(
                f"SELECT f.id, ts_rank_cd({vector}, s.q) FROM memory_profilefact f, (SELECT {query} AS q) s "
                f"WHERE {vector} @@ s.q AND f.subject_id = %s AND f.valid_to IS NULL{parked} "
                "ORDER BY 2 DESC, f.id DESC LIMIT %s",
                [*query_params, subject_id, limit],
            )
        rows = cursor.fetchall()
    return [Hit(id=row[0], score=max(float(row[1]), 1e-9)) for row in rows]


def _distilled_search(
    table: str, subject_id: int, terms: list[str], limit: int, include_parked: bool = False
) -> list[Hit]:
    """Lessons or procedures of the subject for any of `terms`, best first (see note_search);
    parked ones only with `include_parked` (the dashboard's lists and search, when the person
    asks for them)."""
    if not terms or limit <= 0:
        return []
    fts = f"{table}_fts"
    parked = "" if include_parked else " AND t.parked_at IS NULL"
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            terms = _prefix_words(cursor, fts, terms)
            # the FTS index is read first and joined to the rows it found (CROSS JOIN keeps
            # SQLite from scanning every row of the subject and probing the index for each)
            cursor.execute(
                f"SELECT t.id, -bm25({fts}) AS score FROM {fts} "
                f"CROSS JOIN {table} t ON t.id = {fts}.rowid "
                f"WHERE {fts} MATCH %s AND t.subject_id = %s{parked} "
                f"ORDER BY bm25({fts}) LIMIT %s",
                [fts5_expression(terms), subject_id, limit],
            )
        else:
            vector = pg_vector(table)
            query, query_params = pg_tsquery(terms)
            cursor.execute(
                f"SELECT t.id, ts_rank_cd({vector}, s.q) AS score "
                f"FROM {table} t, (SELECT {query} AS q) s "
                f"WHERE {vector} @@ s.q AND t.subject_id = %s{parked} "
                "ORDER BY score DESC, t.id DESC LIMIT %s",
                [*query_params, subject_id, limit],
            )
        rows = cursor.fetchall()
    return [Hit(id=row[0], score=max(float(row[1]), 1e-9)) for row in rows]


def lesson_search(
    subject_id: int, terms: list[str], *, limit: int, include_parked: bool = False
) -> list[Hit]:
    """Best `limit` lessons of the subject for any of `terms` (text and tags), best first;
    parked ones only with `include_parked`."""
    return _distilled_search("memory_lesson", subject_id, terms, limit, include_parked)


def procedure_search(
    subject_id: int, terms: list[str], *, limit: int, include_parked: bool = False
) -> list[Hit]:
    """Best `limit` procedures of the subject for any of `terms` (title and steps), best first;
    parked ones only with `include_parked`."""
    return _distilled_search("memory_procedure", subject_id, terms, limit, include_parked)
