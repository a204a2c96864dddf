"""Note search at scale: the subject column of the FTS5 index and the rank budget.

Above `budget` matches the search ranks only the notes that hold the rarest terms; these tests
check that it still returns the right notes of the right subject, with the filters applied and
with exactly the scores that the plain OR query gives them.
"""

import pytest
from django.db import connection

from memory.models import Note
from memory.search.lexical import NoteFilter, note_search
from memory.search.schema import missing_triggers
from memory.selectors import note_near_duplicates
from memory.text import query_terms
from tests.factories import NoteFactory, SubjectFactory

sqlite_only = pytest.mark.skipif("connection.vendor != 'sqlite'", reason="FTS5 plans")


def bulk_notes(subject, contents, **fields):
    return Note.objects.bulk_create([Note(subject=subject, content=c, **fields) for c in contents])


def plain_or_scores(subject, terms) -> dict[int, float]:
    """Every matching note of the subject with the score of the plain OR query (FTS5 bm25)."""
    expression = "{content tags} : (" + " OR ".join(f'"{t}"' for t in terms) + ")"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT n.id, -bm25(memory_note_fts, 1.0, 1.0, 0.0) FROM memory_note_fts "
            "JOIN memory_note n ON n.id = memory_note_fts.rowid "
            "WHERE memory_note_fts MATCH %s AND n.subject_id = %s",
            [expression, subject.pk],
        )
        return dict(cursor.fetchall())


@pytest.fixture
def crowded(subject):
    """A subject where 'dinner' and 'alice' are common and 'kayak' is rare (notes 40–42)."""
    common = [f"dinner with alice at place {i}" for i in range(40)]
    rare = ["kayak trip with alice, then dinner", "kayak repair", "a kayak for dinner guests"]
    unrelated = [f"lunch at home number {i}" for i in range(60)]  # so 'dinner' is not in most notes
    return bulk_notes(subject, common + rare + unrelated)


@pytest.mark.postgres
def test_a_note_matching_any_one_term_is_found(subject):
    sailing = NoteFactory(subject=subject, content="Sailing on Saturdays")
    NoteFactory(subject=subject, content="Nothing about boats")

    hits = note_search(subject.pk, query_terms("sailing or chess or violin"), limit=5)

    assert [h.id for h in hits] == [sailing.pk]


@pytest.mark.postgres
def test_search_never_returns_another_subjects_notes(app):
    small, large = SubjectFactory(app=app), SubjectFactory(app=app)
    bulk_notes(large, [f"kayak and dinner number {i}" for i in range(60)])
    mine = NoteFactory(subject=small, content="kayak lessons")

    for budget in (None, 5):
        hits = note_search(small.pk, ["kayak", "dinner"], limit=50, budget=budget)
        assert [h.id for h in hits] == [mine.pk]
        large_hits = note_search(large.pk, ["kayak", "dinner"], limit=100, budget=budget)
        assert mine.pk not in {h.id for h in large_hits} and large_hits


@sqlite_only
def test_below_the_budget_the_ranking_is_the_plain_or_query(subject, crowded):
    terms = ["kayak", "alice", "dinner"]
    reference = plain_or_scores(subject, terms)

    hits = note_search(subject.pk, terms, limit=100)

    assert {h.id for h in hits} == set(reference)
    assert [h.score for h in hits] == sorted(reference.values(), reverse=True)
    for hit in hits:
        assert hit.score == pytest.approx(reference[hit.id])


@sqlite_only
def test_above_the_budget_the_rare_term_picks_candidates_ranked_by_every_term(subject, crowded):
    terms = ["kayak", "alice", "dinner"]
    reference = plain_or_scores(subject, terms)

    hits = note_search(subject.pk, terms, limit=3, budget=5)

    kayak_notes = {n.pk for n in crowded if "kayak" in n.content}
    assert {h.id for h in hits} == kayak_notes
    for hit in hits:  # the same score as in the plain query: alice and dinner still count
        assert hit.score == pytest.approx(reference[hit.id])
    assert [h.id for h in hits] == sorted(kayak_notes, key=lambda pk: -reference[pk])


@sqlite_only
def test_too_few_rare_candidates_are_topped_up_with_the_newest_common_matches(subject, crowded):
    terms = ["kayak", "alice", "dinner"]
    reference = plain_or_scores(subject, terms)

    hits = note_search(subject.pk, terms, limit=6, budget=5)

    assert len(hits) == 6
    assert {n.pk for n in crowded if "kayak" in n.content} <= {h.id for h in hits}
    common = [h.id for h in hits if h.id not in {n.pk for n in crowded[40:43]}]
    newest_common = sorted((n.pk for n in crowded[:40]), reverse=True)[:5]
    assert set(common) <= set(newest_common)
    for hit in hits:
        assert hit.score == pytest.approx(reference[hit.id])
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@sqlite_only
def test_when_even_the_rarest_term_is_too_common_the_newest_matches_are_ranked(subject):
    notes = bulk_notes(subject, [f"dinner plan {i}" for i in range(20)])

    hits = note_search(subject.pk, ["dinner"], limit=20, budget=6)

    assert {h.id for h in hits} == {n.pk for n in notes[-6:]}


