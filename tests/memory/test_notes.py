import pytest
from django.db import connection

from memory.config import get_config
from memory.models import Note, NoteLink, NoteSource, NoteVersion
from memory.search.lexical import NoteFilter, fts5_expression
from memory.search.schema import missing_triggers
from memory.selectors import note_recall
from memory.services import note_edit, note_forget, note_store, notes_evict_overflow, vote_cast
from memory.services.conversations import conversation_get_or_create, message_add
from memory.text import query_terms
from memoryweb.errors import InvalidInput
from tests.factories import NoteFactory, SubjectFactory

pytestmark = pytest.mark.postgres


def store(subject, content, actor, config, **kwargs):
    return note_store(subject=subject, content=content, actor=actor, config=config, **kwargs)


def test_store_writes_the_note_its_first_version_and_provenance(subject, actor, config):
    conversation, _ = conversation_get_or_create(
        subject=subject, external_id="c", scope="work", working_dir="/src", actor=actor
    )
    message, _ = message_add(conversation=conversation, role="user", text="hi", actor=actor)

    note, created = store(
        subject, "Deploys go out on Tuesdays", actor, config, tags=["Ops", "ops"], source_message=message
    )

    assert created is True
    assert note.tags == ["ops"]
    assert (note.scope, note.working_dir, note.conversation_id) == ("work", "/src", conversation.pk)
    assert list(NoteVersion.objects.filter(note=note).values_list("version", "content")) == [
        (1, "Deploys go out on Tuesdays")
    ]
    assert NoteSource.objects.get(note=note).message_id == message.pk


@pytest.mark.parametrize(
    "content,tags,field",
    [
        ("", None, "content"),
        ("x" * 4001, None, "content"),
        ("ok", ["t"] * 0 + [f"t{i}" for i in range(17)], "tags"),
        ("ok", ["bad tag!"], "tags"),
        ("ok", "notalist", "tags"),
    ],
)
def test_invalid_notes_are_refused_and_nothing_is_written(subject, actor, config, content, tags, field):
    with pytest.raises(InvalidInput) as error:
        store(subject, content, actor, config, tags=tags)
    assert error.value.field == field
    assert not Note.objects.exists()


def test_a_near_duplicate_merges_into_the_existing_note_keeping_every_source(subject, actor, config):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    first_msg, _ = message_add(conversation=conversation, role="user", text="a", actor=actor)
    second_msg, _ = message_add(conversation=conversation, role="user", text="b", actor=actor)
    original, _ = store(
        subject,
        "Alice is allergic to peanuts and shellfish",
        actor,
        config,
        tags=["health", "food"],
        source_message=first_msg,
    )

    merged, created = store(
        subject,
        "alice is allergic to shellfish and peanuts!",
        actor,
        config,
        tags=["health"],
        source_message=second_msg,
    )

    assert created is False and merged.pk == original.pk
    assert Note.objects.count() == 1
    assert set(NoteSource.objects.filter(note=original).values_list("message_id", flat=True)) == {
        first_msg.pk,
        second_msg.pk,
    }


def test_a_near_duplicate_with_new_tags_is_kept_as_its_own_note(subject, actor, config):
    store(subject, "Alice is allergic to peanuts and shellfish", actor, config, tags=["health"])

    _, created = store(subject, "Alice is allergic to peanuts and shellfish", actor, config, tags=["travel"])

    assert created is True
    assert Note.objects.count() == 2


def test_a_different_note_is_not_merged(subject, actor, config):
    store(subject, "Alice is allergic to peanuts", actor, config)

    _, created = store(subject, "Alice is learning to play the cello", actor, config)

    assert created is True


def test_fifo_eviction_keeps_the_newest_notes(subject, actor, app):
    config = get_config(app).with_overrides({"notes": {"maxEntries": 3}, "dedup": {"enabled": False}})
    notes = [store(subject, f"note number {i} about topic{i}", actor, config)[0] for i in range(5)]

    assert list(Note.objects.order_by("id").values_list("pk", flat=True)) == [n.pk for n in notes[2:]]
    assert not NoteVersion.objects.filter(note_id__in=[notes[0].pk, notes[1].pk]).exists()


def test_eviction_removes_links_of_the_evicted_notes(subject, actor, app):
    config = get_config(app).with_overrides({"notes": {"maxEntries": 1}, "dedup": {"enabled": False}})
    a, _ = store(
        subject, "first note about gardens", actor, config.with_overrides({"notes": {"maxEntries": 10}})
    )
    b = NoteFactory(subject=subject, content="second note about kitchens")
    NoteLink.objects.create(src=a, dst=b)

    evicted = notes_evict_overflow(subject=subject, config=config, actor=actor)

    assert evicted == 1
    assert list(Note.objects.values_list("pk", flat=True)) == [b.pk]
    assert not NoteLink.objects.exists()


def test_utility_weighted_eviction_drops_the_least_useful_note(subject, actor, app):
    config = get_config(app).with_overrides(
        {"eviction": {"utilityWeighted": True}, "dedup": {"enabled": False}}
    )
    old_but_loved, _ = store(subject, "the wifi password hint is the cat's name", actor, config)
    vote_cast(
        subject=subject, item_kind="note", item_id=old_but_loved.pk, signal="up", actor=actor, config=config
    )
    unloved, _ = store(subject, "it rained on a Tuesday once", actor, config)
    vote_cast(
        subject=subject, item_kind="note", item_id=unloved.pk, signal="down", actor=actor, config=config
    )
    store(subject, "Alice prefers window seats", actor, config)

    notes_evict_overflow(
        subject=subject, config=config.with_overrides({"notes": {"maxEntries": 2}}), actor=actor
    )

    assert not Note.objects.filter(pk=unloved.pk).exists()
    assert Note.objects.filter(pk=old_but_loved.pk).exists()


