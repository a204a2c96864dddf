"""DDL for the full-text indexes, per database vendor. Used by the migrations and `reindex`.

SQLite: FTS5 external-content tables (porter tokenizer) over notes, facts, lessons,
procedures and evidence (the turns), kept in sync by triggers. The update triggers fire only when the indexed columns
change, so recall counters and votes never touch the index. PostgreSQL: GIN indexes over the
same tsvector expressions that the search queries use (for notes a stored generated column,
`PG_STORED`), under the text search configuration `memoryweb` (`PG_TS_CONFIG`): the original
Porter stemmer and no stop words, as FTS5's porter tokenizer, so a word matches the same notes
on both databases (PostgreSQL's own `english` is Snowball English and drops stop words).

The notes index also holds `subject_id` as a column of its own (one token per row), so a
search can narrow MATCH to one subject inside the index instead of ranking every subject's
matches and filtering afterwards. User terms are always restricted to the text columns
(`NOTE_TEXT_COLUMNS`), and ranking gives the subject column a weight of 0 (`NOTE_BM25`).

A migration installs the indexes of the tables that exist at that point: it passes `tables`
(content tables, e.g. ("memory_note",)), so an index added later never runs before its table,
and, where an index has changed since, the `Layout` of its own time (e.g. `LAYOUT_0027`), so
it never indexes a column added later.
"""

from collections.abc import Iterable
from dataclasses import dataclass

FTS_TABLES = {
    # fts table: (content table, indexed columns)
    "memory_note_fts": ("memory_note", ["content", "tags", "subject_id"]),
    "memory_profilefact_fts": ("memory_profilefact", ["key", "value", "keywords"]),
    "memory_lesson_fts": ("memory_lesson", ["text", "tags"]),
    "memory_procedure_fts": ("memory_procedure", ["title", "steps"]),
    # the turns themselves (memory.models.Evidence), laid out like notes: the speaker's name
    # (blank for most turns) and text, then the subject
    "memory_evidence_fts": ("memory_evidence", ["name", "text", "subject_id"]),
}

# the columns of memory_note_fts that user terms may match, and its bm25 with the subject
# column weighted 0 (a subject phrase in MATCH must not change the scores)
NOTE_TEXT_COLUMNS = "{content tags}"
NOTE_BM25 = "bm25(memory_note_fts, 1.0, 1.0, 0.0)"
# bm25 counts a row's length over all its columns and weighs each column's occurrences, so the
# name weighted as the text scores as one column "name text" would (PostgreSQL's tsvector)
EVIDENCE_TEXT_COLUMNS = "{name text}"
EVIDENCE_BM25 = "bm25(memory_evidence_fts, 1.0, 1.0, 0.0)"

# PostgreSQL's text search configuration for every index and query (see the module docstring)
PG_TS_CONFIG = "memoryweb"

# a DO block: CREATE TEXT SEARCH ... has no IF NOT EXISTS
PG_TS_SETUP = f"""
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_ts_dict WHERE dictname = '{PG_TS_CONFIG}_porter'
                   AND dictnamespace = current_schema()::regnamespace) THEN
        CREATE TEXT SEARCH DICTIONARY {PG_TS_CONFIG}_porter (TEMPLATE = snowball, Language = porter);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = '{PG_TS_CONFIG}'
                   AND cfgnamespace = current_schema()::regnamespace) THEN
        CREATE TEXT SEARCH CONFIGURATION {PG_TS_CONFIG} (COPY = english);
        ALTER TEXT SEARCH CONFIGURATION {PG_TS_CONFIG}
            ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
            WITH {PG_TS_CONFIG}_porter;
    END IF;
END $$
"""

PG_VECTORS = {
    "memory_note": f"to_tsvector('{PG_TS_CONFIG}', content || ' ' || tags::text)",
    "memory_profilefact": f"to_tsvector('{PG_TS_CONFIG}', key || ' ' || value || ' ' || keywords::text)",
    "memory_lesson": f"to_tsvector('{PG_TS_CONFIG}', text || ' ' || tags::text)",
    "memory_procedure": f"to_tsvector('{PG_TS_CONFIG}', title || ' ' || steps::text)",
    "memory_evidence": f"to_tsvector('{PG_TS_CONFIG}', name || ' ' || text)",
}

# Tables whose tsvector is a stored generated column (PostgreSQL): the note search ranks with
# BM25 (evidence too), which reads every matching note's vector, and counting a term over the whole table
# must not compute to_tsvector for every row. The column is not on the Django model: only the
# database writes it. Other tables index the expression itself.
PG_STORED = {"memory_note": "search_vector", "memory_evidence": "search_vector"}


def pg_vector(table: str) -> str:
    """What a PostgreSQL query compares with a tsquery for `table` (the indexed column or expression)."""
    return PG_STORED.get(table) or PG_VECTORS[table]


@dataclass(frozen=True)
class Layout:
    """What the indexes are: the FTS5 tables (SQLite) and the tsvector expressions (PostgreSQL)."""

    fts: dict[str, tuple[str, list[str]]]
    pg: dict[str, str]


CURRENT = Layout(FTS_TABLES, PG_VECTORS)
# the indexes up to migration 0027, before 0028 added the speaker's name to the evidence index:
# a migration runs against the tables of its own time, so the earlier ones build this layout
# (and going back from 0028 restores it)
LAYOUT_0027 = Layout(
    FTS_TABLES | {"memory_evidence_fts": ("memory_evidence", ["text", "subject_id"])},
    PG_VECTORS | {"memory_evidence": f"to_tsvector('{PG_TS_CONFIG}', text)"},
)


def _fts_tables(tables: Iterable[str] | None, layout: Layout = CURRENT) -> dict[str, tuple[str, list[str]]]:
    wanted = None if tables is None else set(tables)
    return {fts: spec for fts, spec in layout.fts.items() if wanted is None or spec[0] in wanted}


