"""Working memory in the context (memory/working.py): the conversation's recent transcript and
its topic working set, the last two sections of the tail."""

import copy
import json
from datetime import UTC, datetime, timedelta

import pytest

from chat.topics import topics_refresh
from memory.config import DEFAULTS, get_config
from memory.context import SECTION_ORDER, context_build
from memory.models import ConversationTopic, TopicStatus
from memory.modes import BUILTIN_DIR, mode_from_manifest
from memory.services import app_config_set
from memory.services.conversations import conversation_get_or_create, message_add
from memory.tokens import estimate_tokens
from memory.working import TRANSCRIPT_MIN_TOKENS, transcript_budget
from memoryweb.errors import ConfigError

START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def conversation(subject, actor):
    return conversation_get_or_create(subject=subject, external_id="c", actor=actor)[0]


def say(conversation, actor, role, text, minutes):
    return message_add(
        conversation=conversation,
        role=role,
        text=text,
        occurred_at=START + timedelta(minutes=minutes),
        actor=actor,
    )[0]


def transcript_on(app, actor, **keys):
    app_config_set(app=app, config={"memory": {"recentTranscript": {"enabled": True, **keys}}}, actor=actor)
    return get_config(app)


def block(context, name):
    return next(b for b in context.sections if b.name == name)


def mode_rendering(**renders):
    """general_qa with some of its `renders` switched."""
    document = copy.deepcopy(json.loads((BUILTIN_DIR / "general_qa.json").read_text()))
    document["name"] = "test_mode"
    document["renders"].update(renders)
    return mode_from_manifest(document, source="test_mode.json", builtin=True)


# --- the transcript ------------------------------------------------------------------------


def test_the_transcript_is_off_by_default_and_its_block_stays_empty(conversation, actor, config):
    say(conversation, actor, "user", "My flight to Lisbon leaves Friday.", 0)

    context = context_build(
        subject=conversation.subject, message="hotel tips?", config=config, conversation=conversation
    )

    assert DEFAULTS["recentTranscript"]["enabled"] is False
    assert block(context, "transcript").text == ""
    assert "### transcript" not in context.as_dict()["tail"]


def test_the_transcript_shows_the_turns_oldest_first_with_date_and_role_and_not_the_message_answered(
    conversation, actor, app
):
    config = transcript_on(app, actor)
    say(conversation, actor, "system", "You are a travel agent.", 0)
    say(conversation, actor, "user", "My flight to Lisbon leaves Friday.", 1)
    say(conversation, actor, "assistant", "Noted: Lisbon on Friday.", 2)
    say(conversation, actor, "user", "Any hotel tips?", 3)

    context = context_build(
        subject=conversation.subject, message="Any hotel tips?", config=config, conversation=conversation
    )

    assert block(context, "transcript").text == (
        "### transcript\n"
        "- [2026-11-02 09:01 · user] My flight to Lisbon leaves Friday.\n"
        "- [2026-11-02 09:02 · assistant] Noted: Lisbon on Friday."
    )
    assert block(context, "transcript").omitted == 0
    assert context.as_dict()["tail"].endswith(block(context, "transcript").text)


def test_a_message_not_yet_stored_leaves_the_last_user_turn_in_the_transcript(conversation, actor, app):
    config = transcript_on(app, actor)
    say(conversation, actor, "user", "Any hotel tips?", 0)

    context = context_build(
        subject=conversation.subject, message="And restaurants?", config=config, conversation=conversation
    )

    assert block(context, "transcript").text == "### transcript\n- [2026-11-02 09:00 · user] Any hotel tips?"


def test_the_newest_turns_that_fit_the_budget_are_kept_and_the_earlier_ones_counted(conversation, actor, app):
    config = transcript_on(app, actor, budgetTokens=2048)
    for i in range(60):  # ~70 tokens a line: about 29 fit in 2048
        say(conversation, actor, "user" if i % 2 == 0 else "assistant", f"turn {i:02d} " + "word " * 50, i)

    context = context_build(
        subject=conversation.subject, message="next", config=config, conversation=conversation
    )

    transcript = block(context, "transcript")
    lines = transcript.text.splitlines()
    shown = [int(line.split("] turn ")[1][:2]) for line in lines[2:]]
    assert transcript.cap == 2048 and estimate_tokens(transcript.text) <= 2048
    assert shown == list(range(60 - len(shown), 60))  # the newest, oldest first, no gap
    assert 20 < len(shown) < 60
    assert lines[1] == f"({60 - len(shown)} earlier turns not shown)" and transcript.omitted == 60 - len(
        shown
    )


def test_a_budget_under_2048_counts_as_2048(conversation, actor, app):
    config = transcript_on(app, actor, budgetTokens=100)
    for i in range(40):
        say(conversation, actor, "user", f"turn {i:02d} " + "word " * 50, i)

    context = context_build(
        subject=conversation.subject, message="next", config=config, conversation=conversation
    )

    transcript = block(context, "transcript")
    assert transcript_budget(config) == TRANSCRIPT_MIN_TOKENS == transcript.cap == 2048
    assert 1800 < estimate_tokens(transcript.text) <= 2048


def test_a_negative_budget_is_refused_naming_the_key(app, actor):
    with pytest.raises(ConfigError) as error:
        app_config_set(app=app, config={"memory": {"recentTranscript": {"budgetTokens": -1}}}, actor=actor)

    assert error.value.key == "memory.recentTranscript.budgetTokens"


