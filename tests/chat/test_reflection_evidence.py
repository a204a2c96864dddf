"""Reflection writes every user and assistant turn as evidence, so a fact said once is in the
next context even when extraction finds nothing in it."""

from datetime import UTC, datetime

from chat.models import ReflectionRun
from chat.reflect import reflection_enqueue, turn_reflect
from memory.context import context_build
from memory.models import Evidence, EvidenceStatus, Note, PendingMemory, ProfileFact
from memory.services.conversations import conversation_get_or_create, message_add

SHED_KEY = "btw the spare key to the shed is under the blue flowerpot"


def converse(subject, actor, *texts):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    when = datetime(2024, 3, 14, 18, 5, tzinfo=UTC)
    messages = [
        message_add(conversation=conversation, role=role, text=text, occurred_at=when, actor=actor)[0]
        for role, text in texts
    ]
    run = reflection_enqueue(conversation=conversation, through_message=messages[-1])
    return conversation, messages, turn_reflect(run_id=run.pk)


def test_small_talk_extraction_misses_is_in_the_next_context_as_the_turn(subject, actor, config):
    conversation, (user, reply), stats = converse(
        subject, actor, ("user", SHED_KEY), ("assistant", "Good to know, I'll remember that.")
    )

    context = context_build(
        subject=subject, message="where did I say the shed key is?", config=config, conversation=conversation
    )

    assert not Note.objects.exists() and not ProfileFact.objects.exists()  # extraction found nothing
    assert stats["evidence"] == 2
    unit = Evidence.objects.get(message=user)
    recalled = next(b for b in context.sections if b.name == "recalled").text
    assert f"[e:{unit.pk} · 2024-03-14 · user] {SHED_KEY}" in recalled


def test_a_second_reflection_of_the_same_turns_writes_no_second_unit(subject, actor):
    conversation, (user,), _ = converse(subject, actor, ("user", SHED_KEY))
    run = reflection_enqueue(conversation=conversation, through_message=user)
    # a redo from the start (e.g. a reclaimed run) reads the same message again
    ReflectionRun.objects.filter(conversation=conversation).exclude(pk=run.pk).update(status="failed")

    turn_reflect(run_id=run.pk)

    assert Evidence.objects.filter(message=user).count() == 1


def test_system_messages_are_not_evidence(subject, actor):
    converse(subject, actor, ("system", "You are a terse assistant."), ("user", SHED_KEY))

    assert list(Evidence.objects.values_list("role", flat=True)) == ["user"]


def test_a_sensitive_turn_waits_for_consent_and_an_ordinary_one_does_not(subject, actor, config):
    _, (wifi, shed), stats = converse(
        subject, actor, ("user", "the wifi password is in the blue binder on the shelf"), ("user", SHED_KEY)
    )

    assert Evidence.objects.get(message=wifi).status == EvidenceStatus.PENDING
    assert Evidence.objects.get(message=shed).status == EvidenceStatus.VISIBLE
    pending = PendingMemory.objects.get(kind="evidence")
    assert pending.category.slug == "credentials" and pending.source_message_id == wifi.pk
    assert stats["evidence_pending"] >= 1
    context = context_build(subject=subject, message="where is the wifi password?", config=config)
    assert "binder" not in context.as_dict()["tail"]
