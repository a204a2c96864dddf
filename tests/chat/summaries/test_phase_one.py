"""Phase 1 through the pipeline: which conversations are due, and the SessionExtraction written."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from chat.summaries.blocks import parse_block
from chat.summaries.pipeline import conversation_extract, conversations_due
from memory.config import get_config
from memory.models import SessionExtraction
from memory.services import app_config_set
from tests.chat.summaries.conversations import CI_PROJECT
from tests.factories import ConversationFactory, MessageFactory, NoteFactory

NOW = datetime(2025, 3, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def config(app, actor):
    app_config_set(app=app, config={"memory": {"backend": "local"}}, actor=actor)
    return get_config(app)


def conversation_with(subject, turns, *, last_at, external_id=None, **fields):
    conversation = ConversationFactory(
        subject=subject, **({"external_id": external_id} if external_id else {}), **fields
    )
    start = last_at - timedelta(minutes=len(turns) - 1)
    for i, (role, text) in enumerate(turns):
        at = start + timedelta(minutes=i)
        MessageFactory(conversation=conversation, role=role, text=text, occurred_at=at, created_at=at)
    return conversation


def test_conversation_extract_writes_the_extraction_with_the_watermark(subject, config):
    conversation = conversation_with(
        subject, CI_PROJECT, last_at=NOW - timedelta(days=1), scope="invoicing", working_dir="/src/invoicing"
    )
    NoteFactory(
        subject=subject,
        conversation=conversation,
        content="Invoices are due within 30 days.",
        tags=["constraint"],
    )
    system = MessageFactory(conversation=conversation, role="system", text="You are helpful.", created_at=NOW)

    extraction = conversation_extract(conversation=conversation, config=config)

    row = SessionExtraction.objects.get(conversation=conversation)
    assert row.pk == extraction.pk
    assert row.watermark_message_id == system.pk
    assert row.message_count == len(CI_PROJECT)
    assert row.last_message_at == NOW - timedelta(days=1)
    assert row.method == "heuristic"
    assert (row.input_tokens, row.output_tokens) == (0, 0)
    assert row.title == "Set up continuous integration for my Django invoicing"
    assert (row.scope, row.working_dir) == ("invoicing", "/src/invoicing")
    sections = parse_block(row.raw_memory)
    assert "Invoices are due within 30 days." in sections["constraints"]
    assert sections["failures"] and sections["workflows"] and sections["decisions"]


def test_extracting_again_replaces_the_row(subject, config):
    conversation = conversation_with(subject, CI_PROJECT[:3], last_at=NOW - timedelta(days=1))
    first = conversation_extract(conversation=conversation, config=config)
    later = MessageFactory(
        conversation=conversation, role="user", text="We'll use Renovate for dependency updates."
    )

    second = conversation_extract(conversation=conversation, config=config)

    assert SessionExtraction.objects.filter(conversation=conversation).count() == 1
    assert second.pk == first.pk
    assert second.watermark_message_id == later.pk
    assert "We will use Renovate for dependency updates." in parse_block(second.raw_memory)["decisions"]


def test_a_conversation_without_user_or_assistant_messages_writes_nothing(subject, config):
    conversation = ConversationFactory(subject=subject)
    MessageFactory(conversation=conversation, role="system", text="You are helpful.")

    assert conversation_extract(conversation=conversation, config=config) is None
    assert not SessionExtraction.objects.exists()


def test_a_secret_in_the_conversation_is_redacted_in_the_row(subject, config):
    conversation = conversation_with(
        subject,
        [("user", "We decided to use the deploy key AKIAIOSFODNN7EXAMPLE for the staging bucket.")],
        last_at=NOW - timedelta(days=1),
    )

    row = conversation_extract(conversation=conversation, config=config)

    assert "AKIAIOSFODNN7EXAMPLE" not in row.raw_memory
    assert "staging bucket" in row.raw_memory


@time_machine.travel(NOW, tick=False)
def test_conversations_still_active_or_too_old_are_not_due(subject, config):
    active = conversation_with(subject, CI_PROJECT[:2], last_at=NOW - timedelta(hours=11))
    idle = conversation_with(subject, CI_PROJECT[:2], last_at=NOW - timedelta(hours=13))
    old = conversation_with(subject, CI_PROJECT[:2], last_at=NOW - timedelta(days=31))
    edge = conversation_with(subject, CI_PROJECT[:2], last_at=NOW - timedelta(days=29))

    selection = conversations_due(subject=subject, config=config)

    assert selection["due"] == [idle, edge]
    assert (selection["active"], selection["old"]) == (1, 1)
    assert active not in selection["due"] and old not in selection["due"]


@time_machine.travel(NOW, tick=False)
def test_a_conversation_is_due_again_only_when_messages_pass_its_watermark(subject, config):
    conversation = conversation_with(subject, CI_PROJECT[:2], last_at=NOW - timedelta(days=2))
    conversation_extract(conversation=conversation, config=config)

    assert conversations_due(subject=subject, config=config)["due"] == []
    assert conversations_due(subject=subject, config=config)["current"] == 1
    assert conversations_due(subject=subject, config=config, force=True)["due"] == [conversation]

    at = NOW - timedelta(days=1)
    MessageFactory(
        conversation=conversation, role="user", text="One more thing.", occurred_at=at, created_at=at
    )

    assert conversations_due(subject=subject, config=config)["due"] == [conversation]


@time_machine.travel(NOW, tick=False)
def test_at_most_max_rollouts_per_startup_are_due_newest_first(subject, app, actor):
    app_config_set(
        app=app,
        config={"memory": {"backend": "local", "memories": {"maxRolloutsPerStartup": 2}}},
        actor=actor,
    )
    config = get_config(app)
    made = [conversation_with(subject, CI_PROJECT[:2], last_at=NOW - timedelta(days=d)) for d in (5, 1, 3, 2)]

    selection = conversations_due(subject=subject, config=config)

    assert selection["due"] == [made[1], made[3]]
    assert selection["deferred"] == 2


@time_machine.travel(NOW, tick=False)
def test_the_idle_and_age_windows_follow_the_settings(subject, app, actor):
    app_config_set(
        app=app,
        config={
            "memory": {"backend": "local", "memories": {"minRolloutIdleHours": 1, "maxRolloutAgeDays": 3}}
        },
        actor=actor,
    )
    config = get_config(app)
    recent = conversation_with(subject, CI_PROJECT[:2], last_at=NOW - timedelta(hours=2))
    conversation_with(subject, CI_PROJECT[:2], last_at=NOW - timedelta(days=4))

    selection = conversations_due(subject=subject, config=config)

    assert selection["due"] == [recent]
    assert selection["old"] == 1


def test_another_subjects_conversations_are_never_due(subject, config):
    other = ConversationFactory()
    MessageFactory(conversation=other, created_at=NOW - timedelta(days=1))

    with time_machine.travel(NOW, tick=False):
        assert conversations_due(subject=subject, config=config)["due"] == []


def test_a_turn_the_consent_gate_holds_back_never_reaches_the_extraction(subject, config):
    conversation = conversation_with(
        subject,
        [
            ("user", "We decided to use Postgres for the ledger service instead of MySQL."),
            ("assistant", "Good choice for a ledger."),
            ("user", "Also I was diagnosed with diabetes last month, so I decided to cut sugar."),
            ("assistant", "Thanks for telling me."),
        ],
        last_at=NOW - timedelta(days=1),
    )

    with time_machine.travel(NOW):
        row = conversation_extract(conversation=conversation, config=config)

    assert "Postgres" in row.raw_memory
    assert "diabetes" not in row.raw_memory.lower() and "sugar" not in row.raw_memory.lower()
    assert "diabetes" not in row.synopsis.lower() and "diabetes" not in row.title.lower()


def test_a_conversation_held_back_whole_still_moves_its_watermark(subject, config):
    conversation = conversation_with(
        subject,
        [("user", "My doctor changed my insulin dose after the diabetes check-up.")],
        last_at=NOW - timedelta(days=1),
    )

    with time_machine.travel(NOW):
        row = conversation_extract(conversation=conversation, config=config)
        due = conversations_due(subject=subject, config=config)

    assert row.raw_memory == "" and "insulin" not in row.title.lower()
    assert conversation not in due["due"] and due["current"] == 1


def test_a_turn_approved_later_brings_its_conversation_back_for_extraction(subject, config, actor):
    from memory.models import Evidence
    from memory.services.evidence import evidence_record, evidence_reveal

    conversation = conversation_with(
        subject,
        [
            ("user", "We decided to use Postgres for the ledger service instead of MySQL."),
            ("user", "The budget for the ledger hosting is capped at 400 euros a month."),
        ],
        last_at=NOW - timedelta(days=1),
    )
    from memory.categories import classify_category

    for message in conversation.messages.all():
        evidence_record(message=message, category=classify_category(message.text), actor=actor, config=config)
    pending = Evidence.objects.get(conversation=conversation, status="pending")

    with time_machine.travel(NOW):
        before = conversation_extract(conversation=conversation, config=config)
        evidence_reveal(evidence_id=pending.pk)
        due = conversations_due(subject=subject, config=config)["due"]
        after = conversation_extract(conversation=conversation, config=config)

    assert "400" not in before.raw_memory
    assert conversation in due
    assert "400" in after.raw_memory
