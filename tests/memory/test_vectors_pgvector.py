"""pgvector on PostgreSQL (memory.search.vectors): the PostgreSQL pass searches through it —
in CI it must be there (`.ci/run` builds it from ../shared/vendor) — with an HNSW index whose
iterative scan still fills a subject's limit, and a table that follows memory_embedding through
deletes and truncation."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.models import Embedding
from memory.search import vectors
from memory.search.vectors.index import hnsw_index, index_table
from tests.factories import SubjectFactory
from tests.memory.test_vectors import MODEL, near, search, store, unit
from tests.support import in_ci

pytestmark = pytest.mark.postgres


@pytest.fixture(autouse=True)
def _pgvector(db):
    if connection.vendor != "postgresql":
        pytest.skip("pgvector is PostgreSQL's")
    if not vectors.pgvector_available():
        if in_ci():
            pytest.fail(
                "CI is set, so the PostgreSQL pass must search with pgvector, but the database lacks it"
            )
        pytest.skip("this PostgreSQL server has no pgvector (see ../shared/vendor/README.md)")
    vectors.cache_clear()
    yield
    vectors.cache_clear()


def indexes(table: str) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", [table])
        return {row[0] for row in cursor.fetchall()}


def test_the_postgresql_pass_searches_with_pgvector_and_an_hnsw_index(subject):
    target = unit(1)
    best = store(subject, near(target, 2, 0.01))
    store(subject, near(target, 3, 0.6))

    assert vectors.backend() == "pgvector"
    assert hnsw_index(index_table(MODEL)) in indexes(index_table(MODEL))
    assert [hit.id for hit in search(subject, target, limit=1)] == [best.pk]


def test_through_the_hnsw_index_a_subjects_filter_still_fills_the_limit(subject):
    # another subject's 300 vectors sit nearer the query than any of ours: an index scan that
    # stopped at its first candidates would leave ours out
    target = unit(7)
    crowd = SubjectFactory(app=subject.app)
    for seed in range(300):
        store(crowd, near(target, 100 + seed, 0.02))
    ours = [store(subject, near(target, 1000 + seed, 0.5)) for seed in range(5)]
    with connection.cursor() as cursor:  # only the HNSW index can order the rows now
        cursor.execute(f"DROP INDEX {index_table(MODEL)}_subject")
        cursor.execute("SET LOCAL enable_seqscan = off")

    with CaptureQueriesContext(connection) as queries:
        found = search(subject, target, limit=5)

    select = next(q["sql"] for q in queries.captured_queries if "ORDER BY embedding <=>" in q["sql"])
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute("EXPLAIN " + select)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert hnsw_index(index_table(MODEL)) in plan, plan
    assert sorted(hit.id for hit in found) == sorted(note.pk for note in ours)
    assert [hit.score for hit in found] == sorted((hit.score for hit in found), reverse=True)


def test_the_index_table_follows_deletes_and_truncation_of_the_embeddings(subject):
    table = index_table(MODEL)
    first = store(subject, unit(1))
    store(subject, unit(2))

    Embedding.objects.filter(item_id=first.pk).delete()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")
        assert cursor.fetchone()[0] == 1
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # Django's foreign keys wait for the commit
        cursor.execute("TRUNCATE memory_embedding")  # manage.py flush, a transactional test's teardown
        cursor.execute(f"SELECT count(*) FROM {table}")
        assert cursor.fetchone()[0] == 0
