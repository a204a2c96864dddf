import pytest

from memory.context import context_build
from memory.models import RetrievalEvent
from memory.rewriter import needs_rewrite, rewrite_query
from memory.services import note_store
from memory.services.conversations import conversation_get_or_create, message_add


@pytest.fixture
def conversation(subject, actor):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    for role, text in [
        ("user", "Should we use Postgres or SQLite for the billing service?"),
        ("assistant", "Postgres fits the billing service better: concurrent writers."),
    ]:
        message_add(conversation=conversation, role=role, text=text, actor=actor)
    return conversation


@pytest.mark.parametrize(
    "message,expected",
    [
        ("what did we decide about that?", True),
        ("and the other one?", True),
        ("Postgres?", True),
        ("Which database did we pick for the billing service after comparing write throughput?", False),
    ],
)
def test_only_short_or_referential_messages_pass_the_gate(config, message, expected):
    assert needs_rewrite(message, config) is expected


def test_a_referential_message_is_expanded_from_the_last_turns(conversation, config):
    query, how = rewrite_query(
        message="what did we decide about that?", conversation=conversation, config=config
    )

    assert how == "heuristic"
    assert "postgres" in query and "billing" in query


def test_a_specific_question_is_searched_as_typed(conversation, config):
    message = "Which database did we pick for the billing service after comparing write throughput?"

    assert rewrite_query(message=message, conversation=conversation, config=config) == (message, "none")


def test_without_a_conversation_nothing_is_rewritten(config):
    assert rewrite_query(message="and that?", conversation=None, config=config) == ("and that?", "none")


def test_the_rewriter_can_be_switched_off(conversation, config):
    off = config.with_overrides({"retrieve": {"rewriter": {"enabled": False}}})

    assert rewrite_query(message="and that?", conversation=conversation, config=off)[1] == "none"


def test_the_context_finds_memories_through_the_rewritten_query_and_records_it(
    subject, conversation, actor, config
):
    note, _ = note_store(
        subject=subject, content="Decision: billing service runs on Postgres 16", actor=actor, config=config
    )

    context = context_build(
        subject=subject, message="what did we decide about that?", config=config, conversation=conversation
    )

    assert f"n:{note.pk}" in [i.id for i in context.items]
    event = RetrievalEvent.objects.get(pk=context.retrieval_event_id)
    assert event.query == "what did we decide about that?"
    assert "postgres" in event.rewritten_query
