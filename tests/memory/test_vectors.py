"""Vector storage and search (memory.search.vectors): partitioning by subject, deletes that
take the vectors with them, filters, and the brute-force path against the index."""

import numpy as np
import pytest
from django.db import connection

from memory.models import Embedding, Note
from memory.search import vectors
from memory.search.lexical import NoteFilter
from memory.search.vectors import note_vector_search
from memory.services import note_forget, notes_evict_overflow, subject_delete
from memory.services.embeddings import embeddings_write
from tests.factories import ConversationFactory, SubjectFactory

pytestmark = pytest.mark.postgres

MODEL = "test/model"
DIM = 16


@pytest.fixture(autouse=True)
def _fresh_cache():
    vectors.cache_clear()
    yield
    vectors.cache_clear()


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def near(v: np.ndarray, seed: int, noise: float = 0.05) -> np.ndarray:
    w = v + noise * np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return w / np.linalg.norm(w)


def store(subject, vector: np.ndarray, content: str = "a note", **fields) -> Note:
    note = Note.objects.create(subject=subject, content=content, **fields)
    embeddings_write(kind="note", model_id=MODEL, rows=[(subject.pk, note.pk, "sha")], matrix=vector[None, :])
    return note


def search(subject, vector, limit=5, **filters):
    return note_vector_search(
        subject.pk, vector, model_id=MODEL, limit=limit, filters=NoteFilter(**filters) if filters else None
    )


def index_rows() -> int:
    return vectors.index_count(MODEL) or 0


def test_the_nearest_note_comes_first_scored_by_cosine(subject):
    target = unit(1)
    far = store(subject, unit(2))
    close = store(subject, near(target, 3))

    hits = search(subject, target)

    assert [h.id for h in hits][0] == close.pk
    assert hits[0].score == pytest.approx(float(near(target, 3) @ target), abs=1e-5)
    assert far.pk not in [h.id for h in hits[:1]]


def test_another_subjects_vectors_are_never_returned(subject, app):
    other = SubjectFactory(app=app)
    target = unit(1)
    mine = store(subject, unit(2))
    store(other, target)  # the exact match, but someone else's

    hits = search(subject, target, limit=10)

    assert [h.id for h in hits] == ([mine.pk] if float(unit(2) @ target) > 0 else [])
    assert all(Note.objects.get(pk=h.id).subject_id == subject.pk for h in hits)


def test_forgetting_a_note_removes_its_vector_and_index_row(subject, actor):
    note = store(subject, unit(1))
    has_index = vectors.backend() != "numpy"
    assert Embedding.objects.filter(item_id=note.pk).exists()

    note_forget(note=note, actor=actor)

    assert not Embedding.objects.filter(item_id=note.pk).exists()
    assert search(subject, unit(1)) == []
    if has_index:
        assert index_rows() == 0


def test_eviction_removes_the_vectors_of_evicted_notes(subject, actor, config):
    notes = [store(subject, unit(i)) for i in range(3)]

    notes_evict_overflow(
        subject=subject, config=config.with_overrides({"notes": {"maxEntries": 1}}), actor=actor
    )

    assert list(Embedding.objects.values_list("item_id", flat=True)) == [notes[2].pk]
    assert index_rows() in (0, 1) and (vectors.backend() == "numpy" or index_rows() == 1)


def test_deleting_a_subject_removes_its_vectors(subject, app, actor):
    other = SubjectFactory(app=app)
    store(subject, unit(1))
    kept = store(other, unit(2))

    subject_delete(subject=subject, actor=actor)

    assert list(Embedding.objects.values_list("item_id", flat=True)) == [kept.pk]
    if vectors.backend() != "numpy":
        assert index_rows() == 1


def test_archived_notes_are_left_out_unless_asked_for(subject):
    from django.utils import timezone

    target = unit(1)
    archived = store(subject, target, archived_at=timezone.now())
    live = store(subject, near(target, 2, noise=0.5))

    assert [h.id for h in search(subject, target)] == [live.pk]
    assert [h.id for h in search(subject, target, include_archived=True)][0] == archived.pk


def test_scope_working_dir_and_tag_filters_apply(subject):
    target = unit(1)
    conversation = ConversationFactory(subject=subject)
    store(subject, target, scope="work", working_dir="/srv/a", tags=["deploy"])
    home = store(subject, near(target, 2), scope="home", working_dir="/srv/b", tags=["garden"])

    assert [h.id for h in search(subject, target, scope="home")] == [home.pk]
    assert [h.id for h in search(subject, target, scopes=["home", "x"])] == [home.pk]
    assert [h.id for h in search(subject, target, working_dir="/srv/b")] == [home.pk]
    assert [h.id for h in search(subject, target, tags=["garden"])] == [home.pk]
    assert conversation.subject_id == subject.pk


def test_a_filter_that_leaves_few_candidates_still_finds_its_note(subject):
    target = unit(1)
    n = vectors.MIN_CANDIDATES + 50
    notes = Note.objects.bulk_create([Note(subject=subject, content=f"n{i}") for i in range(n)])
    matrix = np.vstack([near(target, 100 + i, noise=0.1) for i in range(n)])
    embeddings_write(
        kind="note", model_id=MODEL, rows=[(subject.pk, x.pk, "s") for x in notes], matrix=matrix
    )
    odd = store(subject, near(target, 9, noise=2.0), scope="rare")

    assert [h.id for h in search(subject, target, scope="rare")] == [odd.pk]


