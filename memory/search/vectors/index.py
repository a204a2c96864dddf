"""The vector index tables beside memory_embedding: vec0 on SQLite, pgvector on PostgreSQL
(see memory.search.vectors). Also which of them this database has."""

import hashlib
import logging

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from memoryweb.db import placeholders
from memoryweb.db.sqlite.base import EXTENSION_STATUS

logger = logging.getLogger(__name__)

VEC0_CHUNK_SIZE = 32  # 32 × (48 B bits + 384 B int8 + 8 B rowid) ≈ 14 KB reserved per subject

_pgvector_available: dict[str, bool] = {}  # alias -> can the extension be used


def _setting() -> str:
    value = settings.MEMORYWEB_VECTOR_SEARCH.strip().lower()
    if value not in ("auto", "numpy"):
        raise ValueError(f"MEMORYWEB_VECTOR_SEARCH={value!r}: use auto or numpy")
    return value


def vec0_loaded() -> bool:
    if connection.vendor != "sqlite":
        return False
    connection.ensure_connection()

    return bool(EXTENSION_STATUS.get("vec"))


def pgvector_available() -> bool:
    """Whether this PostgreSQL database has pgvector (migration 0022 creates it where the
    server offers it); asked once per process."""
    if connection.vendor != "postgresql":
        return False
    alias = connection.alias
    if alias not in _pgvector_available:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
            ok = cursor.fetchone() is not None
        if not ok:
            logger.warning(
                "pgvector is not in this database (see docs/deployment.md); vector search is brute force"
            )
        _pgvector_available[alias] = ok
    return _pgvector_available[alias]


def backend() -> str:
    """ "vec0", "pgvector" or "numpy": the index this process searches."""
    if _setting() == "numpy":
        return "numpy"
    if vec0_loaded():
        return "vec0"
    if pgvector_available():
        return "pgvector"
    return "numpy"


def index_table(model_id: str) -> str:
    return "memory_vec_" + hashlib.sha1(model_id.encode()).hexdigest()[:12]


def _table_exists(table: str) -> bool:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", [table])
        else:
            cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [table])
            return bool(cursor.fetchone()[0])
        return cursor.fetchone() is not None


# --- index maintenance (called by memory.services.embeddings) --------------------------------

# int8 copy of a unit vector: round(x × 200), clipped to ±127 (components beyond ±0.635 are
# clipped; all-MiniLM-L6-v2's stay far inside). Cosines from it are within ~0.003 of the floats.
INT8_SCALE = 200.0


def int8_copy(matrix: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(np.asarray(matrix, dtype=np.float32) * INT8_SCALE), -127, 127).astype(np.int8)


def index_ensure(model_id: str, dim: int) -> str | None:
    """Create the model's index table (and its trigger) when missing, filled from the
    Embedding rows already stored. Returns the table, or None when this database has no
    index (brute force). Safe to repeat."""
    kind = backend()
    table = index_table(model_id)
    if kind == "numpy" or (kind == "vec0" and dim % 8):
        return None
    if _table_exists(table) and (kind == "pgvector" or _trigger_exists(f"{table}_ad")):
        if kind == "pgvector":
            _pg_table_ensure(table, dim)
        return table
    with connection.cursor() as cursor:
        if kind == "vec0":
            # rowid = the note's id; one partition per subject
            cursor.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0(subject_id integer partition key, "
                f"embedding bit[{dim}], fine int8[{dim}], chunk_size={VEC0_CHUNK_SIZE})"
            )
            quoted = model_id.replace("'", "''")
            cursor.execute(
                f"CREATE TRIGGER IF NOT EXISTS {table}_ad AFTER DELETE ON memory_embedding "
                f"WHEN old.model_id = '{quoted}' AND old.kind = 'note' "
                f"BEGIN DELETE FROM {table} WHERE rowid = old.item_id; END"
            )
            cursor.execute(f"SELECT rowid FROM {table}")
            present = [row[0] for row in cursor.fetchall()]
            rows = _note_rows("e.model_id = %s AND e.dim = %s", [model_id, dim])
            _vec0_insert(cursor, table, [row for row in rows if row[0] not in set(present)])
        else:
            cursor.execute(
                f"CREATE TABLE IF NOT EXISTS {table} (embedding_id bigint PRIMARY KEY, "
                f"subject_id bigint NOT NULL, embedding vector({dim}) NOT NULL)"
            )
            cursor.execute(f"CREATE INDEX IF NOT EXISTS {table}_subject ON {table} (subject_id)")
            _pg_insert(cursor, table, _embedding_rows("e.model_id = %s AND e.dim = %s", [model_id, dim]))
    if kind == "pgvector":
        _pg_table_ensure(table, dim)
    return table


# pgvector indexes vectors of up to 2,000 dimensions with HNSW; wider ones are searched exactly
HNSW_MAX_DIM = 2000
_pg_ensured: set[tuple[str, str]] = set()  # (alias, table) whose triggers and index exist


def hnsw_index(table: str) -> str:
    return f"{table}_hnsw"


