"""Deleting a subject leaves nothing of it: every table of the database is read after
subject_delete — the full-text index's shadow tables and the vector index included — and no
row may hold the subject's text, its id, or the id of one of its items. The one thing left is
the audit record of the deletion, which holds no text of the memory."""

import numpy as np
import pytest
from django.db import connection

from memory.context import context_build
from memory.models import AuditEvent, Embedding, Evidence, ItemKind, Note
from memory.search import vectors
from memory.search.vectors.index import int8_copy
from memory.services import subject_delete
from memory.services.consequences import consequence_record
from memory.services.contract import contract_set
from memory.services.conversations import message_add
from memory.services.documents import document_write
from memory.services.embeddings import embeddings_write
from tests.memory.portable_world import MARKER, portable_world

pytestmark = pytest.mark.postgres

MODEL = "test/scan-model"
DIM = 16


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def _virtual_tables() -> set[str]:
    if connection.vendor != "sqlite":
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
        )
        return {row[0] for row in cursor.fetchall()}


def scan(
    *, subject_id: int, item_ids: set[int], audit_ids: set[int], blobs: list[bytes]
) -> list[tuple[str, str, object]]:
    """(table, column, value) of every cell in the database that still holds the marker text,
    one of the subject's vectors (`blobs`: as floats and as the index's int8 copy), the subject's id (a `subject_id` column), or one of its items' ids (an `item_id` or
    `belief_id` column, a vector index's rowid), and every audit row that was the subject's."""
    found = []
    virtual = _virtual_tables()
    marker = MARKER.encode()
    with connection.cursor() as cursor:
        tables = connection.introspection.table_names(cursor)
        for table in tables:
            select = (
                f'SELECT rowid AS "rowid", * FROM "{table}"'
                if table in virtual
                else f'SELECT * FROM "{table}"'
            )
            cursor.execute(select)
            columns = [c[0] for c in cursor.description]
            for row in cursor.fetchall():
                for column, value in zip(columns, row, strict=True):
                    if isinstance(value, memoryview):
                        value = bytes(value)
                    if isinstance(value, str) and MARKER in value:
                        found.append((table, column, value[:80]))
                    elif isinstance(value, bytes) and marker in value:
                        found.append((table, column, "bytes with the marker"))
                    elif isinstance(value, bytes) and any(blob in value for blob in blobs):
                        found.append((table, column, "bytes with a vector"))
                    elif column.endswith("subject_id") and value == subject_id:
                        found.append((table, column, value))
                    elif column in ("item_id", "belief_id") and value in item_ids:
                        found.append((table, column, value))
                    elif column == "rowid" and table.startswith("memory_vec") and value in item_ids:
                        found.append((table, column, value))
                    elif table == AuditEvent._meta.db_table and column == "id" and value in audit_ids:
                        found.append((table, column, value))
    return found


@pytest.fixture
def filled(subject, actor, config):
    world = portable_world(subject, actor, config)
    conversation = world.conversation
    advice, _ = message_add(
        conversation=conversation, role="assistant", text=f"Run black {MARKER}", actor=actor
    )
    report, _ = message_add(
        conversation=conversation, role="user", text=f"that broke it {MARKER}", actor=actor
    )
    consequence_record(
        subject=subject,
        advice_message=advice,
        outcome_message=report,
        action=f"Run black {MARKER}",
        outcome="failure",
        outcome_text=f"that broke it {MARKER}",
        actor=actor,
    )
    document_write(subject=subject, path="MEMORY.md", content=f"# Memory\n- {MARKER}", actor=actor)
    contract_set(
        subject=subject, mode="coding_debug", values={"directness": "blunt"}, actor=actor, config=config
    )
    context_build(
        subject=subject, message=f"restaurant in Lisbon {MARKER}", config=config, conversation=conversation
    )
    notes = list(Note.objects.filter(subject=subject).order_by("id"))
    units = list(Evidence.objects.filter(subject=subject).order_by("id"))
    embeddings_write(
        kind=ItemKind.NOTE,
        model_id=MODEL,
        rows=[(subject.pk, n.pk, "sha") for n in notes],
        matrix=np.vstack([_unit(i) for i in range(len(notes))]),
    )
    embeddings_write(
        kind=ItemKind.EVIDENCE,
        model_id=MODEL,
        rows=[(subject.pk, u.pk, "sha") for u in units],
        matrix=np.vstack([_unit(100 + i) for i in range(len(units))]),
    )
    return world


def test_deleting_a_subject_leaves_no_row_index_entry_or_vector_of_it(subject, filled, actor):
    subject_id = subject.pk
    item_ids = set(Note.objects.filter(subject=subject).values_list("pk", flat=True)) | set(
        Evidence.objects.filter(subject=subject).values_list("pk", flat=True)
    )
    audit_ids = set(AuditEvent.objects.filter(subject=subject).values_list("pk", flat=True))
    floats = [bytes(e.vector) for e in Embedding.objects.filter(subject=subject)]
    blobs = floats + [int8_copy(np.frombuffer(f, "<f4")).tobytes() for f in floats]
    before = scan(subject_id=subject_id, item_ids=item_ids, audit_ids=audit_ids, blobs=blobs)
    tables_before = {table for table, _, _ in before}
    # the scan sees the subject where it is: rows, the full-text index, vectors, the audit trail
    assert {"memory_note", "memory_message", "memory_embedding", "memory_auditevent"} <= tables_before
    assert ("memory_embedding", "vector", "bytes with a vector") in before
    if connection.vendor == "sqlite":
        assert "memory_note_fts_data" in tables_before or "memory_note_fts_idx" in tables_before
    if vectors.backend() != "numpy":
        assert any(t.startswith("memory_vec") for t in tables_before), tables_before
    assert (
        Embedding.objects.filter(subject=subject).count() == Note.objects.count() + Evidence.objects.count()
    )

    subject_delete(subject=subject, actor=actor)

    left = scan(subject_id=subject_id, item_ids=item_ids, audit_ids=audit_ids, blobs=blobs)
    assert left == [], sorted({(t, c) for t, c, _ in left})
    [record] = AuditEvent.objects.filter(action="subject.deleted", object_id=str(subject_id))
    assert MARKER not in str(record.data)