def test_brute_force_finds_the_same_top_results_as_the_index(subject, settings):
    rng = np.random.default_rng(7)
    n = 300
    notes = Note.objects.bulk_create([Note(subject=subject, content=f"n{i}") for i in range(n)])
    matrix = rng.standard_normal((n, DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    embeddings_write(
        kind="note", model_id=MODEL, rows=[(subject.pk, x.pk, "s") for x in notes], matrix=matrix
    )
    queries = [unit(1000 + i) for i in range(5)]
    indexed_backend = vectors.backend()
    indexed = [[h.id for h in search(subject, q, limit=3)] for q in queries]

    settings.MEMORYWEB_VECTOR_SEARCH = "numpy"
    assert vectors.backend() == "numpy"
    brute = [[h.id for h in search(subject, q, limit=3)] for q in queries]

    assert brute == indexed, indexed_backend
    exact = [[notes[i].pk for i in np.argsort(-(matrix @ q))[:3]] for q in queries]
    assert brute == exact


def test_the_brute_force_cache_sees_new_and_deleted_vectors(subject, settings, actor):
    settings.MEMORYWEB_VECTOR_SEARCH = "numpy"
    target = unit(1)
    first = store(subject, near(target, 2, noise=0.5))
    assert [h.id for h in search(subject, target)] == [first.pk]

    second = store(subject, target)
    assert [h.id for h in search(subject, target)][0] == second.pk

    note_forget(note=second, actor=actor)
    assert [h.id for h in search(subject, target)] == [first.pk]


def test_the_vec0_index_is_filled_from_stored_vectors_when_it_is_created(subject, settings):
    if vectors.backend() == "numpy":
        pytest.skip("no vector index on this database")
    settings.MEMORYWEB_VECTOR_SEARCH = "numpy"
    note = store(subject, unit(1))  # written while the index was not in use
    settings.MEMORYWEB_VECTOR_SEARCH = "auto"
    table = vectors.index_table(MODEL)
    assert vectors.index_count(MODEL) in (None, 0)

    assert vectors.index_ensure(MODEL, DIM) == table
    assert vectors.index_count(MODEL) == 1
    assert [h.id for h in search(subject, unit(1))] == [note.pk]


def test_a_thousand_subjects_keep_the_vec0_index_small(app):
    if vectors.backend() != "vec0":
        pytest.skip("sqlite-vec is not loaded")
    subjects = [SubjectFactory(app=app) for _ in range(1000)]
    notes = Note.objects.bulk_create([Note(subject=s, content="n") for s in subjects])
    matrix = np.vstack([unit(i) for i in range(1000)])
    embeddings_write(
        kind="note",
        model_id="test/384",
        rows=[(s.pk, n.pk, "s") for s, n in zip(subjects, notes, strict=True)],
        matrix=np.repeat(matrix, 24, axis=1),
    )
    table = vectors.index_table("test/384")

    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT sum(length(vectors)) FROM {table}_vector_chunks00) "
            f"+ (SELECT sum(length(vectors)) FROM {table}_vector_chunks01)"
        )
        vector_bytes = cursor.fetchone()[0]
        cursor.execute(f"SELECT sum(length(rowids)) + sum(length(validity)) FROM {table}_chunks")
        chunk_bytes = cursor.fetchone()[0]

    per_subject = (vector_bytes + chunk_bytes) / 1000
    assert per_subject < 16 * 1024  # a float[384] vec0 with the default chunk_size takes 1.5 MB each
    assert vectors.index_count("test/384") == 1000


def test_a_vec0_partition_loads_the_same_vectors_as_the_floats(subject, actor):
    if vectors.backend() != "vec0":
        pytest.skip("sqlite-vec is not loaded")
    notes = [store(subject, unit(i)) for i in range(40)]  # more than one chunk
    note_forget(note=notes[3], actor=actor)  # a hole in a chunk's validity bitmap

    ids, words, fine = vectors._load_from_vec0(subject.pk, MODEL, DIM)
    float_ids, float_words, float_fine, _ = vectors._load_from_floats(subject.pk, MODEL)

    order, float_order = np.argsort(ids), np.argsort(float_ids)
    assert (
        ids[order].tolist() == float_ids[float_order].tolist() == sorted(n.pk for n in notes if n != notes[3])
    )
    assert np.array_equal(words[order], float_words[float_order])
    assert np.array_equal(fine[order], float_fine[float_order])


def test_an_edited_vector_replaces_the_cached_one(subject):
    target = unit(1)
    moving = store(subject, near(-target, 2))
    other = store(subject, near(target, 3, noise=0.5))
    assert search(subject, target)[0].id == other.pk  # loads the cache

    embeddings_write(
        kind="note", model_id=MODEL, rows=[(subject.pk, moving.pk, "new")], matrix=target[None, :]
    )

    hits = search(subject, target)
    assert hits[0].id == moving.pk and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert [h.id for h in hits].count(moving.pk) == 1
