"""`bench locomo --summaries`: extraction items as retrieval units mapped back to their turns."""

from datetime import UTC, datetime

from chat.summaries.blocks import render_block
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.documents import session_extraction_write
from memoryweb.bench.locomo_data import Question
from memoryweb.bench.summaries import Unit, UnitIndex, score, summary_units, turns_of

WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_a_unit_maps_to_the_turns_sharing_most_words_with_it():
    turns = [
        ("D1:1", {"adopted", "puppy", "shelter"}),
        ("D1:2", {"puppy", "name"}),
        ("D1:3", {"painting", "lake"}),
    ]
    assert turns_of("Caroline adopted a puppy from the shelter", turns) == {"D1:1", "D1:2"}
    assert turns_of("Melanie painted a sunrise", turns) == frozenset()


def test_the_items_of_an_extraction_become_units_of_its_own_session(subject, actor):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="session_1", actor=actor)
    other, _ = conversation_get_or_create(subject=subject, external_id="session_2", actor=actor)
    texts = [
        "I adopted a puppy from the shelter last week.",
        "What did you name the puppy?",
        "We named her Luna.",
    ]
    messages = [
        message_add(
            conversation=conversation,
            role="user",
            text=t,
            occurred_at=WHEN,
            external_id=f"D1:{n}",
            actor=actor,
        )[0]
        for n, t in enumerate(texts, start=1)
    ]
    message_add(
        conversation=other,
        role="user",
        text="Luna the puppy chewed my shoes.",
        occurred_at=WHEN,
        external_id="D2:1",
        actor=actor,
    )
    session_extraction_write(
        conversation=conversation,
        watermark_message_id=messages[-1].pk,
        message_count=3,
        last_message_at=WHEN,
        title="A puppy",
        synopsis="Caroline adopted a puppy named Luna.",
        raw_memory=render_block({"decisions": ["The puppy from the shelter is named Luna."]}),
        method="heuristic",
    )
    units = summary_units(subject)
    assert [(u.origin, set(u.turns)) for u in units] == [
        ("summary:synopsis", {"D1:1", "D1:3"}),
        ("summary:decisions", {"D1:1", "D1:3"}),
    ]


def test_a_question_is_scored_on_the_turns_of_its_top_units():
    index = UnitIndex(
        [
            Unit(text="Luna is the name of the puppy", turns=frozenset({"D1:3"}), origin="summary:decisions"),
            Unit(text="painting by the lake", turns=frozenset({"D2:1"}), origin="note"),
            Unit(text="a charity run in the park", turns=frozenset({"D3:1"}), origin="note"),
        ]
    )
    question = Question(text="What is the puppy's name?", category="1", evidence=["D1:3", "D1:1"], dropped=[])
    row = score(question, index, [1, 10])
    assert row["by_k"][1] == {"recall": 0.5, "hit": 1.0, "summary_units": 1}
