"""One search across facts, notes, lessons and procedures (memory.search.memories), the prefix
term of a query being typed (memory.search.lexical.typed_terms), and the dashboard's
highlighting of the words a search matched (memory.dashboard.tags.highlight)."""

import pytest
from django.utils import timezone

from memory.config import get_config
from memory.dashboard.tags import highlight, relevance
from memory.models import Lesson, Procedure
from memory.search.lexical import fact_search, lesson_search, note_search, procedure_search, typed_terms
from memory.search.memories import MEANING_MIN_SIMILARITY, memory_search
from tests.factories import AppFactory, FactFactory, NoteFactory, SubjectFactory

pytestmark = pytest.mark.postgres


def _search(subject, query, **kwargs):
    return memory_search(subject=subject, query=query, config=get_config(subject.app), **kwargs)


def _refs(results) -> list[str]:
    return [hit.ref for hit in results.hits]


# --- the word being typed ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("postg", ["postg*"]),
        ("best postg", ["best", "postg*"]),
        ("postgres ", ["postgres"]),  # a space: the word is finished
        ("postgres,", ["postgres"]),
        ("the", []),  # a stop word is no prefix either
        ("run p", ["run"]),  # one letter: nothing to match yet
        ("sql sql", ["sql*"]),
    ],
)
def test_the_last_word_is_a_prefix_only_while_it_is_being_typed(text, terms):
    assert typed_terms(text) == terms


@pytest.mark.django_db
def test_a_prefix_finds_the_word_it_begins_in_every_kind(subject):
    note = NoteFactory(subject=subject, content="Alice moved the billing database to PostgreSQL 16.")
    NoteFactory(subject=subject, content="Alice posted a letter.")  # "post", not "postg"
    fact = FactFactory(subject=subject, key="database", value="PostgreSQL")
    lesson = Lesson.objects.create(subject=subject, text="Back up PostgreSQL before a migration.")
    procedure = Procedure.objects.create(
        subject=subject, title="Restore postgresql", steps=["Stop the app", "Run pg_restore"]
    )
    terms = typed_terms("postg")

    assert [h.id for h in note_search(subject.pk, terms, limit=10)] == [note.pk]
    assert [h.id for h in fact_search(subject.pk, terms)] == [fact.pk]
    assert [h.id for h in lesson_search(subject.pk, terms, limit=10)] == [lesson.pk]
    assert [h.id for h in procedure_search(subject.pk, terms, limit=10)] == [procedure.pk]
    # the finished word matches as a word: "postg " is no prefix any more
    assert note_search(subject.pk, typed_terms("postg "), limit=10) == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("typed", "content"),
    [
        ("kay", "A kayak trip on Sunday"),  # Porter stems the prefix "kay" to "kai"
        ("play", "The new player joined"),  # "plai", and "player" stays "player"
        ("happ", "Happiness is a warm cup"),  # the stem "happi" begins with the prefix
        ("postgre", "Alice runs PostgreSQL"),  # Porter drops the final e: "postgr"
    ],
)
def test_a_prefix_finds_the_words_it_begins_whatever_porter_makes_of_it(subject, typed, content):
    note = NoteFactory(subject=subject, content=content)
    NoteFactory(subject=subject, content="Lunch at noon")

    assert [h.id for h in note_search(subject.pk, typed_terms(typed), limit=10)] == [note.pk]
    assert _refs(_search(subject, typed)) == [f"n:{note.pk}"]


@pytest.mark.django_db
def test_a_prefix_hit_has_a_real_score(subject):
    """On PostgreSQL the note search computes BM25 itself: the prefix's occurrences count."""
    NoteFactory(subject=subject, content="PostgreSQL PostgreSQL tuning")
    NoteFactory(subject=subject, content="PostgreSQL once, among many other words of a longer note")
    for text in ("Lunch at noon", "A walk by the river", "Tea with Bob"):  # so the word is rare
        NoteFactory(subject=subject, content=text)

    hits = note_search(subject.pk, typed_terms("postg"), limit=10)

    assert len(hits) == 2
    assert hits[0].score > hits[1].score > 1e-6


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        '"',
        '"postg',
        "postg*",
        "-postg",
        "(postg",
        "postg)",
        "NEAR(postg",
        "a OR b AND",
        "^x",
        "x:y",
        "'; --",
        "\\",
        "&|!",
    ],
)
def test_search_syntax_in_the_query_is_never_syntax(subject, query):
    NoteFactory(subject=subject, content="Alice moved to PostgreSQL.")

    results = _search(subject, query)  # no error from FTS5 or to_tsquery

    expected = ["n:"] if query.endswith("postg") else []  # after "*" or ")" the word is finished
    assert [ref[:2] for ref in _refs(results)] == expected


# --- one search across the kinds ----------------------------------------------------------------


@pytest.mark.django_db
def test_one_search_finds_facts_notes_lessons_and_procedures_best_first(subject):
    note = NoteFactory(subject=subject, content="Alice runs PostgreSQL at work.")
    fact = FactFactory(subject=subject, key="database", value="PostgreSQL")
    lesson = Lesson.objects.create(subject=subject, text="Back up PostgreSQL before a migration.")
    procedure = Procedure.objects.create(
        subject=subject, title="Restore postgresql", steps=["Stop", "Restore"]
    )
    FactFactory(subject=subject, key="city", value="Lisbon")

    results = _search(subject, "postg")

    assert sorted(_refs(results)) == sorted(
        [f"f:{fact.pk}", f"n:{note.pk}", f"l:{lesson.pk}", f"p:{procedure.pk}"]
    )
    assert {hit.kind for hit in results.hits} == {"fact", "note", "lesson", "procedure"}
    assert all(hit.ways == ["words"] for hit in results.hits)
    assert results.meaning == "off"  # the suite runs with embeddings off (tests/conftest.py)


