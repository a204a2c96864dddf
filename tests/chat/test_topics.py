"""The topic working set (chat/topics.py): refreshed in the background after messages, active
and parked as the conversation moves on, the same rows however often it runs."""

from datetime import UTC, datetime, timedelta

import pytest

from chat.services import messages_add
from chat.tasks import topics_refresh_task
from chat.topics import message_phrases, topics_refresh
from memory.models import ConversationTopic, TopicStatus
from memory.services import app_config_set
from memory.services.conversations import conversation_get_or_create
from memoryweb.models import TaskIntent

START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)

MIGRATION = [
    ("user", "We are moving the billing database from MySQL to Postgres next sprint."),
    ("assistant", "For the Postgres move, dump the billing schema first and test the restore."),
    ("user", "The billing schema has triggers; will the Postgres restore keep them?"),
    ("assistant", "Triggers need rewriting in PL/pgSQL before the Postgres restore."),
]
TRIP = [
    ("user", "Different topic: I'm flying to Lisbon in March with my sister."),
    ("assistant", "Lisbon in March is mild. Book the flight early and a hotel near Alfama."),
    ("user", "Which hotel area in Lisbon is quiet at night?"),
    ("assistant", "Lapa is a quiet Lisbon hotel area, a short tram ride from Alfama."),
    ("user", "Great, and is the tram from the airport easy with luggage in Lisbon?"),
    ("assistant", "From the Lisbon airport take the metro; the tram is crowded with luggage."),
    ("user", "Thanks. Should I book the Alfama walking tour before the flight?"),
]


def post(conversation, actor, turns, *, start=START):
    items = [
        {"role": role, "text": text, "occurred_at": start + timedelta(minutes=i)}
        for i, (role, text) in enumerate(turns)
    ]
    return messages_add(conversation=conversation, items=items, actor=actor)


@pytest.fixture
def conversation(subject, actor):
    return conversation_get_or_create(subject=subject, external_id="work-and-trip", actor=actor)[0]


def topics(conversation):
    return {
        t.label: (t.status, t.mentions)
        for t in ConversationTopic.objects.filter(conversation=conversation).order_by("label")
    }


def rows(conversation):
    return list(
        ConversationTopic.objects.filter(conversation=conversation)
        .order_by("label")
        .values(
            "label",
            "terms",
            "status",
            "weight",
            "mentions",
            "first_message_id",
            "last_message_id",
            "updated_at",
        )
    )


def test_phrases_are_the_salient_words_and_the_pairs_written_side_by_side():
    words, pairs = message_phrases("Can you help me move the billing database to Postgres, please?")

    assert words == ["move", "billing", "database", "postgres"]
    assert pairs == [("billing", "database")]  # the comma ends the phrase


def test_messages_added_refresh_the_conversations_topics_through_the_outbox(
    conversation, actor, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        post(conversation, actor, MIGRATION)

    assert (
        TaskIntent.objects.filter(task="chat.topics_refresh", args=[conversation.pk]).get().sent_at
        is not None
    )
    found = topics(conversation)
    assert found["postgres"] == (TopicStatus.ACTIVE, 4)
    postgres = ConversationTopic.objects.get(conversation=conversation, label="postgres")
    messages = list(conversation.messages.order_by("id"))
    assert (postgres.first_message_id, postgres.last_message_id) == (messages[0].pk, messages[3].pk)
    assert {"restore", "triggers"} <= set(postgres.terms) or "postgres restore" in found
    assert all(status == TopicStatus.ACTIVE for status, _ in found.values())


def test_after_a_change_of_topic_the_new_one_is_active_and_the_old_one_parked(
    conversation, actor, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        post(conversation, actor, MIGRATION)
    with django_capture_on_commit_callbacks(execute=True):
        post(conversation, actor, TRIP, start=START + timedelta(hours=1))

    found = topics(conversation)
    active = {label for label, (status, _) in found.items() if status == TopicStatus.ACTIVE}
    parked = {label for label, (status, _) in found.items() if status == TopicStatus.PARKED}
    assert "lisbon" in active
    assert "postgres" in parked
    assert len(active) <= 3 and len(parked) <= 5


def test_a_second_run_over_the_same_messages_changes_no_row(conversation, actor):
    post(conversation, actor, MIGRATION + TRIP)
    first = topics_refresh(conversation_id=conversation.pk)
    before = rows(conversation)

    second = topics_refresh_task(conversation.pk)

    assert first["created"] == len(before) > 0
    assert (second["created"], second["updated"], second["deleted"]) == (0, 0, 0)
    assert rows(conversation) == before


def test_a_late_run_recomputes_from_the_messages_as_they_are_now(conversation, actor):
    post(conversation, actor, MIGRATION)
    topics_refresh(conversation_id=conversation.pk)
    post(conversation, actor, TRIP, start=START + timedelta(hours=1))

    topics_refresh(conversation_id=conversation.pk)  # the earlier messages' run, arriving late
    late = rows(conversation)
    topics_refresh(conversation_id=conversation.pk)  # the newer messages' own run

    assert rows(conversation) == late
    assert topics(conversation)["lisbon"][0] == TopicStatus.ACTIVE


def test_the_caps_bound_the_active_and_parked_topics(conversation, actor, app):
    app_config_set(app=app, config={"memory": {"topics": {"maxActive": 1, "maxParked": 1}}}, actor=actor)
    post(conversation, actor, MIGRATION + TRIP)

    topics_refresh(conversation_id=conversation.pk)

    statuses = [status for status, _ in topics(conversation).values()]
    assert sorted(statuses) == [TopicStatus.ACTIVE, TopicStatus.PARKED]
    assert topics(conversation)["lisbon"][0] == TopicStatus.ACTIVE


def test_topics_switched_off_queue_no_refresh_and_a_run_writes_nothing(conversation, actor, app):
    app_config_set(app=app, config={"memory": {"topics": {"enabled": False}}}, actor=actor)

    post(conversation, actor, MIGRATION)
    stats = topics_refresh(conversation_id=conversation.pk)

    assert not TaskIntent.objects.filter(task="chat.topics_refresh").exists()
    assert stats == {"skipped": "topics.enabled is false"} and not ConversationTopic.objects.exists()


def test_a_deleted_conversation_is_nothing_to_refresh(conversation):
    pk = conversation.pk
    conversation.delete()

    assert topics_refresh_task(pk) == {"missing": True}