def test_archived_notes_are_not_evicted_and_do_not_count(subject, actor, app):
    config = get_config(app).with_overrides({"notes": {"maxEntries": 1}, "dedup": {"enabled": False}})
    from django.utils import timezone

    archived = NoteFactory(subject=subject, content="archived episode", archived_at=timezone.now())
    live, _ = store(subject, "live note", actor, config)

    assert Note.objects.filter(pk__in=[archived.pk, live.pk]).count() == 2


def test_recall_finds_notes_by_any_term_and_ranks_the_best_first(subject, actor, config):
    cat, _ = store(subject, "Alice's cat is called Miso", actor, config)
    store(subject, "The quarterly report is due on Friday", actor, config)
    dogs, _ = store(subject, "Alice walks the neighbour's dogs on Sundays", actor, config)

    results = note_recall(subject=subject, query="What's my cat's name, and what about the dogs?", k=5)

    ids = [note.pk for note, _ in results]
    assert set(ids) == {cat.pk, dogs.pk}
    assert all(score > 0 for _, score in results)


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "NEAR(a b)",
        "title:cat OR",
        "cat AND NOT dog",
        "*",
        "a'); DROP TABLE memory_note; --",
        "^cat",
        "c++ -dog",
    ],
)
def test_user_text_never_reaches_match_as_syntax(subject, actor, config, query):
    store(subject, "Alice's cat is called Miso", actor, config)

    results = note_recall(subject=subject, query=query, k=5)

    assert isinstance(results, list)
    assert Note.objects.count() == 1


def test_stemming_matches_other_forms_of_a_word(subject, actor, config):
    note, _ = store(subject, "Alice went running along the river", actor, config)

    assert [n.pk for n, _ in note_recall(subject=subject, query="does she run?", k=3)] == [note.pk]


def test_recall_filters_by_tags_scope_and_working_dir(subject, actor, config):
    work, _ = conversation_get_or_create(
        subject=subject, external_id="w", scope="work", working_dir="/repo", actor=actor
    )
    tagged, _ = store(
        subject, "deploy checklist for the api", actor, config, tags=["ops", "api"], conversation=work
    )
    store(subject, "deploy the garden sprinkler", actor, config, tags=["home"])

    by_tag = note_recall(subject=subject, query="deploy", k=5, filters=NoteFilter(tags=["ops"]))
    by_scope = note_recall(subject=subject, query="deploy", k=5, filters=NoteFilter(scope="work"))
    by_dir = note_recall(subject=subject, query="", k=5, filters=NoteFilter(working_dir="/repo"))
    both_tags = note_recall(subject=subject, query="", k=5, filters=NoteFilter(tags=["ops", "home"]))

    assert [n.pk for n, _ in by_tag] == [tagged.pk]
    assert [n.pk for n, _ in by_scope] == [tagged.pk]
    assert [n.pk for n, _ in by_dir] == [tagged.pk]
    assert both_tags == []


def test_recall_never_crosses_subjects(subject, actor, config):
    other = SubjectFactory(app=subject.app, external_id="bob")
    store(other, "Bob's cat is called Pixel", actor, config)

    assert note_recall(subject=subject, query="cat", k=5) == []


def test_archived_notes_are_left_out_of_recall_unless_asked_for(subject, actor, config):
    from django.utils import timezone

    note, _ = store(subject, "old episode about sailing", actor, config)
    Note.objects.filter(pk=note.pk).update(archived_at=timezone.now())

    assert note_recall(subject=subject, query="sailing", k=5) == []
    assert (
        len(note_recall(subject=subject, query="sailing", k=5, filters=NoteFilter(include_archived=True)))
        == 1
    )


def test_edit_writes_a_new_version_and_the_index_follows(subject, actor, config):
    note, _ = store(subject, "Alice drives a blue car", actor, config)

    note_edit(note=note, content="Alice drives a red bicycle", actor=actor, config=config)

    assert list(note.versions.values_list("version", "content")) == [
        (1, "Alice drives a blue car"),
        (2, "Alice drives a red bicycle"),
    ]
    assert note_recall(subject=subject, query="blue car", k=5) == []
    assert [n.pk for n, _ in note_recall(subject=subject, query="bicycle", k=5)] == [note.pk]


def test_forget_deletes_the_note_and_its_index_entry(subject, actor, config):
    note, _ = store(subject, "Alice's locker code is in the blue notebook", actor, config)

    note_forget(note=note, actor=actor)

    assert not Note.objects.exists()
    assert note_recall(subject=subject, query="locker notebook", k=5) == []


def test_query_terms_drop_stop_words_and_quote_each_term():
    terms = query_terms('What did "Alice" say about the C++ build?')

    assert terms == ["alice", "say", "build"]
    assert fts5_expression(terms) == '"alice" OR "say" OR "build"'


@pytest.mark.skipif("connection.vendor != 'sqlite'")
def test_every_fts_trigger_exists_after_migrations(db):
    assert missing_triggers(connection) == []


def test_short_notes_with_few_content_words_are_never_merged(subject, actor, config):
    store(subject, "Maria: Thanks, John. I definitely will!", actor, config)

    _, created = store(subject, "John: Got it! Thanks, Maria. I definitely will.", actor, config)

    assert created is True