def _pg_vectors(tables: Iterable[str] | None, layout: Layout = CURRENT) -> dict[str, str]:
    wanted = None if tables is None else set(tables)
    return {table: expr for table, expr in layout.pg.items() if wanted is None or table in wanted}


def vocabulary_table(fts: str) -> str:
    """The fts5vocab table over an FTS5 index: its (stemmed) words, with how many rows hold
    each. A prefix search looks up the words a prefix begins there (memory.search.lexical)."""
    return f"{fts}_vocab"


def sqlite_statements(tables: Iterable[str] | None = None, layout: Layout = CURRENT) -> list[str]:
    statements = []
    for fts, (table, columns) in _fts_tables(tables, layout).items():
        cols = ", ".join(columns)
        new = ", ".join(f"new.{c}" for c in columns)
        old = ", ".join(f"old.{c}" for c in columns)
        statements += [
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5({cols}, content='{table}', "
            f"content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')",
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocabulary_table(fts)} USING fts5vocab({fts}, 'row')",
            f"CREATE TRIGGER IF NOT EXISTS {fts}_ai AFTER INSERT ON {table} BEGIN "
            f"INSERT INTO {fts}(rowid, {cols}) VALUES (new.id, {new}); END",
            f"CREATE TRIGGER IF NOT EXISTS {fts}_ad AFTER DELETE ON {table} BEGIN "
            f"INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.id, {old}); END",
            f"CREATE TRIGGER IF NOT EXISTS {fts}_au AFTER UPDATE OF {cols} ON {table} BEGIN "
            f"INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.id, {old}); "
            f"INSERT INTO {fts}(rowid, {cols}) VALUES (new.id, {new}); END",
        ]
    return statements


def sqlite_drop_statements(tables: Iterable[str] | None = None) -> list[str]:
    statements = []
    for fts in _fts_tables(tables):
        statements += [f"DROP TRIGGER IF EXISTS {fts}_{s}" for s in ("ai", "ad", "au")]
        statements.append(f"DROP TABLE IF EXISTS {vocabulary_table(fts)}")
        statements.append(f"DROP TABLE IF EXISTS {fts}")
    return statements


def postgres_statements(tables: Iterable[str] | None = None, layout: Layout = CURRENT) -> list[str]:
    statements = [PG_TS_SETUP]
    for table, expr in _pg_vectors(tables, layout).items():
        if table in PG_STORED:
            statements.append(
                f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {PG_STORED[table]} tsvector "
                f"GENERATED ALWAYS AS ({expr}) STORED"
            )
        statements.append(f"CREATE INDEX IF NOT EXISTS {table}_fts ON {table} USING GIN ({pg_vector(table)})")
    return statements


def postgres_drop_statements(tables: Iterable[str] | None = None) -> list[str]:
    statements = []
    for table in _pg_vectors(tables):
        statements.append(f"DROP INDEX IF EXISTS {table}_fts")
        if table in PG_STORED:
            statements.append(f"ALTER TABLE {table} DROP COLUMN IF EXISTS {PG_STORED[table]}")
    return statements


def install(connection, tables: Iterable[str] | None = None, layout: Layout = CURRENT) -> None:
    """Create the indexes (of `tables` only, when given) that do not exist yet, as `layout` has them."""
    statements = (
        sqlite_statements(tables, layout)
        if connection.vendor == "sqlite"
        else postgres_statements(tables, layout)
    )
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def uninstall(connection, tables: Iterable[str] | None = None) -> None:
    statements = (
        sqlite_drop_statements(tables) if connection.vendor == "sqlite" else postgres_drop_statements(tables)
    )
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def rebuild(connection) -> None:
    """Recreate triggers that a table rebuild dropped and re-fill the indexes from the tables."""
    install(connection)
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            for fts in FTS_TABLES:
                cursor.execute(f"INSERT INTO {fts}({fts}) VALUES ('rebuild')")


def reindex(connection) -> list[str]:
    """Rebuild every full-text index from its table (the admin reindex): on SQLite each FTS5
    index refilled ('rebuild', after recreating missing triggers), on PostgreSQL each GIN index
    recreated if missing and rebuilt (REINDEX INDEX; the stored tsvector columns are generated,
    so they are always current). Returns the indexes rebuilt. Safe to repeat."""
    if connection.vendor == "sqlite":
        rebuild(connection)
        return sorted(FTS_TABLES)
    indexes = sorted(f"{table}_fts" for table in PG_VECTORS)
    with connection.cursor() as cursor:
        # DDL refuses a table with deferred constraint checks pending in this transaction
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        # the indexes only: the configuration and the generated columns are the migrations'
        for sql in postgres_statements():
            if sql.startswith("CREATE INDEX"):
                cursor.execute(sql)
        for index in indexes:
            cursor.execute(f"REINDEX INDEX {index}")
    return indexes


def purge(connection) -> None:
    """Drop what deleted rows left inside the SQLite indexes: an FTS5 delete only adds a
    tombstone, and the deleted row's terms stay in the older segments until they are merged, so
    after erasing a subject each index is merged into one segment (`optimize`). The cost is a
    rewrite of each index, which an erasure is worth. PostgreSQL's GIN entries go with the rows."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            for fts in FTS_TABLES:
                cursor.execute(f"INSERT INTO {fts}({fts}) VALUES ('optimize')")


def missing_triggers(connection) -> list[str]:
    if connection.vendor != "sqlite":
        return []
    expected = {f"{fts}_{s}" for fts in FTS_TABLES for s in ("ai", "ad", "au")}
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        present = {row[0] for row in cursor.fetchall()}
    return sorted(expected - present)
