"""How many SQL statements one context build costs: a regression here is a slower hot read.

The build below touches every section (a pinned and a contextual fact, recalled and indexed
notes, a linked note, a lesson and a procedure) in a conversation that already holds blocks,
so a new query per section, per item or per changed block shows up as a higher count.
"""

import pytest

from memory.context import context_build
from memory.models import Lesson, NoteLink, Procedure
from memory.services import fact_set
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.evidence import evidence_record

# through POST /api/v1/context (retrieve.mode full, no embeddings): the key, the conversation
# with its subject, the rewriter's history, the fact search and the facts, the evidence count
# and ranking, the note count and ranking, the notes, the evidence units, their turn
# neighbours, their sources, their links, the live reached notes and their rows, the lesson
# search and rows, the procedure search and rows, the denied consent categories, the candidate
# notes' `contradicts` links, the candidates' "intrusive" signals in this mode (one for the
# whole build: the applicability judge's intrusive_penalty, docs/feedback.md), mirror
# retrieval's one (the evidence of the placed beliefs that are doubtful or contested:
# memory/context.py Mirror), the conversation's state (`### state`, memory/person/state.py;
# `### consequences` costs nothing for a message without failure or loop signals), the
# conversation's topics (the transcript is off by default), the mode's interaction contract;
# then BEGIN, the deliveries read,
# the changed one written, the recalls of notes and of evidence, the event, COMMIT; and the
# context cache's three (memory/context_cache.py): the subject's generation with its newest
# message, the entry (a miss: built at an older generation), the UPSERT of the new one; and,
# as the message names someone ("Lisbon"), the speaker prefixes of the full-text hits
# (retrieve.nameTerms signals: memory/ranking/notes.py)
API_STATEMENTS = 38
# context_build for a message that finds notes and a turn but no fact, lesson or procedure
# (with the candidate notes' `contradicts` links, the candidates' "intrusive" signals in this
# mode, one statement for the whole build, mirror retrieval's one, the conversation's state row
# — no consequence query: the message shows no failure or loop signal — and the interaction
# contract); its cache entry is current, so the cache
# also counts the messages since (a miss: new topic); and the speaker prefixes of the full-text
# hits, as the message names someone ("Alice")
BUILD_STATEMENTS = 34


@pytest.fixture
def world(subject, actor, memories, config):
    """The memories of tests/memory/conftest.py, plus a link, a lesson, a procedure and a
    conversation that already holds a turn (with its evidence unit)."""
    notes = memories
    NoteLink.objects.create(src=notes[0], dst=notes[4], kind="related")
    Lesson.objects.create(subject=subject, text="Alice prefers restaurants with a terrace.")
    Procedure.objects.create(
        subject=subject, title="Booking a restaurant", steps=["Call the restaurant.", "Mention the allergy."]
    )
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)
    message, _ = message_add(
        conversation=conversation, role="user", text="I'm in Lisbon next week", actor=actor
    )
    evidence_record(message=message, category="", actor=actor, config=config)
    return conversation


def _sections(context):
    return {block["name"]: block["text"] for block in context["blocks"]}


def test_one_context_build_over_the_api_costs_a_fixed_number_of_statements(
    client, world, actor, django_assert_max_num_queries
):
    body = {"subject": "alice", "message": "Any Lisbon restaurant tips?", "conversation": world.pk}
    client.post("/api/v1/context", body, format="json")  # the deliveries exist from here on
    # the next build's profile block differs: its delivery is written again
    fact_set(subject=world.subject, key="city", value="Porto", actor=actor)

    with django_assert_max_num_queries(API_STATEMENTS):
        response = client.post("/api/v1/context", {**body, "full": True}, format="json")

    assert response.status_code == 200
    sections = _sections(response.json())
    # every section had something to place: the count covers each one's queries
    assert all(sections[name] for name in ("profile", "recalled", "lessons", "procedures"))
    assert any(item["expanded"] for item in response.json()["items"])
    assert any(item["kind"] == "evidence" for item in response.json()["items"])


def test_context_build_costs_a_fixed_number_of_statements(
    subject, world, config, django_assert_max_num_queries
):
    context_build(subject=subject, message="Any Lisbon restaurant tips?", config=config, conversation=world)

    with django_assert_max_num_queries(BUILD_STATEMENTS):
        context = context_build(
            subject=subject, message="Where did Alice eat sushi?", config=config, conversation=world
        )

    assert any(not block.unchanged for block in context.sections)
    assert any(item.kind == "evidence" and item.section == "recalled" for item in context.items)
    assert context.retrieval_event_id is not None