def test_a_newest_turn_longer_than_the_budget_shows_its_beginning(conversation, actor, app):
    config = transcript_on(app, actor)
    say(conversation, actor, "user", "short and old", 0)
    say(conversation, actor, "assistant", "long " * 3000, 1)

    context = context_build(
        subject=conversation.subject, message="next", config=config, conversation=conversation
    )

    transcript = block(context, "transcript")
    assert transcript.text.startswith(
        "### transcript\n(1 earlier turn not shown)\n- [2026-11-02 09:01 · assistant] long"
    )
    assert transcript.text.endswith("…") and estimate_tokens(transcript.text) <= 2048


def test_the_modes_transcript_section_sets_the_budget(conversation, actor, app):
    config = transcript_on(app, actor)
    for i in range(80):
        say(conversation, actor, "user", f"turn {i:02d} " + "word " * 50, i)

    general = context_build(
        subject=conversation.subject, message="n", config=config, conversation=conversation
    )
    coding = context_build(
        subject=conversation.subject,
        message="n",
        config=config,
        conversation=conversation,
        mode="coding_debug",
    )

    assert (block(general, "transcript").cap, block(coding, "transcript").cap) == (2048, 4096)
    assert block(coding, "transcript").omitted < block(general, "transcript").omitted
    assert 2048 < estimate_tokens(block(coding, "transcript").text) <= 4096


def test_a_mode_that_does_not_render_the_transcript_never_shows_it(conversation, actor, app):
    config = transcript_on(app, actor)
    say(conversation, actor, "user", "My flight to Lisbon leaves Friday.", 0)

    context = context_build(
        subject=conversation.subject,
        message="n",
        config=config,
        conversation=conversation,
        mode=mode_rendering(transcript=False),
    )

    assert block(context, "transcript").text == "" and "### transcript" not in context.as_dict()["tail"]


# --- topics --------------------------------------------------------------------------------

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
    ("user", "Is the tram from the airport easy with luggage in Lisbon?"),
    ("assistant", "From the Lisbon airport take the metro; the tram is crowded with luggage."),
    ("user", "Should I book the Alfama walking tour before the flight?"),
]


@pytest.fixture
def moved_on(conversation, actor):
    """A conversation that went from a database migration to a trip, its topics refreshed."""
    for minutes, (role, text) in enumerate(MIGRATION + TRIP):
        say(conversation, actor, role, text, minutes)
    topics_refresh(conversation_id=conversation.pk)
    return conversation


def test_the_topics_section_says_what_is_active_and_what_is_parked(moved_on, config):
    context = context_build(
        subject=moved_on.subject, message="and the metro?", config=config, conversation=moved_on
    )

    lines = block(context, "topics").text.splitlines()
    assert lines[0] == "### topics"
    assert lines[1].startswith("active: lisbon (")
    assert lines[2].startswith("parked: postgres (") and "billing schema" in lines[2]
    assert estimate_tokens(block(context, "topics").text) <= config["topics.maxTokens"] == 200
    active = ConversationTopic.objects.filter(conversation=moved_on, status=TopicStatus.ACTIVE)
    assert all(t.label in lines[1] for t in active)


def test_topics_come_after_the_other_sections_and_before_the_transcript(moved_on, app, actor):
    config = transcript_on(app, actor)

    context = context_build(
        subject=moved_on.subject, message="and the metro?", config=config, conversation=moved_on
    )

    names = [b.name for b in context.sections]
    assert names[-2:] == ["topics", "transcript"] == SECTION_ORDER[-2:]
    tail = context.as_dict()["tail"]
    assert tail.index("### topics") < tail.index("### transcript")


def test_topics_that_do_not_fit_their_cap_are_counted_as_left_out(moved_on, app, actor):
    app_config_set(app=app, config={"memory": {"topics": {"maxTokens": 16}}}, actor=actor)

    context = context_build(
        subject=moved_on.subject, message="n", config=get_config(app), conversation=moved_on
    )

    topics = block(context, "topics")
    stored = ConversationTopic.objects.filter(conversation=moved_on).count()
    assert estimate_tokens(topics.text) <= 16
    assert topics.text.startswith("### topics\nactive: lisbon")
    assert topics.omitted == stored - 1 > 0


def test_topics_switched_off_or_not_rendered_by_the_mode_leave_the_block_empty(moved_on, app, actor, config):
    hidden = context_build(
        subject=moved_on.subject,
        message="n",
        config=config,
        conversation=moved_on,
        mode=mode_rendering(topics=False),
    )
    app_config_set(app=app, config={"memory": {"topics": {"enabled": False}}}, actor=actor)
    off = context_build(subject=moved_on.subject, message="n", config=get_config(app), conversation=moved_on)

    assert block(hidden, "topics").text == "" and block(off, "topics").text == ""
    assert "### topics" not in hidden.as_dict()["tail"] + off.as_dict()["tail"]


def test_without_a_conversation_both_blocks_are_listed_empty(subject, app, actor):
    config = transcript_on(app, actor)

    context = context_build(subject=subject, message="hello there", config=config)

    assert [(b.name, b.text) for b in context.sections[-2:]] == [("topics", ""), ("transcript", "")]
