"""Writing and reading note (and evidence) vectors (DESIGN §8): embed, store, backfill, query.

Nothing here lets a provider failure reach an API caller: the store path logs and counts, and
the query side (memory.search.vectors.query: `query_vector`) answers None, so recall runs on
full-text search alone. Every failure adds to
the `embeddings.failures` counter that diagnose reports. After a failure the provider is left
alone for `embeddings.retryAfterSeconds` (per process), so an unreachable endpoint does not
add its timeout to every context build; those skipped queries count `embeddings.skipped`.
"""

import hashlib
import logging
from collections.abc import Callable, Iterable

import numpy as np
from django.db import transaction

from memory.config import MemoryConfig, get_config
from memory.embeddings import Embedder, embedding_spec, get_embedder
from memory.models import Embedding, Evidence, ItemKind, Note, Subject
from memory.search import vectors
from memory.search.vectors.query import provider_failed
from memory.services.context_cache import memory_changed
from memoryweb.outbox import enqueue

logger = logging.getLogger(__name__)

WRITE_BATCH = 256


def content_sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def embeddings_enabled(config: MemoryConfig) -> bool:
    return not embedding_spec(config).is_none


@transaction.atomic
def embeddings_write(
    *, kind: str, model_id: str, rows: list[tuple[int, int, str]], matrix: np.ndarray
) -> list[int]:
    """Store one vector per (subject id, item id, content sha256) row of `rows`, replacing the
    items' previous vectors under `model_id`, and add them to the vector index. Returns the
    new Embedding ids. Safe to repeat (the last write wins)."""
    if not rows:
        return []
    matrix = np.ascontiguousarray(matrix, dtype="<f4")
    dim = int(matrix.shape[1])
    item_ids = [item_id for _, item_id, _ in rows]
    Embedding.objects.filter(kind=kind, model_id=model_id, item_id__in=item_ids).delete()
    created = Embedding.objects.bulk_create(
        [
            Embedding(
                subject_id=subject_id,
                kind=kind,
                item_id=item_id,
                model_id=model_id,
                dim=dim,
                vector=matrix[i].tobytes(),
                content_sha256=sha,
            )
            for i, (subject_id, item_id, sha) in enumerate(rows)
        ]
    )
    ids = [e.pk for e in created if e.pk is not None]
    if len(ids) != len(created):  # a database that does not return ids from a bulk insert
        ids = list(
            Embedding.objects.filter(kind=kind, model_id=model_id, item_id__in=item_ids).values_list(
                "pk", flat=True
            )
        )
    for start in range(0, len(ids), 500):
        vectors.index_add(model_id, dim, ids[start : start + 500])
    return ids


def embeddings_delete(*, kind: str, item_ids: Iterable[int]) -> int:
    """Delete the items' vectors under every model (their index rows go with them)."""
    item_ids = list(item_ids)
    if not item_ids:
        return 0
    rows = Embedding.objects.filter(kind=kind, item_id__in=item_ids)
    vectors.cache_forget(set(rows.values_list("subject_id", flat=True)))
    return rows.delete()[0]


def embed_notes(notes: Iterable[Note], *, config: MemoryConfig, embedder: Embedder | None = None) -> int:
    """Embed and store the notes' contents now; returns how many vectors were written.

    Notes whose content hash already has a vector under this model are skipped, so running it
    twice writes nothing the second time. Raises EmbeddingError when the provider fails (the
    callers decide whether that is counted or reported). A written vector changes what the
    notes' subjects' contexts can find (`memory_changed`); the vectors of evidence units do
    not: a unit is a turn, and a new turn is what the cache's staleness counts already."""
    notes = list(notes)
    written = _embed_items(ItemKind.NOTE, notes, config=config, embedder=embedder)
    if written:
        memory_changed(subject_ids=sorted({n.subject_id for n in notes}))
    return written


def embed_evidence(
    items: Iterable[Evidence], *, config: MemoryConfig, embedder: Embedder | None = None
) -> int:
    """`embed_notes` for evidence units (the turns' text)."""
    return _embed_items(ItemKind.EVIDENCE, [e for e in items if e.text], config=config, embedder=embedder)


def _embed_items(kind: str, items: list, *, config: MemoryConfig, embedder: Embedder | None) -> int:
    embedder = embedder or get_embedder(config)
    if embedder is None:
        return 0
    written = 0
    for start in range(0, len(items), WRITE_BATCH):
        batch = items[start : start + WRITE_BATCH]
        hashes = {item.pk: content_sha256(item.content) for item in batch}
        stored = dict(
            Embedding.objects.filter(
                kind=kind, model_id=embedder.model_id, item_id__in=list(hashes)
            ).values_list("item_id", "content_sha256")
        )
        todo = [item for item in batch if stored.get(item.pk) != hashes[item.pk]]
        if not todo:
            continue
        matrix = embedder.embed([item.content for item in todo])
        rows = [(item.subject_id, item.pk, hashes[item.pk]) for item in todo]
        written += len(embeddings_write(kind=kind, model_id=embedder.model_id, rows=rows, matrix=matrix))
    return written