@pytest.mark.django_db
def test_relevance_is_relative_to_the_best_hit_and_never_zero(subject):
    for i in range(60):  # "postgresql" in every note: its idf is near zero, bm25 near 0.00
        NoteFactory(subject=subject, content=f"PostgreSQL note number {i}")

    results = _search(subject, "postgresql")

    assert len(results.hits) == 50
    scores = [hit.relevance for hit in results.hits]
    assert scores[0] == pytest.approx(1.0)
    assert scores == sorted(scores, reverse=True)
    assert min(scores) > 0
    assert all(relevance(score) not in ("0.00", "-0.00") for score in scores)


def test_relevance_never_reads_zero_for_a_hit():
    assert relevance(1.0) == "1.00"
    assert relevance(0.42) == "0.42"
    assert relevance(0.004) == "<0.01"
    assert relevance(1e-9) == "<0.01"


@pytest.mark.django_db
def test_parked_memories_come_only_when_asked_for_and_archived_ones_never(subject):
    live = NoteFactory(subject=subject, content="Kayak trip on Sunday")
    parked = NoteFactory(subject=subject, content="Kayak repair shop", parked_at=timezone.now())
    NoteFactory(subject=subject, content="Kayak club minutes", archived_at=timezone.now())
    parked_fact = FactFactory(subject=subject, key="boat", value="kayak", parked_at=timezone.now())
    FactFactory(subject=subject, key="old boat", value="kayak", valid_to=timezone.now())  # removed

    assert _refs(_search(subject, "kayak")) == [f"n:{live.pk}"]
    assert sorted(_refs(_search(subject, "kayak", include_parked=True))) == sorted(
        [f"n:{live.pk}", f"n:{parked.pk}", f"f:{parked_fact.pk}"]
    )


@pytest.mark.django_db
def test_another_subjects_memories_are_never_found(subject):
    other = SubjectFactory(app=subject.app, external_id="bob")
    NoteFactory(subject=other, content="Kayak trip")
    FactFactory(subject=other, key="boat", value="kayak")
    Lesson.objects.create(subject=other, text="Kayak with a friend.")

    assert _search(subject, "kayak").hits == []


@pytest.mark.django_db
def test_a_query_of_stop_words_finds_nothing(subject):
    NoteFactory(subject=subject, content="what about the thing")

    assert _search(subject, "what about the ").hits == []


# --- by meaning (the real local model) ---------------------------------------------------------


@pytest.fixture
def local_subject(db, minilm):
    return SubjectFactory(app=AppFactory(config={"memory": {"embeddings": {"provider": "local"}}}))


@pytest.mark.django_db
def test_with_embeddings_on_a_note_is_found_by_meaning_without_a_shared_word(local_subject, actor):
    from memory.services import note_store
    from memory.services.embeddings import embed_notes

    config = get_config(local_subject.app)
    texts = [
        "We had pasta for supper with the neighbours on Friday.",
        "Alice moved the billing database to PostgreSQL 16.",
        "The tax forms are due in April.",
    ]
    notes = [note_store(subject=local_subject, content=text, actor=actor, config=config)[0] for text in texts]
    embed_notes(notes, config=config)

    results = _search(local_subject, "dinner")

    assert results.meaning == "on"
    assert _refs(results) == [f"n:{notes[0].pk}"]  # "supper": no shared word; the others are far
    assert results.hits[0].ways == ["meaning"]
    assert results.hits[0].relevance == pytest.approx(1.0)
    # both ways at once: the PostgreSQL note by its word (and, were it near, by meaning)
    words = _search(local_subject, "postg")
    assert f"n:{notes[1].pk}" in _refs(words)
    assert "words" in words.hits[0].ways
    assert MEANING_MIN_SIMILARITY > 0


# --- highlighting -------------------------------------------------------------------------------


def test_highlight_marks_words_stems_and_prefixes_and_escapes_the_rest():
    text = 'Alice <b>deployed</b> PostgreSQL & "postgres" tools; not notes'

    html = highlight(text, ["deploys", "postg*", "notes"])

    assert html == (
        "Alice &lt;b&gt;<mark>deployed</mark>&lt;/b&gt; <mark>PostgreSQL</mark> &amp; "
        "&quot;<mark>postgres</mark>&quot; tools; not <mark>notes</mark>"
    )


def test_highlight_cuts_a_long_text_around_its_first_match():
    text = " ".join(["filler"] * 100) + " the kayak trip " + " ".join(["more"] * 100)

    html = highlight(text, ["kayak"])

    assert "<mark>kayak</mark>" in html
    assert html.startswith("…") and html.endswith("…")
    assert len(html) < 300


def test_highlight_of_memory_text_never_lets_markup_through():
    html = highlight("<script>alert(1)</script> <mark>x</mark>", ["script*"])

    assert "<script>" not in html and "<mark>x" not in html
    assert html.startswith("&lt;<mark>script</mark>&gt;")
