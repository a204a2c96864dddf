"""A posted turn's speaker name (Message.name): checked and redacted as it is posted, kept by
the turn's evidence unit, searched with its text, read by the speaker signal and shown in the
context as "Name: …"; a turn without one behaves as before."""

import datetime

import pytest

from memory.context import context_build
from memory.models import Evidence, EvidenceStatus, Message
from memory.search.lexical import evidence_search
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.evidence import evidence_forget, evidence_record
from memory.text import query_terms
from memoryweb.errors import InvalidInput
from memoryweb.models import Counter
from tests.memory.ranking_world import NOW, rank
from tests.memory.secret_corpus import SECRETS

UTC = datetime.UTC
PAINTED = "I painted a horse last week."
QUESTION = "What has Melanie painted?"


@pytest.fixture
def conversation(subject, actor):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)
    return conversation


def turn(conversation, actor, config, text, *, name="", role="user") -> Evidence:
    message, _ = message_add(
        conversation=conversation, role=role, text=text, name=name, occurred_at=NOW, actor=actor
    )
    return evidence_record(message=message, category="", actor=actor, config=config)


def test_a_named_turn_keeps_its_speakers_name_trimmed(conversation, actor, config):
    unit = turn(conversation, actor, config, PAINTED, name="  Melanie ")

    assert Message.objects.get().name == "Melanie"
    assert (unit.name, unit.text, unit.content) == ("Melanie", PAINTED, f"Melanie: {PAINTED}")


def test_a_turn_without_a_name_reads_as_its_text_alone(conversation, actor, config):
    unit = turn(conversation, actor, config, PAINTED)

    assert (unit.name, unit.content) == ("", PAINTED)


@pytest.mark.parametrize(
    "name,message",
    [
        (12, "name must be a string"),
        ("M" * 65, "name must be at most 64 characters"),
        ("Ana\nSystem", "name must be one line"),
    ],
)
def test_a_bad_name_is_refused_by_field_and_nothing_is_written(conversation, actor, name, message):
    with pytest.raises(InvalidInput, match=message) as refused:
        message_add(conversation=conversation, role="user", text=PAINTED, name=name, actor=actor)

    assert refused.value.field == "name"
    assert not Message.objects.exists()


def test_a_secret_in_a_name_is_redacted_before_the_message_and_its_unit_are_written(
    conversation, actor, config
):
    _, secret = SECRETS[0]

    unit = turn(conversation, actor, config, PAINTED, name=secret)

    message = Message.objects.get()
    assert secret not in message.name and message.name.startswith("[REDACTED:")
    assert unit.name == message.name and secret not in unit.content
    assert Counter.objects.get(name="redaction.message").value == 1


@pytest.mark.postgres
def test_the_full_text_index_finds_a_named_turn_by_its_speakers_name(subject, conversation, actor, config):
    named = turn(conversation, actor, config, PAINTED, name="Melanie")
    turn(conversation, actor, config, PAINTED)  # the same words, no name

    hits = evidence_search(subject.pk, query_terms("Melanie"), limit=10)

    assert [h.id for h in hits] == [named.pk]


@pytest.mark.postgres
def test_forgetting_a_named_turn_takes_its_name_out_of_the_index(subject, conversation, actor, config):
    unit = turn(conversation, actor, config, PAINTED, name="Melanie")

    evidence_forget(evidence=unit, actor=actor)
    Evidence.objects.filter(pk=unit.pk).update(status=EvidenceStatus.VISIBLE)  # name and text stay empty

    unit.refresh_from_db()
    assert (unit.name, unit.text) == ("", "")
    assert evidence_search(subject.pk, query_terms("Melanie"), limit=10) == []


def test_a_named_turn_gains_the_speaker_signal_of_a_question_naming_its_speaker(
    subject, conversation, actor, config
):
    said = turn(conversation, actor, config, PAINTED, name="Melanie")
    other = turn(conversation, actor, config, "Your painting of the lake looks lovely!", name="Caroline")
    off = config.with_overrides({"scoring": {"speakerMatch": 0.0, "entityMatch": 0.0}})

    ranked = {n.pk: (s, why) for n, s, why in rank(subject, config, QUESTION)}
    without = {n.pk: s for n, s, _ in rank(subject, off, QUESTION)}

    assert "said by Melanie" in ranked[said.pk][1]
    assert ranked[said.pk][0] == pytest.approx(without[said.pk] + config["scoring.speakerMatch"])
    assert ranked[other.pk][0] == pytest.approx(without[other.pk])
    assert "said by Caroline" not in ranked[other.pk][1]


def test_an_unnamed_turn_with_the_same_words_gains_no_speaker_signal(subject, conversation, actor, config):
    unit = turn(conversation, actor, config, PAINTED)
    off = config.with_overrides({"scoring": {"speakerMatch": 0.0, "entityMatch": 0.0}})

    ((_, score, why),) = rank(subject, config, QUESTION)
    ((_, without, _),) = rank(subject, off, QUESTION)

    assert unit.name == "" and "said by Melanie" not in why and score == pytest.approx(without)


def test_the_context_shows_a_named_turn_as_its_speaker_says_it(subject, conversation, actor, config):
    unit = turn(conversation, actor, config, PAINTED, name="Melanie")

    context = context_build(subject=subject, message=QUESTION, config=config)

    recalled = next(b for b in context.sections if b.name == "recalled").text
    assert f"[e:{unit.pk} · 2024-03-01 · user] Melanie: {PAINTED}" in recalled


def test_a_named_turn_matching_only_its_speakers_name_is_no_full_text_candidate(
    subject, conversation, actor, config
):
    said = turn(conversation, actor, config, PAINTED, name="Melanie")
    elsewhere, _ = conversation_get_or_create(subject=subject, external_id="c2", actor=actor)
    chatter = turn(elsewhere, actor, config, "Cool, so cool!", name="Melanie")
    searched = config.with_overrides({"retrieve": {"nameTerms": "search"}})

    by_name = [n.pk for n, _, _ in rank(subject, searched, QUESTION)]
    ranked = {n.pk: why for n, _, why in rank(subject, config, QUESTION)}

    assert config["retrieve.nameTerms"] == "signals"
    assert chatter.pk in by_name  # its posted name alone matched "melanie"
    assert chatter.pk not in ranked  # the name is left to the speaker signal, as a note's prefix is
    assert "said by Melanie" in ranked[said.pk]
