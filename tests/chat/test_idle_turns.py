"""A user's last turn that no reply closed still becomes evidence: the idle-turn sweeper
queues a reflection for a conversation once it has been quiet long enough."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from chat.models import ReflectionRun, RunStatus
from chat.reflect import idle_turns_reflect, reflection_enqueue, turn_reflect
from memory.models import Conversation, Evidence
from memory.services import subject_get_or_create
from memory.services.conversations import conversation_get_or_create, message_add

LAST_WORDS = "ok gotta run, the storage unit is number 214 at the Ostbahnhof place"


def post(subject, actor, external_id, *texts):
    conversation, _ = conversation_get_or_create(subject=subject, external_id=external_id, actor=actor)
    when = datetime(2024, 3, 14, 18, 5, tzinfo=UTC)
    messages = [
        message_add(conversation=conversation, role=role, text=text, occurred_at=when, actor=actor)[0]
        for role, text in texts
    ]
    return conversation, messages


def quiet_for(conversation, minutes):
    Conversation.objects.filter(pk=conversation.pk).update(
        updated_at=timezone.now() - timedelta(minutes=minutes)
    )


def test_a_quiet_conversations_unanswered_turn_is_reflected_and_becomes_evidence(subject, actor, settings):
    settings.MEMORYWEB_IDLE_TURN_MINUTES = 10
    conversation, (hello, reply, last) = post(
        subject, actor, "c", ("user", "hi"), ("assistant", "hello!"), ("user", LAST_WORDS)
    )
    turn_reflect(run_id=reflection_enqueue(conversation=conversation, through_message=reply).pk)
    quiet_for(conversation, 11)

    assert idle_turns_reflect() == {"queued": 1}
    run = ReflectionRun.objects.get(status=RunStatus.QUEUED)
    assert run.through_message_id == last.pk
    turn_reflect(run_id=run.pk)

    assert Evidence.objects.get(message=last).text == LAST_WORDS
    assert idle_turns_reflect() == {"queued": 0}  # covered now


def test_a_conversation_still_talking_or_already_covered_is_left_alone(subject, actor, settings):
    settings.MEMORYWEB_IDLE_TURN_MINUTES = 10
    talking, _ = post(subject, actor, "talking", ("user", LAST_WORDS))
    quiet_for(talking, 3)
    queued, (message,) = post(subject, actor, "queued", ("user", LAST_WORDS))
    reflection_enqueue(conversation=queued, through_message=message)
    quiet_for(queued, 30)
    long_gone, _ = post(subject, actor, "long-gone", ("user", LAST_WORDS))
    quiet_for(long_gone, 60 * 24 * 8)  # swept when it went quiet; not scanned forever

    assert idle_turns_reflect() == {"queued": 0}
    assert ReflectionRun.objects.count() == 1


@pytest.mark.parametrize("status", [RunStatus.DONE, RunStatus.ABANDONED])
def test_a_turn_done_or_given_up_is_not_queued_again(subject, actor, settings, status):
    settings.MEMORYWEB_IDLE_TURN_MINUTES = 10
    conversation, (message,) = post(subject, actor, "c", ("user", LAST_WORDS))
    ReflectionRun.objects.create(conversation=conversation, through_message=message, status=status)
    quiet_for(conversation, 30)

    assert idle_turns_reflect() == {"queued": 0}


def test_a_sweep_for_one_subject_leaves_the_other_subjects_conversations(subject, actor, settings, app):
    settings.MEMORYWEB_IDLE_TURN_MINUTES = 10
    other = subject_get_or_create(app=app, external_id="someone-else")
    mine, (message,) = post(subject, actor, "mine", ("user", LAST_WORDS))
    theirs, _ = post(other, actor, "theirs", ("user", LAST_WORDS))
    quiet_for(mine, 30)
    quiet_for(theirs, 30)

    assert idle_turns_reflect(subject=subject) == {"queued": 1}
    assert list(ReflectionRun.objects.values_list("conversation_id", "through_message_id")) == [
        (mine.pk, message.pk)
    ]
    assert idle_turns_reflect() == {"queued": 1}  # the beat's sweep still covers everyone