def _embed_one(item, embed, *, where: str) -> dict:
    """Embed one item (a note or an evidence unit) under its app's configured provider. A
    provider failure is logged and counted, not raised."""
    if item is None:
        return {"embedded": 0, "reason": "gone"}
    config = get_config(item.subject.app)
    try:
        embedder = get_embedder(config)
        if embedder is None:
            return {"embedded": 0, "reason": "off"}
        return {"embedded": embed([item], config=config, embedder=embedder)}
    except Exception as exc:
        model_id = embedding_spec(config).model_id if embeddings_enabled(config) else "?"
        provider_failed(model_id, exc, where=where, config=config)
        return {"embedded": 0, "reason": "failed"}


def note_embed(*, note_id: int) -> dict:
    """Embed one note (the store path's task); a failure is counted, and `manage.py memory
    reembed` backfills. Safe to repeat: an unchanged note is skipped."""
    note = Note.objects.select_related("subject__app").filter(pk=note_id).first()
    return _embed_one(note, embed_notes, where=f"note {note_id}")


def note_embed_enqueue(*, note: Note, config: MemoryConfig) -> None:
    """After the surrounding transaction commits, embed the note in a task (no-op when
    embeddings are off). Fire-and-forget: the caller never waits."""
    if not embeddings_enabled(config):
        return
    enqueue("memory.note_embed", note.pk)


def evidence_embed(*, evidence_id: int) -> dict:
    """Embed one evidence unit (the reflection's task), like `note_embed`. Safe to repeat."""
    item = Evidence.objects.select_related("subject__app").filter(pk=evidence_id).first()
    return _embed_one(item, embed_evidence, where=f"evidence {evidence_id}")


Progress = Callable[[int, int], None]


def reembed(
    *, subjects: Iterable[Subject] | None = None, progress: Progress | None = None, evidence: bool = False
) -> dict:
    """Backfill vectors for the notes (archived ones too) of `subjects` (default: every
    subject whose app has embeddings on), under each app's configured provider — and with
    `evidence`, of their evidence units with text too (`evidence_embedded`). Unchanged
    items are skipped; vectors of items that no longer exist are removed; the vector index
    is created or refilled where it is missing. `progress(done, total)` is called after each
    batch of notes. Safe to repeat. A provider failure stops that app's subjects and is reported in
    `errors` (and counted); other apps go on."""
    queryset = Subject.objects.select_related("app").order_by("app_id", "id")
    if subjects is not None:
        ids = [s.pk for s in subjects]
        queryset = queryset.filter(pk__in=ids)
    plan: list[tuple[Subject, MemoryConfig]] = []
    for subject in queryset:
        config = get_config(subject.app)
        if embeddings_enabled(config):
            plan.append((subject, config))
    total = sum(Note.objects.filter(subject=s).count() for s, _ in plan)
    result: dict = {
        "subjects": len(plan),
        "notes": total,
        "embedded": 0,
        "unchanged": 0,
        **({"evidence_embedded": 0} if evidence else {}),
        "orphans_removed": prune_orphans(),
        "models": [],
        "errors": [],
    }
    done = 0
    if progress:
        progress(0, total)
    failed_apps: set[int] = set()
    for subject, config in plan:
        if subject.app_id in failed_apps:
            done += Note.objects.filter(subject=subject).count()
            continue
        embedder = get_embedder(config)
        assert embedder is not None
        if embedder.model_id not in result["models"]:
            result["models"].append(embedder.model_id)
        last_id = 0
        while True:
            batch = list(Note.objects.filter(subject=subject, pk__gt=last_id).order_by("pk")[:WRITE_BATCH])
            if not batch:
                break
            last_id = batch[-1].pk
            try:
                written = embed_notes(batch, config=config, embedder=embedder)
            except Exception as exc:
                provider_failed(embedder.model_id, exc, where="reembed", config=config)
                result["errors"].append(
                    {"app": subject.app.name, "model": embedder.model_id, "error": str(exc)}
                )
                failed_apps.add(subject.app_id)
                done += Note.objects.filter(subject=subject, pk__gte=batch[0].pk).count()
                break
            result["embedded"] += written
            result["unchanged"] += len(batch) - written
            done += len(batch)
            if progress:
                progress(done, total)
        if evidence and subject.app_id not in failed_apps:
            last_id = 0
            while units := list(
                Evidence.objects.filter(subject=subject, pk__gt=last_id)
                .exclude(text="")
                .order_by("pk")[:WRITE_BATCH]
            ):
                last_id = units[-1].pk
                try:
                    result["evidence_embedded"] += embed_evidence(units, config=config, embedder=embedder)
                except Exception as exc:
                    provider_failed(embedder.model_id, exc, where="reembed", config=config)
                    result["errors"].append(
                        {"app": subject.app.name, "model": embedder.model_id, "error": str(exc)}
                    )
                    failed_apps.add(subject.app_id)
                    break
    for model_id in result["models"]:
        dim = Embedding.objects.filter(model_id=model_id).values_list("dim", flat=True).first()
        if dim:
            vectors.index_ensure(model_id, dim)
    if progress:
        progress(total, total)
    return result


def prune_orphans() -> int:
    """Delete note and evidence vectors whose item no longer exists; returns how many."""
    orphans = Embedding.objects.filter(kind=ItemKind.NOTE).exclude(item_id__in=Note.objects.values("pk"))
    gone = Embedding.objects.filter(kind=ItemKind.EVIDENCE).exclude(item_id__in=Evidence.objects.values("pk"))
    return orphans.delete()[0] + gone.delete()[0]
