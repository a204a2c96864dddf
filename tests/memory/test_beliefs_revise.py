"""belief_revise (memory/services/beliefs.py): conflict detection, the rules' decision, the
model's decision over the OpenAI and Anthropic wires with its fallback, the person's explicit
set over REST, and the profile's most specific fact per key."""

import json
from datetime import UTC, datetime, timedelta

import httpx2
import pytest

from memory.beliefs.detect import Claim, conflicts_find, cues
from memory.config import get_config
from memory.context import context_build
from memory.models import BeliefRevision, Note, ProfileFact
from memory.services import app_config_set
from memory.services.beliefs import belief_revise
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.facts import fact_set
from memory.services.notes import note_store
from memoryweb.llm import set_http_client_factory
from memoryweb.models import Counter
from tests.llm_wire import anthropic_tool_message

WHEN = datetime(2026, 4, 1, 10, 0, tzinfo=UTC)


def said(subject, actor, text, *, mode="", scope="", days=0):
    conversation, _ = conversation_get_or_create(
        subject=subject, external_id=f"{mode}|{scope}", mode=mode, scope=scope, actor=actor
    )
    message, _ = message_add(
        conversation=conversation,
        role="user",
        text=text,
        occurred_at=WHEN + timedelta(days=days),
        actor=actor,
    )
    return message


def learned(subject, actor, key, value, text, *, mode="", scope=""):
    message = said(subject, actor, text, mode=mode, scope=scope)
    fact, _ = fact_set(subject=subject, key=key, value=value, source_message=message, actor=actor)
    return fact


# --- detection -----------------------------------------------------------------------------------
def test_detection_finds_the_same_key_under_every_qualifier_with_what_changed(subject, actor):
    fact_set(subject=subject, key="standup", value="9:30 on Mondays", actor=actor)
    fact_set(subject=subject, key="standup", value="10:00", mode="coding_debug", actor=actor)
    fact_set(subject=subject, key="other", value="x", actor=actor)

    conflicts = conflicts_find(
        subject, Claim(key="standup", value="9:15 on Tuesdays", text="it's 9:15 on Tuesdays")
    )

    assert {(c.belief.mode, c.belief.value) for c in conflicts} == {
        ("", "9:30 on Mondays"),
        ("coding_debug", "10:00"),
    }
    first = next(c for c in conflicts if c.belief.mode == "")
    assert {"same_key", "changed_value", "number", "date"} <= set(first.signals)


def test_detection_reads_places_negation_and_the_cues_of_the_words(subject, actor):
    learned(subject, actor, "location", "Paris", "I live in Paris")
    (conflict,) = conflicts_find(
        subject, Claim(key="location", value="", text="I don't live in Paris anymore")
    )
    assert "negation" in conflict.signals and "cue:ending" in conflict.signals
    (moved,) = conflicts_find(subject, Claim(key="location", value="Berlin", text="I moved to Berlin"))
    assert {"place", "cue:change"} <= set(moved.signals)
    assert cues("just this once") == ["cue:exception"]
    assert "cue:correction" in cues("Actually, it's Lyon") and "cue:doubt" in cues("not sure any more")


def test_a_note_claim_meets_the_notes_its_words_overlap(subject, actor, config):
    near, _ = note_store(
        subject=subject, content="Team standup is at 9:30 every weekday.", actor=actor, config=config
    )
    note_store(subject=subject, content="Bought a new bicycle helmet.", actor=actor, config=config)

    conflicts = conflicts_find(subject, Claim(kind="note", content="Team standup is at 9:15 every weekday."))

    assert [c.belief.pk for c in conflicts] == [near.pk]
    assert "number" in conflicts[0].signals and conflicts[0].overlap >= 0.3


MANY_NOTES = (
    "Prefers dark mode in every editor.",
    "Drinks coffee black, no sugar.",
    "Runs 5k on Saturday mornings.",
    "Uses PostgreSQL for the billing service.",
    "Team standup is at 9:30 every weekday.",
    "Has a dog named Biscuit.",
)


