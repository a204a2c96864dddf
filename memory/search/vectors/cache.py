"""The per-process copies of each subject's vectors that a search scans (see
memory.search.vectors): sign bits and int8 vectors, loaded from the subject's vec0 partition
or from the floats, appended to when newer vectors appear."""

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection

from memory.search.vectors.index import backend, index_table, int8_copy
from memoryweb.db import placeholders

# --- the per-process cache that every search but pgvector's scans ----------------------------


@dataclass(frozen=True)
class _Vectors:
    """One subject's vectors under one model, as this process last loaded them."""

    max_id: int  # the newest Embedding id seen: a newer one is appended on the next query
    newest_at: str  # that row's created_at
    note_ids: np.ndarray  # int64 (n)
    alive: np.ndarray  # bool (n): False for a row a newer vector of the same note replaced
    columns: tuple[np.ndarray, ...]  # sign bits, 64 dimensions per uint64 column
    fine: np.ndarray  # int8 (n, dim): int8_copy of the vectors

    @property
    def nbytes(self) -> int:
        return (
            self.note_ids.nbytes + self.alive.nbytes + self.fine.nbytes + sum(c.nbytes for c in self.columns)
        )


_cache: "OrderedDict[tuple, _Vectors]" = OrderedDict()
_cache_lock = threading.Lock()


def _cache_budget() -> int:
    return settings.MEMORYWEB_VECTOR_CACHE_MB << 20


def cache_clear() -> None:
    with _cache_lock:
        _cache.clear()


def cache_forget(subject_ids) -> None:
    """Drop the cached vectors of these subjects (after this process deleted some)."""
    wanted = set(subject_ids)
    with _cache_lock:
        for key in [k for k in _cache if k[1] in wanted]:
            del _cache[key]


def sign_bits(matrix: np.ndarray) -> np.ndarray:
    """Sign bits of each row, packed like sqlite-vec's vec_quantize_binary (least significant
    bit first), padded to whole uint64 words: shape (n, ceil(dim / 64))."""
    packed = np.packbits(np.asarray(matrix) > 0, axis=1, bitorder="little")
    return _words(packed)


def _words(packed: np.ndarray) -> np.ndarray:
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view("<u8")