@pytest.mark.postgres
def test_filters_apply_to_the_narrowed_candidates(subject, crowded):
    archived = NoteFactory(subject=subject, content="kayak archived")
    Note.objects.filter(pk=archived.pk).update(archived_at="2025-01-01T00:00:00Z")
    scoped = NoteFactory(subject=subject, content="kayak at work")
    Note.objects.filter(pk=scoped.pk).update(scope="work")
    tagged = NoteFactory(subject=subject, content="kayak club", tags=["sport"])

    for budget in (None, 5):
        default = {h.id for h in note_search(subject.pk, ["kayak", "dinner"], limit=100, budget=budget)}
        home = {
            h.id
            for h in note_search(
                subject.pk, ["kayak", "dinner"], limit=100, budget=budget, filters=NoteFilter(scope="")
            )
        }
        sport = note_search(
            subject.pk, ["kayak", "dinner"], limit=100, budget=budget, filters=NoteFilter(tags=["sport"])
        )
        assert archived.pk not in default
        assert scoped.pk in default and scoped.pk not in home
        assert [h.id for h in sport] == [tagged.pk]


@pytest.mark.postgres
def test_a_user_term_never_matches_the_subject_column(app):
    subject = SubjectFactory(app=app)
    NoteFactory(subject=subject, content="nothing numeric here")

    assert note_search(subject.pk, [str(subject.pk)], limit=5) == []


@pytest.mark.postgres
def test_dedup_finds_a_near_duplicate_made_of_common_words_in_a_large_subject(subject, config):
    # more notes than the rank budget share each of the duplicate's words
    words = "weekly team dinner at the harbour restaurant with everyone from work".split()
    filler = [" ".join(words[i % 4 : i % 4 + 5]) + f" round {i}" for i in range(4500)]
    bulk_notes(subject, filler)
    original = NoteFactory(
        subject=subject, content="Weekly team dinner at the harbour restaurant with everyone"
    )

    found = note_near_duplicates(
        subject=subject,
        content="weekly team dinner at the harbour restaurant with everyone, again",
        config=config,
    )

    assert [note.pk for note, _ in found] == [original.pk]


@sqlite_only
def test_the_notes_index_carries_the_subject_column_and_every_trigger(subject):
    note = NoteFactory(subject=subject, content="indexed")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT rowid FROM memory_note_fts WHERE memory_note_fts MATCH %s",
            [f'subject_id : "{subject.pk}"'],
        )
        assert [row[0] for row in cursor.fetchall()] == [note.pk]
    assert missing_triggers(connection) == []


@pytest.mark.postgres
def test_a_long_query_of_many_terms_runs_in_every_plan(subject):
    words = [f"word{i}x" for i in range(40)]
    bulk_notes(subject, [" ".join(words[i : i + 6]) for i in range(34)] * 3)
    terms = query_terms(" ".join(words))

    for budget in (None, 30):
        hits = note_search(subject.pk, terms, limit=20, budget=budget)
        assert len({h.id for h in hits}) == 20
    assert note_search(subject.pk, terms, limit=5, rarest=3)


@pytest.mark.postgres
def test_a_note_that_says_the_word_twice_ranks_above_one_that_says_it_once(subject):
    once = NoteFactory(subject=subject, content="kayak lake trip today")
    twice = NoteFactory(subject=subject, content="kayak kayak trip today")
    bulk_notes(subject, [f"lunch at home number {i}" for i in range(20)])

    hits = note_search(subject.pk, ["kayak"], limit=5)

    assert [h.id for h in hits] == [twice.pk, once.pk]
    assert hits[0].score > hits[1].score


@pytest.mark.postgres
def test_both_databases_stem_alike_and_an_edited_note_is_found_by_its_new_words(subject):
    note = NoteFactory(subject=subject, content="Melanie painted a lake sunrise")

    for word in ("paint", "painting", "paintings", "sunrises"):
        assert [h.id for h in note_search(subject.pk, [word], limit=5)] == [note.pk], word

    Note.objects.filter(pk=note.pk).update(content="Melanie sculpted a clay bowl")

    assert note_search(subject.pk, ["painting"], limit=5) == []
    assert [h.id for h in note_search(subject.pk, ["sculpting"], limit=5)] == [note.pk]
