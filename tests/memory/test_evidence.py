"""Evidence units (every turn a memory): recorded once per message, ranked with notes, gated by
consent, bounded, forgotten for good."""

from datetime import UTC, datetime

import pytest

from memory.context import context_build
from memory.models import Evidence, EvidenceStatus, PendingMemory, RetrievalEvent
from memory.search.lexical import evidence_search
from memory.services import note_forget, note_store
from memory.services.consent import consent_policy_set, pending_approve, pending_reject
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.evidence import evidence_evict_overflow, evidence_forget, evidence_record
from memory.text import query_terms

SHED_KEY = "btw the spare key to the shed is under the blue flowerpot"
WIFI = "the wifi password is in the blue binder on the shelf"  # credentials: asked about first


@pytest.fixture
def conversation(subject, actor):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)
    return conversation


def said(conversation, actor, text, *, role="user", when=None):
    message, _ = message_add(conversation=conversation, role=role, text=text, occurred_at=when, actor=actor)
    return message


def evidence_ids(context) -> list[str]:
    return [item.id for item in context.items if item.kind == "evidence"]


def test_a_turn_is_recorded_once_with_its_speaker_date_and_text(conversation, actor, config):
    when = datetime(2024, 3, 14, 9, 30, tzinfo=UTC)
    message = said(conversation, actor, SHED_KEY, when=when)

    first = evidence_record(message=message, category="", actor=actor, config=config)
    again = evidence_record(message=message, category="", actor=actor, config=config)

    assert first.pk == again.pk and Evidence.objects.count() == 1
    assert (first.role, first.text, first.occurred_at, first.status) == ("user", SHED_KEY, when, "visible")
    assert first.subject_id == conversation.subject_id and first.conversation_id == conversation.pk


def test_system_messages_and_a_disabled_switch_write_no_evidence(conversation, actor, config):
    system = said(conversation, actor, "You are a helpful assistant.", role="system")
    user = said(conversation, actor, SHED_KEY)
    off = config.with_overrides({"evidence": {"enabled": False}})

    assert evidence_record(message=system, category="", actor=actor, config=config) is None
    assert evidence_record(message=user, category="", actor=actor, config=off) is None
    assert not Evidence.objects.exists()


def test_a_turn_is_in_the_next_context_with_its_date_and_speaker(subject, conversation, actor, config):
    message = said(conversation, actor, SHED_KEY, when=datetime(2024, 3, 14, tzinfo=UTC))
    unit = evidence_record(message=message, category="", actor=actor, config=config)

    context = context_build(subject=subject, message="Where is the spare key for the shed?", config=config)

    recalled = next(b for b in context.sections if b.name == "recalled").text
    assert f"[e:{unit.pk} · 2024-03-14 · user] {SHED_KEY}" in recalled
    item = next(i for i in context.items if i.id == f"e:{unit.pk}")
    assert item.kind == "evidence" and item.source == {
        "message_id": message.pk,
        "conversation_id": conversation.pk,
    }
    event = RetrievalEvent.objects.get(pk=context.retrieval_event_id)
    assert f"e:{unit.pk}" in [i["id"] for i in event.items]
    unit.refresh_from_db()
    assert unit.recall_count == 1


def test_evidence_past_the_recalled_slots_is_a_pointer_in_the_memory_index(
    subject, conversation, actor, config
):
    units = [
        evidence_record(
            message=said(conversation, actor, f"the shed key story, part {i}"),
            category="",
            actor=actor,
            config=config,
        )
        for i in range(3)
    ]
    config = config.with_overrides({"recallInjection": {"k": 1}})

    context = context_build(subject=subject, message="the shed key", config=config)

    index = next(b for b in context.sections if b.name == "memory-index").text
    placed = {i.id: i.section for i in context.items}
    assert sorted(placed) == sorted(f"e:{u.pk}" for u in units)
    assert list(placed.values()).count("recalled") == 1
    pointer = next(u for u in units if placed[f"e:{u.pk}"] == "memory-index")
    assert f"- e:{pointer.pk} [{pointer.occurred_at:%Y-%m-%d} user] " in index


