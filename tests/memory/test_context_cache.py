"""The adaptive context cache (memory/context_cache.py): what is served from it, how stale it
is judged, and every mutation that makes the next turn a fresh build."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from memory.config import get_config
from memory.context import context_build
from memory.context_cache import staleness
from memory.models import ContextCacheEntry, Note, RetrievalEvent, Subject
from memory.services import fact_set, note_store, vote_cast
from memory.services.consent import consent_policy_set
from memory.services.context_cache import context_cache_prune, memory_changed
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.evidence import evidence_record
from tests.factories import SubjectFactory

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
# the defaults, spelled out: full staleness after 6 messages or 900 s, so 150 s a turn is "slow"
CACHE = {
    "enabled": True,
    "maxStaleness": 0.5,
    "fullAfterMessages": 6,
    "fullAfterSeconds": 900,
    "ttlSeconds": 3600,
}


def cache_config(**overrides):
    return get_config().with_overrides({"cache": {**CACHE, **overrides}})


def judged(
    *, seconds_ago=0.0, messages=0, query="lisbon restaurant", cached="lisbon restaurant", **overrides
):
    with time_machine.travel(NOW, tick=False):
        return staleness(
            built_at=timezone.now() - timedelta(seconds=seconds_ago),
            messages_since=messages,
            query=query,
            cached_query=cached,
            config=cache_config(**overrides),
        )


# --- staleness --------------------------------------------------------------------------------


def test_the_same_question_asked_at_once_is_not_stale_at_all():
    assert judged() == 0.0


def test_each_message_since_the_build_adds_staleness_until_full_after_messages():
    # at once (pace 0), so each counts half: 1/6 · 1/2
    assert judged(messages=1) == pytest.approx(1 / 12)
    assert judged(messages=6) == 1.0
    assert judged(messages=60) == 1.0


def test_elapsed_time_adds_staleness_until_full_after_seconds():
    assert judged(seconds_ago=450) == pytest.approx(0.5)
    assert judged(seconds_ago=900) == 1.0
    assert judged(seconds_ago=90_000) == 1.0


def test_a_message_sharing_no_term_with_the_cached_query_is_fully_stale():
    assert judged(query="what about my cat Miso", cached="lisbon restaurant tips") == 1.0


def test_a_message_without_terms_is_a_continuation():
    assert judged(query="ok, and?", cached="lisbon restaurant") == 0.0


def test_half_new_words_count_half_whatever_the_pace():
    assert judged(query="lisbon terrace", cached="lisbon restaurant") == pytest.approx(0.5)
    slow = judged(query="lisbon terrace", cached="lisbon restaurant", seconds_ago=150)
    assert slow == pytest.approx(1 - (1 - 150 / 900) * 0.5)


def test_turns_in_quick_succession_count_half_as_much_as_slow_ones():
    # three messages since the build, all at once (p = 0): a = 3/6 · 1/2
    assert judged(messages=3) == pytest.approx(0.25)
    # the same three over 600 s (150 s a turn, p = 1): a = 3/6 in full, b = 600/900
    slow = judged(messages=3, seconds_ago=600)
    assert slow == pytest.approx(1 - (1 - 0.5) * (1 - 600 / 900))
    # over 60 s (15 s a turn, p = 0.1): a = 0.5 · 0.55
    quick = judged(messages=3, seconds_ago=60)
    assert quick == pytest.approx(1 - (1 - 0.5 * 0.55) * (1 - 60 / 900))
    assert judged(messages=3) < quick < slow


def test_the_terms_combine_so_that_none_lowers_another():
    alone = judged(messages=2)
    assert judged(messages=2, seconds_ago=100) > alone
    assert judged(messages=2, query="lisbon terrace") > alone


@given(
    seconds=st.floats(min_value=0, max_value=10**6),
    messages=st.integers(min_value=0, max_value=1000),
    query=st.sampled_from(["", "lisbon", "lisbon terrace", "cat miso", "lisbon restaurant tips"]),
)
def test_staleness_is_always_between_zero_and_one(seconds, messages, query):
    value = judged(seconds_ago=seconds, messages=messages, query=query)
    assert 0.0 <= value <= 1.0


def test_staleness_is_deterministic():
    args = {"seconds_ago": 77, "messages": 2, "query": "lisbon terrace"}
    assert judged(**args) == judged(**args)


# --- serving ----------------------------------------------------------------------------------


@pytest.fixture
def chat(subject, actor, memories):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)
    return conversation


def turn(conversation, actor, text="thanks"):
    message, _ = message_add(conversation=conversation, role="user", text=text, actor=actor)
    return message


def build(subject, conversation, message, **kwargs):
    return context_build(
        subject=subject, message=message, config=cache_config(), conversation=conversation, **kwargs
    )


FIRST = "Any Lisbon restaurant tips?"
FOLLOW_UP = "Lisbon restaurant tips for tonight?"


def test_a_follow_up_turn_is_served_from_the_cache(subject, chat, actor):
    first = build(subject, chat, FIRST)
    turn(chat, actor, "Yes, I love eating outside")

    second = build(subject, chat, FOLLOW_UP)

    assert first.from_cache is False and first.staleness == 0.0
    assert second.from_cache is True
    assert 0.0 < second.staleness <= 0.5
    assert second.query == FOLLOW_UP
    assert [i.id for i in second.items] == [i.id for i in first.items]
    assert second.as_dict()["from_cache"] is True
    event = RetrievalEvent.objects.get(pk=second.retrieval_event_id)
    assert event.from_cache is True and event.staleness == pytest.approx(second.staleness)
    assert event.query == FOLLOW_UP and event.policy_hash == first.policy_hash
    assert event.mode == first.mode and event.profile == "normal"
    assert [i["id"] for i in event.items] == [i.id for i in first.items]
    assert RetrievalEvent.objects.filter(from_cache=False).count() == 1
    entry = ContextCacheEntry.objects.get(conversation=chat)
    assert entry.hits == 1 and entry.last_hit_at is not None and entry.query == FIRST


def test_a_cached_context_says_which_blocks_the_conversation_already_holds(subject, chat, actor):
    first = build(subject, chat, FIRST)
    second = build(subject, chat, FOLLOW_UP)

    assert not any(b.unchanged for b in first.sections if b.text)
    assert second.from_cache and all(b.unchanged for b in [second.stable_prefix, *second.sections])
    assert second.as_dict()["tail"] == ""


def test_a_hit_counts_the_recalls_it_serves_again(subject, chat, memories):
    first = build(subject, chat, FIRST)
    recalled = [int(i.id[2:]) for i in first.items if i.section == "recalled" and i.kind == "note"]
    before = dict(Note.objects.filter(pk__in=recalled).values_list("pk", "recall_count"))

    build(subject, chat, FOLLOW_UP)

    after = dict(Note.objects.filter(pk__in=recalled).values_list("pk", "recall_count"))
    assert recalled and all(after[pk] == before[pk] + 1 for pk in recalled)


def test_a_new_topic_is_built_afresh_and_replaces_the_entry(subject, chat):
    build(subject, chat, FIRST)

    fresh = build(subject, chat, "What does my cat Miso hate?")

    assert fresh.from_cache is False and fresh.staleness == 0.0
    entry = ContextCacheEntry.objects.get(conversation=chat)
    assert entry.query == "What does my cat Miso hate?" and entry.hits == 0


def test_too_many_messages_since_the_build_make_it_too_stale(subject, chat, actor):
    build(subject, chat, FIRST)
    for _ in range(6):  # cache.fullAfterMessages
        turn(chat, actor, "Lisbon restaurant")

    assert build(subject, chat, FIRST).from_cache is False


def test_an_entry_past_its_ttl_is_not_served(subject, chat):
    config = cache_config(fullAfterSeconds=10**6, ttlSeconds=60)
    with time_machine.travel(NOW, tick=False):
        context_build(subject=subject, message=FIRST, config=config, conversation=chat)
    with time_machine.travel(NOW + timedelta(seconds=59), tick=False):
        assert context_build(subject=subject, message=FIRST, config=config, conversation=chat).from_cache
    with time_machine.travel(NOW + timedelta(seconds=61), tick=False):
        assert not context_build(subject=subject, message=FIRST, config=config, conversation=chat).from_cache


def test_only_recorded_builds_in_a_conversation_use_the_cache(subject, chat):
    build(subject, None, FIRST)
    build(subject, None, FIRST)
    build(subject, chat, FIRST, record=False)
    assert not build(subject, chat, FIRST, record=False).from_cache
    assert not ContextCacheEntry.objects.exists()
    assert not RetrievalEvent.objects.filter(from_cache=True).exists()


def test_with_the_cache_off_every_turn_is_built(subject, chat):
    config = cache_config(enabled=False)
    context_build(subject=subject, message=FIRST, config=config, conversation=chat)

    assert not context_build(subject=subject, message=FIRST, config=config, conversation=chat).from_cache
    assert not ContextCacheEntry.objects.exists()


def test_another_k_or_profile_is_another_entry(subject, chat):
    build(subject, chat, FIRST)

    assert not build(subject, chat, FIRST, k=2).from_cache
    assert not build(subject, chat, FIRST, profile="low_power").from_cache
    assert build(subject, chat, FIRST, k=2).from_cache
    assert ContextCacheEntry.objects.filter(conversation=chat).count() == 3


# --- invalidation: each mutation the issue names makes the next turn a fresh build ---------


def served_after(subject, chat, mutate) -> bool:
    build(subject, chat, FIRST)
    assert build(subject, chat, FOLLOW_UP).from_cache  # it would be served…
    mutate()
    return build(subject, chat, FOLLOW_UP).from_cache  # …but after the mutation?


def test_a_message_in_the_same_conversation_does_not_invalidate(subject, chat, actor):
    assert served_after(subject, chat, lambda: turn(chat, actor, "I love terraces"))


def test_a_message_in_another_conversation_of_the_subject_invalidates(subject, chat, actor):
    other, _ = conversation_get_or_create(subject=subject, external_id="c2", actor=actor)
    assert not served_after(subject, chat, lambda: turn(other, actor, "I moved to Porto"))


def test_a_message_of_another_subject_does_not_invalidate(subject, chat, actor, app):
    stranger = SubjectFactory(app=app, external_id="bob")
    theirs, _ = conversation_get_or_create(subject=stranger, external_id="b1", actor=actor)
    assert served_after(subject, chat, lambda: turn(theirs, actor, "Hello"))


def test_a_fact_invalidates(subject, chat, actor):
    assert not served_after(
        subject, chat, lambda: fact_set(subject=subject, key="city", value="Porto", actor=actor)
    )


def test_a_note_invalidates(subject, chat, actor, config):
    assert not served_after(
        subject,
        chat,
        lambda: note_store(
            subject=subject, content="Alice found a rooftop bar in Lisbon", actor=actor, config=config
        ),
    )


def test_a_vote_invalidates(subject, chat, actor, config, memories):
    assert not served_after(
        subject,
        chat,
        lambda: vote_cast(
            subject=subject, item_kind="note", item_id=memories[0].pk, signal="up", actor=actor, config=config
        ),
    )


def test_a_consent_change_invalidates(subject, chat, actor):
    assert not served_after(
        subject,
        chat,
        lambda: consent_policy_set(subject=subject, category="health", policy="deny", actor=actor),
    )


def test_a_summaries_rebuild_invalidates(subject, chat, actor):
    from chat.summaries.pipeline import summaries_run
    from tests.chat.summaries.phase2_rows import backend_on, extraction_write

    backend_on(subject.app, actor)
    extraction_write(
        subject, actor, "c9", "Release prep", {"decisions": ["Releases are cut on Tuesdays."]}, days_ago=1
    )

    def rebuild():
        run = summaries_run(subject=subject, actor=actor, force=True)
        assert run is not None and run.stats["versions"] > 0

    assert not served_after(subject, chat, rebuild)


def test_the_evidence_of_the_conversations_own_turn_does_not_bump_the_generation(
    subject, chat, actor, config
):
    message = turn(chat, actor, "I'm in Lisbon next week")
    before = Subject.objects.get(pk=subject.pk).memory_generation

    evidence_record(message=message, category="", actor=actor, config=config)
    assert Subject.objects.get(pk=subject.pk).memory_generation == before

    note_store(
        subject=subject,
        content="Alice is in Lisbon next week",
        source_message=message,
        actor=actor,
        config=config,
    )
    assert Subject.objects.get(pk=subject.pk).memory_generation > before


def test_memory_changed_bumps_only_the_subjects_it_names(subject, app):
    stranger = SubjectFactory(app=app, external_id="bob")

    assert memory_changed(subject_id=subject.pk) == 1
    assert memory_changed(subject_ids=[]) == 0

    assert Subject.objects.get(pk=subject.pk).memory_generation == 1
    assert Subject.objects.get(pk=stranger.pk).memory_generation == 0


def test_the_decay_job_bumps_the_subjects_it_touched(subject, app, actor, config, memories):
    from consolidation.services.decay import votes_decay

    stranger = SubjectFactory(app=app, external_id="bob")
    vote_cast(
        subject=subject, item_kind="note", item_id=memories[0].pk, signal="up", actor=actor, config=config
    )
    before = Subject.objects.get(pk=subject.pk).memory_generation

    votes_decay(actor=actor, force=True)

    assert Subject.objects.get(pk=subject.pk).memory_generation == before + 1
    assert Subject.objects.get(pk=stranger.pk).memory_generation == 0


# --- expiry -----------------------------------------------------------------------------------


def test_the_prune_job_deletes_entries_past_their_ttl(subject, chat, actor):
    other, _ = conversation_get_or_create(subject=subject, external_id="c2", actor=actor)
    with time_machine.travel(NOW, tick=False):
        build(subject, chat, FIRST)
    with time_machine.travel(NOW + timedelta(seconds=3000), tick=False):
        build(subject, other, FIRST)
    with time_machine.travel(NOW + timedelta(seconds=3700), tick=False):
        assert context_cache_prune() == 1

    assert list(ContextCacheEntry.objects.values_list("conversation_id", flat=True)) == [other.pk]


def generation(subject) -> int:
    return Subject.objects.get(pk=subject.pk).memory_generation


def test_every_other_write_service_bumps_the_generation(subject, actor, config, memories):
    from memory.documents import SUMMARY_MD
    from memory.models import Lesson, Procedure
    from memory.services import fact_remove, note_edit, note_forget
    from memory.services.documents import document_write
    from memory.services.evidence import evidence_forget
    from memory.services.lessons import lesson_delete, lesson_edit, procedure_edit

    conversation, _ = conversation_get_or_create(subject=subject, external_id="w", actor=actor)
    message = turn(conversation, actor, "I'm in Lisbon next week")
    unit = evidence_record(message=message, category="", actor=actor, config=config)
    lesson = Lesson.objects.create(subject=subject, text="Alice likes terraces.")
    procedure = Procedure.objects.create(subject=subject, title="Booking", steps=["Call.", "Confirm."])
    writes = {
        "note edit": lambda: note_edit(
            note=memories[1], content="Alice had ramen", actor=actor, config=config
        ),
        "note forget": lambda: note_forget(note=memories[2], actor=actor),
        "fact remove": lambda: fact_remove(subject=subject, key="name", actor=actor),
        "fact confirmed": lambda: fact_set(
            subject=subject,
            key="allergy",
            value="peanuts",
            pinned=False,
            keywords=["restaurant"],
            actor=actor,
        ),
        "lesson edit": lambda: lesson_edit(lesson=lesson, text="Alice loves terraces.", actor=actor),
        "procedure edit": lambda: procedure_edit(procedure=procedure, title="Booking a table", actor=actor),
        "lesson delete": lambda: lesson_delete(lesson=lesson, actor=actor),
        "evidence forget": lambda: evidence_forget(evidence=unit, actor=actor),
        "summary document": lambda: document_write(
            subject=subject, path=SUMMARY_MD, content="Lisbon.", actor=actor
        ),
    }
    for name, write in writes.items():
        before = generation(subject)
        write()
        assert generation(subject) > before, name