def test_in_a_subject_of_many_notes_a_claim_leaves_the_notes_it_only_brushes_alone(subject, actor, config):
    for content in MANY_NOTES:
        note_store(subject=subject, content=content, actor=actor, config=config)

    def revise(text):
        return belief_revise(
            subject=subject, claim=Claim(kind="note", content=text, text=text), actor=actor, config=config
        )

    # sharing only how the person stands to things ("prefers") is not being about the same thing
    assert (
        conflicts_find(subject, Claim(kind="note", content="Prefers dark roast coffee in the morning.")) == []
    )
    # a short belief whose words a longer claim holds is related, not the same note said again
    related = conflicts_find(
        subject, Claim(kind="note", content="Runs the billing service migrations on Saturday.")
    )
    assert all("same_content" not in c.signals for c in related)
    # a "not" about something that shares a part of a note says nothing against the note
    assert revise("Not running the billing service migrations on Saturday.") == []
    assert not Note.objects.filter(subject=subject).exclude(archived_at=None).exists()
    # while a "not" about the note as a whole still revises it
    (revision,) = revise("Has no dog named Biscuit.")
    assert revision.action in ("SUPERSEDE", "ARCHIVE")


def test_an_exception_that_says_the_belief_still_holds_is_marked_not_a_change(subject, actor, config):
    """Exceptions in words the first cue lists lacked ("aside from", "keep everything else",
    "just for next Tuesday"), a "nothing's changed" whose change word says no change, and a
    lasting change that says "still" about something else."""
    fact_set(subject=subject, key="reply_language", value="French", actor=actor)
    fact_set(subject=subject, key="alcohol", value="sober", actor=actor)
    fact_set(subject=subject, key="sport", value="running", actor=actor)
    note_store(
        subject=subject, content="Works from the Berlin office on Tuesdays.", actor=actor, config=config
    )

    def fact(key, value, text):
        (revision,) = belief_revise(
            subject=subject, claim=Claim(key=key, value=value, text=text), actor=actor, config=config
        )
        return revision.action

    assert "cue:change" not in cues("Aside from a sip of wine at communion on Sunday, nothing's changed.")
    assert fact("alcohol", "sip of wine", "Aside from a sip of wine at communion, nothing's changed.") == (
        "MARK_EXCEPTION"
    )
    text = "Make tomorrow's summary English for my boss, but keep everything else in French."
    assert fact("reply_language", "English for the summary", text) == "MARK_EXCEPTION"
    text = "My knee gave out so I've switched to swimming; I still miss running though."
    assert fact("sport", "swimming", text) == "SPLIT_BY_TIME"
    text = "Just for next Tuesday I'll dial in from home, the plumber is coming."
    (revision,) = belief_revise(
        subject=subject,
        claim=Claim(kind="note", content="Working from home next Tuesday for the plumber.", text=text),
        actor=actor,
        config=config,
    )
    assert revision.action == "MARK_EXCEPTION"


# --- applying --------------------------------------------------------------------------------------
def test_no_conflict_stores_plainly_and_returns_no_revision(subject, actor, config):
    message = said(subject, actor, "I use Neovim")
    assert (
        belief_revise(
            subject=subject,
            claim=Claim(key="editor", value="Neovim"),
            message=message,
            actor=actor,
            config=config,
        )
        == []
    )
    assert ProfileFact.objects.get(subject=subject, key="editor").source_message == message


def test_a_claim_about_an_earlier_time_goes_into_the_history(subject, actor, config):
    fact = learned(subject, actor, "location", "Berlin", "I live in Berlin")
    earlier = said(subject, actor, "Back then I lived in Madrid", days=-30)

    assert (
        belief_revise(
            subject=subject,
            claim=Claim(key="location", value="Madrid"),
            message=earlier,
            actor=actor,
            config=config,
        )
        == []
    )
    fact.refresh_from_db()
    assert fact.valid_to is None and fact.value == "Berlin"
    assert ProfileFact.objects.get(subject=subject, value="Madrid").valid_to == fact.valid_from


def test_notes_split_by_mode_and_by_scope(subject, actor, config):
    research = said(subject, actor, "x", mode="research_deep_dive")
    old, _ = note_store(
        subject=subject,
        content="Wants step-by-step explanations with the why behind each step.",
        source_message=research,
        actor=actor,
        config=config,
    )
    debugging = said(
        subject,
        actor,
        "When I'm fixing a bug just tell me what to change, skip the why.",
        mode="coding_debug",
    )

    (revision,) = belief_revise(
        subject=subject,
        claim=Claim(
            kind="note",
            content="When debugging, wants explanations of what to change, not the why behind each step.",
        ),
        message=debugging,
        actor=actor,
        config=config,
    )

    assert revision.action == "SPLIT_BY_MODE"
    new = Note.objects.get(pk=next(i for i in revision.result_ids if i != old.pk))
    old.refresh_from_db()
    assert (old.mode, new.mode, old.archived_at) == ("research_deep_dive", "coding_debug", None)