def test_a_note_from_a_turn_and_the_turn_itself_never_both_take_a_place(subject, conversation, actor, config):
    message = said(conversation, actor, "I moved to Lisbon in April and love the tram rides")
    note, _ = note_store(
        subject=subject,
        content="The user moved to Lisbon in April and loves the tram rides.",
        source_message=message,
        actor=actor,
        config=config,
    )
    unit = evidence_record(message=message, category="", actor=actor, config=config)

    context = context_build(subject=subject, message="Lisbon tram rides", config=config)

    placed = [i.id for i in context.items]
    assert len({f"n:{note.pk}", f"e:{unit.pk}"} & set(placed)) == 1


def test_the_turn_of_another_message_still_places_beside_a_note(subject, conversation, actor, config):
    note_message = said(conversation, actor, "I moved to Lisbon in April")
    note_store(
        subject=subject,
        content="The user moved to Lisbon in April.",
        source_message=note_message,
        actor=actor,
        config=config,
    )
    other = evidence_record(
        message=said(conversation, actor, "Lisbon trams are my favourite"),
        category="",
        actor=actor,
        config=config,
    )

    context = context_build(subject=subject, message="Lisbon", config=config)

    assert f"e:{other.pk}" in evidence_ids(context)
    assert any(i.kind == "note" for i in context.items)


def test_an_ask_category_hides_the_turn_until_the_person_approves(subject, conversation, actor, config):
    message = said(conversation, actor, WIFI)
    unit = evidence_record(message=message, category="credentials", actor=actor, config=config)
    pending = PendingMemory.objects.get(kind="evidence")

    hidden = context_build(subject=subject, message="where is the wifi password?", config=config)
    pending_approve(pending=pending, actor=actor, config=config)
    shown = context_build(subject=subject, message="where is the wifi password?", config=config)

    assert unit.status == EvidenceStatus.PENDING and pending.source_message_id == message.pk
    assert pending.payload["content"] == WIFI and pending.category.slug == "credentials"
    assert evidence_ids(hidden) == []
    assert evidence_ids(shown) == [f"e:{unit.pk}"]
    pending.refresh_from_db()
    assert pending.result_id == unit.pk


def test_a_declined_turn_loses_its_text_and_never_appears(subject, conversation, actor, config):
    unit = evidence_record(
        message=said(conversation, actor, WIFI), category="credentials", actor=actor, config=config
    )

    pending_reject(pending=PendingMemory.objects.get(kind="evidence"), actor=actor)

    unit.refresh_from_db()
    assert (unit.status, unit.text) == (EvidenceStatus.DENIED, "")
    assert evidence_ids(context_build(subject=subject, message="wifi password binder", config=config)) == []


def test_a_denied_category_keeps_no_text_and_asks_nothing(subject, conversation, actor, config):
    consent_policy_set(subject=subject, category="credentials", policy="deny", actor=actor)

    unit = evidence_record(
        message=said(conversation, actor, WIFI), category="credentials", actor=actor, config=config
    )

    assert (unit.status, unit.text) == (EvidenceStatus.DENIED, "")
    assert not PendingMemory.objects.exists()
    assert evidence_search(subject.pk, query_terms("wifi password binder"), limit=10) == []
    assert evidence_ids(context_build(subject=subject, message="wifi password binder", config=config)) == []


def test_a_forgotten_turn_is_not_written_again_by_a_second_reflection(subject, conversation, actor, config):
    message = said(conversation, actor, SHED_KEY)
    unit = evidence_record(message=message, category="", actor=actor, config=config)

    evidence_forget(evidence=unit, actor=actor)
    again = evidence_record(message=message, category="", actor=actor, config=config)

    assert again.pk == unit.pk and (again.status, again.text) == (EvidenceStatus.FORGOTTEN, "")
    assert evidence_ids(context_build(subject=subject, message="spare key shed", config=config)) == []


def test_forgetting_a_note_forgets_the_turn_it_came_from(subject, conversation, actor, config):
    message = said(conversation, actor, "my sister Ana lives in Porto now")
    note, _ = note_store(
        subject=subject,
        content="The user's sister Ana lives in Porto.",
        source_message=message,
        actor=actor,
        config=config,
    )
    unit = evidence_record(message=message, category="", actor=actor, config=config)

    note_forget(note=note, actor=actor)

    unit.refresh_from_db()
    assert (unit.status, unit.text) == (EvidenceStatus.FORGOTTEN, "")
    assert context_build(subject=subject, message="Where does Ana live? Porto?", config=config).items == []