def _load_from_vec0(subject_id: int, model_id: str, dim: int):
    """The subject's (note ids, bit words, int8 vectors) read straight from the chunks of its
    vec0 partition: 440 bytes a vector in a few hundred blobs, instead of one float row each.
    None when the table's layout is not the one this code knows (then floats are read)."""
    table = index_table(model_id)
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT chunk_id, size, validity, rowids FROM {table}_chunks WHERE partition00 = %s",
                [subject_id],
            )
            heads = cursor.fetchall()
            blobs: list[dict[int, bytes]] = [{}, {}]
            chunk_ids = [row[0] for row in heads]
            # one table at a time: a join of the three is planned as a scan of each
            for n, shadow in enumerate((f"{table}_vector_chunks00", f"{table}_vector_chunks01")):
                for start in range(0, len(chunk_ids), 5000):
                    part = chunk_ids[start : start + 5000]
                    marks = placeholders(part)
                    cursor.execute(f"SELECT rowid, vectors FROM {shadow} WHERE rowid IN ({marks})", part)
                    blobs[n].update((int(row[0]), bytes(row[1])) for row in cursor.fetchall())
    except Exception:
        return None
    try:
        chunks = [
            (size, validity, rowids, blobs[0][cid], blobs[1][cid]) for cid, size, validity, rowids in heads
        ]
    except KeyError:
        return None
    ids, bits, fine = [], [], []
    for size, validity, rowids, bit_blob, fine_blob in chunks:
        validity, rowids, bit_blob, fine_blob = (
            bytes(validity),
            bytes(rowids),
            bytes(bit_blob),
            bytes(fine_blob),
        )
        if len(rowids) != 8 * size or len(validity) * 8 < size or len(bit_blob) != size * dim // 8:
            return None
        if len(fine_blob) != size * dim:
            return None
        valid = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")[:size].astype(bool)
        ids.append(np.frombuffer(rowids, "<i8")[valid])
        bits.append(np.frombuffer(bit_blob, np.uint8).reshape(size, -1)[valid])
        fine.append(np.frombuffer(fine_blob, np.int8).reshape(size, dim)[valid])
    if not ids:
        return np.zeros(0, np.int64), _words(np.zeros((0, dim // 8), np.uint8)), np.zeros((0, dim), np.int8)
    return np.concatenate(ids).astype(np.int64), _words(np.vstack(bits)), np.vstack(fine)


def _load_from_floats(subject_id: int, model_id: str, after_id: int = 0, kind: str = "note"):
    """(item ids, bit words, int8 vectors, newest id) of the `kind` Embedding rows newer than `after_id`."""
    ids: list[int] = []
    bits, fine = [], []
    newest = after_id
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, item_id, vector FROM memory_embedding "
            "WHERE subject_id = %s AND model_id = %s AND kind = %s AND id > %s ORDER BY id",
            [subject_id, model_id, kind, after_id],
        )
        while rows := cursor.fetchmany(4096):
            ids.extend(row[1] for row in rows)
            newest = rows[-1][0]
            floats = np.frombuffer(b"".join(bytes(row[2]) for row in rows), "<f4").reshape(len(rows), -1)
            bits.append(sign_bits(floats))
            fine.append(int8_copy(floats))
    if not ids:
        return None
    return np.array(ids, dtype=np.int64), np.vstack(bits), np.vstack(fine), newest


def _subject_vectors(subject_id: int, model_id: str, dim: int, kind: str = "note") -> _Vectors | None:
    """The subject's vectors of `kind` (notes: from the vec0 partition when there is one;
    evidence has no vec0 table and is read from the floats)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, created_at FROM memory_embedding WHERE subject_id = %s AND model_id = %s "
            "AND kind = %s ORDER BY id DESC LIMIT 1",
            [subject_id, model_id, kind],
        )
        newest_row = cursor.fetchone()
    if newest_row is None:
        return None
    # the id with its time: SQLite hands a rolled-back id out again, never with the same time
    max_id, newest_at = newest_row[0], str(newest_row[1])
    key = (connection.alias, subject_id, model_id, kind)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None and cached.max_id == max_id and cached.newest_at == newest_at:
            _cache.move_to_end(key)
            return cached
    if cached is not None and cached.max_id < max_id and cached.fine.shape[1] == dim and _still_there(cached):
        # newer vectors only: appended; the rows they replace (same note) are marked dead
        added = _load_from_floats(subject_id, model_id, after_id=cached.max_id, kind=kind)
        if added is None:
            return cached
        note_ids, words, fine, newest = added
        alive = cached.alive & ~np.isin(cached.note_ids, note_ids)
        entry = _Vectors(
            max_id=newest,
            newest_at=newest_at,
            note_ids=np.concatenate([cached.note_ids, note_ids]),
            alive=np.concatenate([alive, np.ones(len(note_ids), bool)]),
            columns=tuple(np.concatenate([c, words[:, j]]) for j, c in enumerate(cached.columns)),
            fine=np.vstack([cached.fine, fine]),
        )
    else:
        vec0 = kind == "note" and backend() == "vec0" and dim % 8 == 0
        loaded = _load_from_vec0(subject_id, model_id, dim) if vec0 else None
        if loaded is not None:
            note_ids, words, fine = loaded
            newest = max_id
        else:
            full = _load_from_floats(subject_id, model_id, kind=kind)
            if full is None:
                return None
            note_ids, words, fine, newest = full
        # a note has one vector per model; the newest wins should a replaced one linger
        _, last = np.unique(note_ids[::-1], return_index=True)
        alive = np.zeros(len(note_ids), bool)
        alive[len(note_ids) - 1 - last] = True
        entry = _Vectors(
            max_id=newest,
            newest_at=newest_at,
            note_ids=note_ids,
            alive=alive,
            columns=_columns(words),
            fine=fine,
        )
    with _cache_lock:
        _cache[key] = entry
        _cache.move_to_end(key)
        total = sum(v.nbytes for v in _cache.values())
        while total > _cache_budget() and len(_cache) > 1:
            _, evicted = _cache.popitem(last=False)
            total -= evicted.nbytes
    return entry


def _still_there(cached: _Vectors) -> bool:
    """Whether the newest row the cache has seen is still the same row (not rolled back and
    handed out again), so that appending what came after it is right."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT created_at FROM memory_embedding WHERE id = %s", [cached.max_id])
        row = cursor.fetchone()
    return row is not None and str(row[0]) == cached.newest_at


def _columns(words: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(np.ascontiguousarray(words[:, j]) for j in range(words.shape[1]))