def test_a_note_that_ends_is_archived(subject, actor, config):
    trip, _ = note_store(
        subject=subject, content="Is planning a trip to Japan in April.", actor=actor, config=config
    )
    message = said(subject, actor, "The Japan trip is off, we cancelled everything.")

    (revision,) = belief_revise(
        subject=subject,
        claim=Claim(kind="note", content="The April trip to Japan was cancelled."),
        message=message,
        actor=actor,
        config=config,
    )

    trip.refresh_from_db()
    assert revision.action == "ARCHIVE" and trip.archived_at is not None
    assert Note.objects.filter(subject=subject).count() == 1  # nothing replaces it


# --- the model decides, over the wire ----------------------------------------------------------------
def configure(app, actor, spec="openai/gpt-4o-mini"):
    app_config_set(app=app, config={"memory": {"llm": {"revision": spec}}}, actor=actor)
    return get_config(app)


def test_the_model_decides_over_the_openai_wire(app, subject, actor, openai_wire):
    config = configure(app, actor)
    learned(subject, actor, "location", "Munich", "I live in Munich")
    message = said(subject, actor, "I'm in Berlin now")
    openai_wire.answer_json({"action": "SUPERSEDE", "reason": "The person corrected the city."})

    (revision,) = belief_revise(
        subject=subject,
        claim=Claim(key="location", value="Berlin"),
        message=message,
        actor=actor,
        config=config,
    )

    assert (revision.action, revision.decided_by, revision.reason) == (
        "SUPERSEDE",
        "llm",
        "The person corrected the city.",
    )
    prompt = openai_wire.requests[0]["messages"][-1]["content"]
    assert "fact location: Munich" in prompt and "I'm in Berlin now" in prompt and "cue:change" in prompt


@pytest.mark.parametrize(
    "answer",
    [{"action": "FORGET", "reason": "x"}, {"action": "SPLIT_BY_MODE", "reason": "both modes"}, None],
    ids=["not an action", "a split the belief cannot take", "transport error"],
)
def test_an_unusable_answer_falls_back_to_the_rules_and_is_counted(app, subject, actor, openai_wire, answer):
    config = configure(app, actor)
    learned(subject, actor, "location", "Munich", "I live in Munich")
    message = said(subject, actor, "I moved to Berlin")
    if answer is not None:
        openai_wire.answer_json(answer)  # None: nothing queued, the wire answers 500

    (revision,) = belief_revise(
        subject=subject,
        claim=Claim(key="location", value="Berlin"),
        message=message,
        actor=actor,
        config=config,
    )

    assert (revision.action, revision.decided_by) == ("SPLIT_BY_TIME", "rules")
    fallbacks = Counter.objects.filter(name__startswith="beliefs.revision.llm_fallback.")
    assert sum(c.value for c in fallbacks) == 1