def test_eviction_keeps_the_newest_turns_up_to_the_cap(subject, conversation, actor, config):
    config = config.with_overrides({"evidence": {"maxEntries": 3}})
    units = [
        evidence_record(
            message=said(conversation, actor, f"turn number {i}"), category="", actor=actor, config=config
        )
        for i in range(5)
    ]

    assert sorted(Evidence.objects.values_list("pk", flat=True)) == [u.pk for u in units[2:]]
    assert evidence_evict_overflow(subject=subject, config=config, actor=actor) == 0


def test_the_eviction_sweep_applies_a_lowered_cap(subject, conversation, actor, config, app):
    from memory.services import app_config_set
    from memory.services.evidence import evidence_evict_sweep

    for i in range(4):
        evidence_record(
            message=said(conversation, actor, f"turn number {i}"), category="", actor=actor, config=config
        )
    app_config_set(app=app, config={"memory": {"evidence": {"maxEntries": 1}}}, actor=actor)

    assert evidence_evict_sweep(actor=actor) == 3
    assert list(Evidence.objects.values_list("text", flat=True)) == ["turn number 3"]


def test_deleting_the_subject_deletes_its_evidence(subject, conversation, actor, config):
    from memory.services import subject_delete

    evidence_record(message=said(conversation, actor, SHED_KEY), category="", actor=actor, config=config)

    subject_delete(subject=subject, actor=actor)

    assert not Evidence.objects.exists()


def test_evidence_off_leaves_the_turns_out_of_the_context(subject, conversation, actor, config):
    evidence_record(message=said(conversation, actor, SHED_KEY), category="", actor=actor, config=config)
    off = config.with_overrides({"evidence": {"enabled": False}})

    assert evidence_ids(context_build(subject=subject, message="spare key shed", config=off)) == []


@pytest.mark.postgres
def test_evidence_full_text_search_finds_stems_and_only_retrievable_units(
    subject, conversation, actor, config
):
    shown = evidence_record(
        message=said(conversation, actor, SHED_KEY), category="", actor=actor, config=config
    )
    evidence_record(
        message=said(conversation, actor, WIFI), category="credentials", actor=actor, config=config
    )
    archived = evidence_record(
        message=said(conversation, actor, "the keys of the car are in the blue bowl"),
        category="",
        actor=actor,
        config=config,
    )
    Evidence.objects.filter(pk=archived.pk).update(archived_at=datetime(2024, 1, 1, tzinfo=UTC))

    hits = evidence_search(subject.pk, query_terms("keys blue binder flowerpots"), limit=10)

    assert [h.id for h in hits] == [shown.pk]
    assert hits[0].score > 0


@pytest.mark.postgres
def test_an_edit_of_the_text_reindexes_it(subject, conversation, actor, config):
    unit = evidence_record(
        message=said(conversation, actor, SHED_KEY), category="", actor=actor, config=config
    )

    evidence_forget(evidence=unit, actor=actor)
    Evidence.objects.filter(pk=unit.pk).update(status=EvidenceStatus.VISIBLE)  # text stays empty

    assert evidence_search(subject.pk, query_terms("spare key shed"), limit=10) == []


def test_with_embeddings_a_turn_is_found_by_meaning(db, minilm, actor):
    from memory.config import get_config
    from memory.models import Embedding
    from memory.services.embeddings import evidence_embed
    from tests.factories import AppFactory, SubjectFactory

    subject = SubjectFactory(app=AppFactory(config={"memory": {"embeddings": {"provider": "local"}}}))
    config = get_config(subject.app)
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    texts = ["The stock market fell sharply today", "I adopted a puppy last week", "We repainted the kitchen"]
    units = [
        evidence_record(message=said(conversation, actor, t), category="", actor=actor, config=config)
        for t in texts
    ]
    for u in units:
        assert evidence_embed(evidence_id=u.pk) == {"embedded": 1}

    context = context_build(
        subject=subject, message="my dog", config=config.with_overrides({"retrieve": {"mode": "vector"}})
    )

    assert Embedding.objects.filter(kind="evidence").count() == 3
    first = context.items[0]
    assert first.id == f"e:{units[1].pk}" and "similar meaning" in first.reason
