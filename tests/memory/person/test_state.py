"""The person's state in a conversation (memory/person/state.py, memory/services/state.py):
every user message moves urgency, focus and frustration; they fade with time; `### state`
renders the levels at or above `state.minLevel` where the mode's `renders.state` asks for it."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from memory.context import context_build
from memory.models import ConversationState
from memory.person.state import message_signals
from memory.services import app_config_set
from memory.services.conversations import conversation_get_or_create, message_add

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _sections(context) -> dict[str, str]:
    return {block.name: block.text for block in context.sections}


@pytest.fixture
def conversation(subject, actor):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)
    return conversation


def say(conversation, actor, text, role="user"):
    return message_add(conversation=conversation, role=role, text=text, actor=actor)[0]


@pytest.mark.parametrize(
    "text,dimension,cue",
    [
        ("I need the report fixed asap", "urgency", "asap"),
        ("the deadline is in two hours, help", "urgency", "deadline"),
        ("Please look at it right now", "urgency", "right now"),
        ("The payment page is broken!!", "urgency", "!!"),
        ("ugh, the login is broken", "frustration", "ugh"),
        ("the migration doesn't work on staging", "frustration", "doesn't work"),
        ("WHY IS THIS STILL HAPPENING", "frustration", "capitals"),
        ("`pytest -k auth` fails in test_login.py", "focus", "short and precise"),
    ],
)
def test_a_message_pushes_the_dimension_its_cues_name(text, dimension, cue):
    signals = message_signals(text)

    assert signals.push[dimension] > 0
    assert cue in signals.cues[dimension]


def test_a_calm_message_pushes_nothing():
    signals = message_signals("Could you suggest a book about gardening for a beginner?")

    assert signals.push == {"urgency": 0.0, "focus": 0.0, "frustration": 0.0}


def test_asking_the_same_question_again_is_frustration_and_staying_on_it_is_focus():
    first = "how do I configure the nginx reverse proxy for the api"

    signals = message_signals("how do I configure the nginx reverse proxy for the api server", first)

    assert "asked again" in signals.cues["frustration"]
    assert "same thread" in signals.cues["focus"]


def test_a_new_topic_halves_focus(subject, actor, conversation):
    with time_machine.travel(T0, tick=False):
        say(conversation, actor, "the celery worker log shows the task retries")
        say(conversation, actor, "the celery worker task retries again in the log")
    focused = ConversationState.objects.get(conversation=conversation).focus

    with time_machine.travel(T0, tick=False):
        say(conversation, actor, "what should I cook for dinner with spinach and eggs")

    assert ConversationState.objects.get(conversation=conversation).focus == pytest.approx(
        focused / 2, abs=1e-3
    )


def test_every_user_message_updates_the_state_and_other_roles_do_not(subject, actor, conversation):
    say(conversation, actor, "I need this deployed asap, the deadline is tonight")
    say(conversation, actor, "Sure, here is how to deploy.", role="assistant")
    last = say(conversation, actor, "ok thanks")

    state = ConversationState.objects.get(conversation=conversation)
    assert state.messages == 2
    assert state.last_message_id == last.pk
    assert state.urgency > 0.5
    assert state.signals[0]["urgency"] == ["asap", "deadline"]


def test_urgency_rises_with_each_urgent_message_and_never_passes_one(subject, actor, conversation):
    levels = []
    with time_machine.travel(T0, tick=False):
        for _ in range(4):
            say(conversation, actor, "this is urgent, asap please")
            levels.append(ConversationState.objects.get(conversation=conversation).urgency)

    assert levels == sorted(levels) and levels[0] < levels[-1] <= 1.0


def test_state_decays_by_half_every_half_life(subject, actor, conversation, config):
    with time_machine.travel(T0, tick=False):
        say(conversation, actor, "urgent: the site is down, fix it asap!!")
    stored = ConversationState.objects.get(conversation=conversation).urgency
    half_life = config["state.halfLifeMinutes"]

    with time_machine.travel(T0 + timedelta(minutes=half_life), tick=False):
        say(conversation, actor, "here is the log output")

    assert ConversationState.objects.get(conversation=conversation).urgency == pytest.approx(
        stored / 2, abs=1e-3
    )


def test_the_state_renders_while_high_and_not_once_it_has_faded(subject, actor, conversation, config):
    with time_machine.travel(T0, tick=False):
        say(conversation, actor, "ugh, it still doesn't work and the deadline is in an hour, asap!!")
        fresh = _sections(
            context_build(subject=subject, message="any idea?", config=config, conversation=conversation)
        )
    with time_machine.travel(T0 + timedelta(hours=4), tick=False):
        faded = _sections(
            context_build(subject=subject, message="any idea?", config=config, conversation=conversation)
        )

    assert fresh["state"].startswith("### state\n")
    assert "- urgency: high" in fresh["state"] and "asap" in fresh["state"]
    assert "- frustration:" in fresh["state"] and "doesn't work" in fresh["state"]
    assert faded["state"] == ""


def test_a_calm_conversation_renders_no_state(subject, actor, conversation, config):
    say(conversation, actor, "Could you suggest a book about gardening for a beginner?")

    context = context_build(subject=subject, message="thanks", config=config, conversation=conversation)

    assert _sections(context)["state"] == ""


def test_the_state_renders_only_where_the_mode_renders_it(subject, actor, conversation, config):
    say(conversation, actor, "urgent: the deadline is right now, asap!!")

    shown = {
        mode: _sections(
            context_build(
                subject=subject, message="help", config=config, conversation=conversation, mode=mode
            )
        )["state"]
        for mode in ("general_qa", "coding_debug", "research_deep_dive", "brainstorm")
    }

    assert shown["general_qa"] and shown["coding_debug"]  # renders.state true
    assert shown["research_deep_dive"] == "" and shown["brainstorm"] == ""  # renders.state false


def test_state_enabled_off_neither_updates_nor_renders(app, actor, subject, conversation):
    app_config_set(app=app, config={"memory": {"state": {"enabled": False}}}, actor=actor)
    app.refresh_from_db()
    subject.refresh_from_db()
    conversation.subject = subject
    say(conversation, actor, "urgent asap!!")

    assert not ConversationState.objects.filter(conversation=conversation).exists()


def test_the_min_level_keeps_mild_levels_out(app, actor, subject, conversation):
    say(conversation, actor, "can you do it quickly")  # one weak cue
    app_config_set(app=app, config={"memory": {"state": {"minLevel": 0.9}}}, actor=actor)
    from memory.config import get_config

    context = context_build(
        subject=subject, message="help", config=get_config(app), conversation=conversation
    )

    assert ConversationState.objects.get(conversation=conversation).urgency > 0
    assert _sections(context)["state"] == ""


def test_the_state_stays_under_its_cap(app, actor, subject, conversation):
    say(conversation, actor, "ugh, this still doesn't work, the deadline is asap!! `make test` in api/app.py")
    app_config_set(app=app, config={"memory": {"state": {"maxTokens": 30}}}, actor=actor)
    from memory.config import get_config
    from memory.tokens import estimate_tokens

    block = next(
        b
        for b in context_build(
            subject=subject, message="help", config=get_config(app), conversation=conversation
        ).sections
        if b.name == "state"
    )

    assert block.text and estimate_tokens(block.text) <= 30
    assert block.omitted >= 1