def test_the_model_decides_over_the_anthropic_wire(app, subject, actor, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    sent: list[dict] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        sent.append(body)
        answer = {"action": "MARK_EXCEPTION", "reason": "Fish once; still vegetarian."}
        return httpx2.Response(
            200, json=anthropic_tool_message(body["tools"][0]["name"], answer, output_tokens=20)
        )

    previous = set_http_client_factory(lambda spec: httpx2.Client(transport=httpx2.MockTransport(handler)))
    try:
        config = configure(app, actor, spec="anthropic/claude-haiku-4-5")
        fact = learned(subject, actor, "diet", "vegetarian", "I'm vegetarian")
        message = said(subject, actor, "Had fish at grandma's last night")
        (revision,) = belief_revise(
            subject=subject,
            claim=Claim(key="diet", value="fish"),
            message=message,
            actor=actor,
            config=config,
        )
    finally:
        set_http_client_factory(previous)

    assert len(sent) == 1 and sent[0]["tools"][0]["name"] == "record_revision"
    assert (revision.action, revision.decided_by) == ("MARK_EXCEPTION", "llm")
    fact.refresh_from_db()
    assert fact.exceptions[0]["text"] == "Had fish at grandma's last night"


# --- the person's explicit set (REST) ----------------------------------------------------------------
API = "/api/v1/subjects/alice/profile"


def test_the_rest_set_is_the_persons_reinforce_or_supersede(client, subject):
    first = client.post(API, {"key": "city", "value": "Lille"}, format="json")
    again = client.post(API, {"key": "city", "value": "Lille"}, format="json")
    corrected = client.post(API, {"key": "city", "value": "Lyon"}, format="json")

    assert (first.status_code, again.status_code, corrected.status_code) == (201, 200, 201)
    reinforce, supersede = BeliefRevision.objects.filter(subject=subject).order_by("id")
    assert (reinforce.action, reinforce.decided_by) == ("REINFORCE", "person")
    assert (supersede.action, supersede.decided_by, supersede.result_ids) == (
        "SUPERSEDE",
        "person",
        [corrected.json()["id"]],
    )
    old = ProfileFact.objects.get(pk=first.json()["id"])
    assert (old.value, old.confidence, old.confirmations, old.valid_to is not None) == ("Lille", 0.0, 1, True)


def test_the_rest_set_of_one_mode_leaves_the_unqualified_value_alone(client, subject):
    client.post(API, {"key": "answer_style", "value": "detailed"}, format="json")
    response = client.post(
        API, {"key": "answer_style", "value": "concise", "mode": "coding_debug"}, format="json"
    )

    assert response.status_code == 201 and not BeliefRevision.objects.exists()
    assert ProfileFact.objects.filter(subject=subject, key="answer_style", valid_to=None).count() == 2


# --- the profile renders the most specific fact of a key ------------------------------------------------
def test_a_fact_qualified_by_the_mode_or_scope_wins_over_the_unqualified_one(subject, actor, config):
    fact_set(subject=subject, key="answer_style", value="detailed", actor=actor)
    fact_set(subject=subject, key="answer_style", value="concise", mode="coding_debug", actor=actor)
    fact_set(subject=subject, key="indentation", value="tabs", actor=actor)
    fact_set(subject=subject, key="indentation", value="2 spaces", scope="webapp", actor=actor)
    webapp, _ = conversation_get_or_create(subject=subject, external_id="w", scope="webapp", actor=actor)

    def profile(**kw):
        context = context_build(subject=subject, message="help", config=config, record=False, **kw)
        return next(b.text for b in context.sections if b.name == "profile")

    debugging = profile(mode="coding_debug", conversation=webapp)
    assert "answer_style: concise" in debugging and "detailed" not in debugging
    in_webapp = profile(conversation=webapp)
    assert "indentation: 2 spaces" in in_webapp and "tabs" not in in_webapp
    general = profile()
    assert "answer_style: detailed" in general and "concise" not in general and "indentation: tabs" in general


def test_a_message_read_twice_confirms_a_belief_once(subject, actor, config):
    learned(subject, actor, "location", "Paris", "I live in Paris.")
    again = said(subject, actor, "Still in Paris, yes.", days=1)

    first = belief_revise(
        subject=subject, claim=Claim(key="location", value="Paris"), message=again, actor=actor, config=config
    )
    second = belief_revise(
        subject=subject, claim=Claim(key="location", value="Paris"), message=again, actor=actor, config=config
    )

    assert [r.action for r in first] == ["REINFORCE"] and second == []
    (fact,) = ProfileFact.objects.filter(subject=subject, key="location")
    assert fact.confirmations == 1
    assert BeliefRevision.objects.filter(subject=subject).count() == 1


def test_the_message_a_note_came_from_does_not_reinforce_it(subject, actor, config):
    message = said(subject, actor, "Our billing api deploys on fridays after the staging checklist.")
    note = note_store(
        subject=subject,
        content="The billing api deploys on fridays after the staging checklist.",
        source_message=message,
        actor=actor,
        config=config,
    )[0]
    claim = Claim(kind="note", content="The billing api deploys on fridays after the staging checklist.")
    before = note.confidence

    belief_revise(subject=subject, claim=claim, message=message, actor=actor, config=config)

    note.refresh_from_db()
    assert note.confidence == before
    assert not BeliefRevision.objects.filter(subject=subject, action="REINFORCE").exists()
    assert Note.objects.filter(subject=subject).count() == 1