def _pg_table_ensure(table: str, dim: int) -> None:
    """What keeps a pgvector table in step with memory_embedding, and its index:

    - a row trigger deletes a vector with its Embedding row, and a statement trigger empties
      the table when memory_embedding is truncated (`manage.py flush`, a test's teardown) — a
      foreign key would refuse the TRUNCATE, so there is none (tables made before lose theirs);
    - an HNSW index over cosine distance (memory.search.vectors._pgvector_search scans it
      iteratively, so a subject's filters still fill the limit).
    Once per process and table, after the transaction that made them commits."""
    key = (connection.alias, table)
    if key in _pg_ensured:
        return
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {table}_embedding_id_fkey")
        cursor.execute(
            f"CREATE OR REPLACE FUNCTION {table}_ad() RETURNS trigger LANGUAGE plpgsql AS $$ "
            f"BEGIN DELETE FROM {table} WHERE embedding_id = OLD.id; RETURN NULL; END $$"
        )
        cursor.execute(
            f"CREATE OR REPLACE FUNCTION {table}_at() RETURNS trigger LANGUAGE plpgsql AS $$ "
            f"BEGIN TRUNCATE {table}; RETURN NULL; END $$"
        )
        cursor.execute(
            f"CREATE OR REPLACE TRIGGER {table}_ad AFTER DELETE ON memory_embedding "
            f"FOR EACH ROW EXECUTE FUNCTION {table}_ad()"
        )
        cursor.execute(
            f"CREATE OR REPLACE TRIGGER {table}_at AFTER TRUNCATE ON memory_embedding "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {table}_at()"
        )
        if dim <= HNSW_MAX_DIM:
            cursor.execute(
                f"CREATE INDEX IF NOT EXISTS {hnsw_index(table)} ON {table} "
                "USING hnsw (embedding vector_cosine_ops)"
            )
    if connection.in_atomic_block:  # rolled back, they would have to be made again
        transaction.on_commit(lambda: _pg_ensured.add(key))
    else:
        _pg_ensured.add(key)


def _trigger_exists(name: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = %s", [name])
        return cursor.fetchone() is not None


def _embedding_rows(where: str, params: list) -> list[tuple[int, int, bytes]]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT e.id, e.subject_id, e.vector FROM memory_embedding e WHERE {where}", params)
        return [(row[0], row[1], bytes(row[2])) for row in cursor.fetchall()]


def _note_rows(where: str, params: list) -> list[tuple[int, int, bytes]]:
    """(note id, subject id, float vector) of the notes' Embedding rows that match."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT e.item_id, e.subject_id, e.vector FROM memory_embedding e WHERE e.kind = 'note' AND {where}",
            params,
        )
        return [(row[0], row[1], bytes(row[2])) for row in cursor.fetchall()]


def _vec0_insert(cursor, table: str, rows: list[tuple[int, int, bytes]]) -> None:
    # row by row through VALUES: a bit vector's SQLite subtype does not survive INSERT … SELECT
    if rows:
        floats = np.vstack([np.frombuffer(blob, "<f4") for _, _, blob in rows])
        fine = int8_copy(floats)
        cursor.executemany(
            f"INSERT INTO {table}(rowid, subject_id, embedding, fine) "
            "VALUES (%s, %s, vec_quantize_binary(%s), vec_int8(%s))",
            [(note_id, sid, blob, fine[i].tobytes()) for i, (note_id, sid, blob) in enumerate(rows)],
        )


def _pg_literal(blob: bytes) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in np.frombuffer(blob, dtype="<f4")) + "]"


def _pg_insert(cursor, table: str, rows: list[tuple[int, int, bytes]]) -> None:
    if rows:
        cursor.executemany(
            f"INSERT INTO {table} (embedding_id, subject_id, embedding) VALUES (%s, %s, %s::vector) "
            "ON CONFLICT (embedding_id) DO NOTHING",
            [(eid, sid, _pg_literal(blob)) for eid, sid, blob in rows],
        )


def index_add(model_id: str, dim: int, embedding_ids: list[int]) -> None:
    """Add just-stored Embedding rows to the model's index (no-op for brute force)."""
    if not embedding_ids:
        return
    table = index_ensure(model_id, dim)
    if table is None:
        return
    marks = placeholders(embedding_ids)
    with connection.cursor() as cursor:
        if backend() == "vec0":
            rows = _note_rows(f"e.id IN ({marks})", embedding_ids)
            if rows:
                note_marks = placeholders(rows)
                cursor.execute(f"DELETE FROM {table} WHERE rowid IN ({note_marks})", [r[0] for r in rows])
                _vec0_insert(cursor, table, rows)
        else:
            _pg_insert(cursor, table, _embedding_rows(f"e.id IN ({marks})", embedding_ids))


def index_count(model_id: str) -> int | None:
    """Rows in the model's index table (None: no index table)."""
    table = index_table(model_id)
    if backend() == "numpy" or not _table_exists(table):
        return None
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")
        return int(cursor.fetchone()[0])
