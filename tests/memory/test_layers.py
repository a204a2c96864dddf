"""Evidence → belief → summary in the context (memory/beliefs/__init__.py, docs/layers.md): every
item says its layer, summaries say what they are where they render, and a doubtful or contested
belief brings the evidence it rests on along (mirror retrieval)."""

import pytest

from memory.context import GUIDANCE, context_build
from memory.context_summary import SUMMARY_MARK
from memory.models import (
    Evidence,
    EvidenceStatus,
    Lesson,
    LinkKind,
    Note,
    NoteLink,
    Procedure,
    ProfileFact,
    RetrievalEvent,
    RevisionAction,
)
from memory.services import fact_set, note_store
from memory.services.beliefs import revision_apply
from memory.services.consent import consent_policy_set
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.evidence import evidence_record


@pytest.fixture
def turn(subject, actor, config):
    """A conversation and a message about a bakery, said without the word, with its evidence."""
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)

    def say(text: str, category: str = ""):
        message, _ = message_add(conversation=conversation, role="user", text=text, actor=actor)
        unit = evidence_record(message=message, category=category, actor=actor, config=config)
        return message, unit

    return conversation, say


def _note(subject, actor, config, content, message, confidence=1.0):
    note, _ = note_store(subject=subject, content=content, source_message=message, actor=actor, config=config)
    Note.objects.filter(pk=note.pk).update(confidence=confidence)
    return note


def _tail(context):
    return context.as_dict()["tail"]


def _by_id(context):
    return {item.id: item for item in context.items}


# --- layers -----------------------------------------------------------------------------------
def test_every_context_item_says_its_layer_in_the_build_the_event_and_the_api(
    client, subject, actor, config, memories, turn
):
    conversation, say = turn
    say("I'm in Lisbon next week, any restaurant tips?")
    Lesson.objects.create(subject=subject, text="Alice prefers restaurants in Lisbon with a terrace.")
    Procedure.objects.create(
        subject=subject, title="Booking a Lisbon restaurant", steps=["Call the restaurant.", "Mention it."]
    )

    context = context_build(
        subject=subject, message="Any Lisbon restaurant tips?", config=config, conversation=conversation
    )

    layers = {item.kind: item.as_dict()["layer"] for item in context.items}
    assert layers == {
        "fact": "belief",
        "note": "belief",
        "evidence": "evidence",
        "lesson": "summary",
        "procedure": "summary",
    }
    event = RetrievalEvent.objects.get(pk=context.retrieval_event_id)
    assert {(i["kind"], i["layer"]) for i in event.items} == set(layers.items())
    response = client.post(
        "/api/v1/context",
        {"subject": "alice", "message": "Any Lisbon restaurant tips?", "full": True},
        format="json",
    )
    assert response.status_code == 200
    assert {(i["kind"], i["layer"]) for i in response.json()["items"]} == set(layers.items())


def test_summaries_are_marked_where_they_render_and_the_guidance_says_they_are_not_fact(subject, config):
    Lesson.objects.create(subject=subject, text="Deploys go out on Tuesdays after the checks pass.")
    Procedure.objects.create(subject=subject, title="Deploy the api", steps=["Run the checks.", "Deploy."])

    context = context_build(subject=subject, message="how do I deploy the api?", config=config)

    sections = {b.name: b.text for b in context.sections}
    assert sections["lessons"].startswith(f"### lessons\n{SUMMARY_MARK}\n- [l:")
    assert sections["procedures"].startswith(f"### procedures\n{SUMMARY_MARK}\n- [p:")
    assert not sections["profile"] or SUMMARY_MARK not in sections["profile"]
    assert "summaries" in GUIDANCE and "not established fact" in GUIDANCE
    assert context.stable_prefix.text.startswith(GUIDANCE)  # the longer guidance still fits its cap


def test_the_summary_mark_counts_against_the_sections_cap(subject, config):
    for i in range(6):
        Lesson.objects.create(subject=subject, text=f"Deploy lesson {i}: " + "check the rollout " * 6)
    small = config.with_overrides({"lessons": {"maxTokens": 80}})

    context = context_build(subject=subject, message="deploy rollout", config=small)

    block = next(b for b in context.sections if b.name == "lessons")
    assert block.text.startswith(f"### lessons\n{SUMMARY_MARK}\n")
    assert block.tokens <= 80 and block.omitted >= 1


# --- mirror retrieval -------------------------------------------------------------------------
def test_a_doubtful_note_brings_the_turn_it_rests_on_right_after_it(subject, actor, config, turn):
    conversation, say = turn
    message, unit = say("we went to that place by the river with the green door again")
    note = _note(subject, actor, config, "Alice's favourite bakery is the one by the river", message, 0.4)

    context = context_build(subject=subject, message="which bakery?", config=config)

    items = _by_id(context)
    mirror = items[f"e:{unit.pk}"]
    assert mirror.reason == f"mirror of n:{note.pk}" and mirror.mirror_of == f"n:{note.pk}"
    assert mirror.layer == "evidence" and mirror.section == items[f"n:{note.pk}"].section
    assert mirror.as_dict()["mirror_of"] == f"n:{note.pk}"
    assert mirror.score == items[f"n:{note.pk}"].score
    order = [item.id for item in context.items]
    assert order.index(f"e:{unit.pk}") == order.index(f"n:{note.pk}") + 1
    lines = _tail(context).splitlines()
    at = next(i for i, line in enumerate(lines) if f"n:{note.pk}" in line and "evidence for" not in line)
    assert f"[e:{unit.pk} · " in lines[at + 1] and f"evidence for n:{note.pk}] we went" in lines[at + 1]


def test_a_confident_uncontested_note_comes_alone(subject, actor, config, turn):
    conversation, say = turn
    message, unit = say("we went to that place by the river with the green door again")
    _note(subject, actor, config, "Alice's favourite bakery is the one by the river", message, 0.9)

    context = context_build(subject=subject, message="which bakery?", config=config)

    assert f"e:{unit.pk}" not in _by_id(context)
    assert "evidence for" not in _tail(context)


def test_a_weakened_note_is_contested_and_mirrors_its_source_and_the_doubting_turn(
    subject, actor, config, turn
):
    conversation, say = turn
    message, source = say("we went to that place by the river with the green door again")
    note = _note(subject, actor, config, "Alice's favourite bakery is the one by the river", message)
    # turns between, so that the doubting turn is no neighbour the ranking lifts (a unit the
    # ranking placed is shown once, ranked: test_a_unit_the_ranking_placed_is_not_mirrored_twice)
    for filler in ("the weather turned cold today", "my train was late again", "watched a film last night"):
        say(filler)
    doubt, doubting = say("hmm, not sure that place is still my favourite")
    revision_apply(
        subject=subject,
        belief=note,
        action=RevisionAction.WEAKEN,
        reason="the person doubts it",
        message=doubt,
        actor=actor,
        config=config,
    )
    note.refresh_from_db()
    assert note.confidence >= config["beliefs.mirror.belowConfidence"]  # contested, not doubtful

    context = context_build(subject=subject, message="which bakery?", config=config)

    mirrored = [i for i in context.items if i.mirror_of == f"n:{note.pk}"]
    assert [i.id for i in mirrored] == [f"e:{source.pk}", f"e:{doubting.pk}"]  # oldest first


def test_a_note_with_a_contradicts_link_is_contested(subject, actor, config, turn):
    conversation, say = turn
    message, unit = say("we went to that place by the river with the green door again")
    note = _note(subject, actor, config, "Alice's favourite bakery is the one by the river", message)
    other = _note(subject, actor, config, "Alice says supermarket bread is fine", None)
    NoteLink.objects.create(src=other, dst=note, kind=LinkKind.CONTRADICTS)

    context = context_build(subject=subject, message="which bakery?", config=config)

    assert _by_id(context)[f"e:{unit.pk}"].mirror_of == f"n:{note.pk}"


def test_a_doubtful_fact_brings_its_turn_first_in_recalled(subject, actor, config, turn):
    conversation, say = turn
    message, unit = say("I think I moved last spring, somewhere up north")
    fact, _ = fact_set(subject=subject, key="city", value="Porto", source_message=message, actor=actor)
    ProfileFact.objects.filter(pk=fact.pk).update(confidence=0.5)
    _note(subject, actor, config, "Alice likes the Porto riverside cafes", None)

    context = context_build(subject=subject, message="cafes in Porto?", config=config)

    recalled = [i for i in context.items if i.section == "recalled"]
    assert recalled[0].id == f"e:{unit.pk}" and recalled[0].reason == f"mirror of f:{fact.pk}"
    block = next(b for b in context.sections if b.name == "recalled")
    assert block.text.splitlines()[1].startswith(f"- [e:{unit.pk} · ")
    assert f"evidence for f:{fact.pk}]" in block.text


def test_mirror_keeps_to_max_evidence_the_newest_ones(subject, actor, config, turn):
    conversation, say = turn
    units = []
    note = None
    for text in ("the place by the river, first time", "the river place again", "and again, the river"):
        message, unit = say(text)
        units.append(unit)
        if note is None:
            note = _note(subject, actor, config, "Alice's favourite bakery is by the river", message, 0.3)
        else:
            note.sources.create(message=message, conversation=conversation)
    one = config.with_overrides({"beliefs": {"mirror": {"maxEvidence": 1}}})

    context = context_build(subject=subject, message="which bakery?", config=one)

    assert [i.id for i in context.items if i.mirror_of] == [f"e:{units[-1].pk}"]


def test_with_mirror_off_a_doubtful_note_comes_alone(subject, actor, config, turn):
    conversation, say = turn
    message, unit = say("the place by the river with the green door")
    _note(subject, actor, config, "Alice's favourite bakery is by the river", message, 0.3)
    off = config.with_overrides({"beliefs": {"mirror": {"enabled": False}}})
    on_context = context_build(subject=subject, message="which bakery?", config=config, record=False)
    assert any(i.mirror_of for i in on_context.items)

    context = context_build(subject=subject, message="which bakery?", config=off, record=False)

    assert not any(i.mirror_of for i in context.items)


def test_mirror_respects_consent_and_hidden_units(subject, actor, config, turn):
    conversation, say = turn
    message, unit = say("the place by the river with the green door")
    note = _note(subject, actor, config, "Alice's favourite bakery is by the river", message, 0.3)
    Evidence.objects.filter(pk=unit.pk).update(status=EvidenceStatus.FORGOTTEN)

    context = context_build(subject=subject, message="which bakery?", config=config)
    assert not any(i.mirror_of for i in context.items)

    Evidence.objects.filter(pk=unit.pk).update(status=EvidenceStatus.VISIBLE, category="health")
    consent_policy_set(subject=subject, category="health", policy="deny", actor=actor)
    context = context_build(subject=subject, message="which bakery?", config=config)
    assert f"n:{note.pk}" in _by_id(context) and not any(i.mirror_of for i in context.items)


def test_a_unit_the_ranking_placed_is_not_mirrored_twice(subject, actor, config, turn):
    conversation, say = turn
    message, source = say("the place by the river with the green door")
    note = _note(subject, actor, config, "Alice's favourite bakery is the one by the river", message, 0.5)
    doubt, doubting = say("honestly that bakery had stale croissants last time")
    revision_apply(
        subject=subject,
        belief=note,
        action=RevisionAction.WEAKEN,
        reason="stale croissants",
        message=doubt,
        actor=actor,
        config=config,
    )

    context = context_build(subject=subject, message="which bakery?", config=config)

    ids = [i.id for i in context.items]
    items = _by_id(context)
    assert ids.count(f"e:{doubting.pk}") == 1 and items[f"e:{doubting.pk}"].mirror_of == ""  # ranked
    assert items[f"e:{source.pk}"].mirror_of == f"n:{note.pk}"


def test_a_unit_two_doubtful_beliefs_rest_on_shows_once(subject, actor, config, turn):
    conversation, say = turn
    message, unit = say("the place by the river with the green door, and the one on the hill")
    first = _note(subject, actor, config, "Alice's favourite bakery is the one by the river", message, 0.3)
    second = _note(subject, actor, config, "Alice's second bakery is up on the hill", message, 0.3)

    context = context_build(subject=subject, message="which bakery?", config=config)

    ids = [i.id for i in context.items]
    assert {f"n:{first.pk}", f"n:{second.pk}"} <= set(ids) and ids.count(f"e:{unit.pk}") == 1


def test_a_mirror_never_pushes_a_ranked_note_out(subject, actor, config, turn):
    conversation, say = turn
    message, unit = say("the place by the river with the green door, " + "long story " * 60)
    notes = [
        _note(
            subject,
            actor,
            config,
            f"Alice's bakery note {i}: " + "bread " * 20,
            message if i == 0 else None,
            0.3,
        )
        for i in range(3)
    ]
    tight = config.with_overrides({"recallInjection": {"k": 3, "maxTokens": 150}})
    plain = config.with_overrides(
        {"recallInjection": {"k": 3, "maxTokens": 150}, "beliefs": {"mirror": {"enabled": False}}}
    )

    with_mirror = context_build(subject=subject, message="bakery bread", config=tight, record=False)
    without = context_build(subject=subject, message="bakery bread", config=plain, record=False)

    ranked = lambda c: [i.id for i in c.items if not i.mirror_of]  # noqa: E731
    assert ranked(with_mirror) == ranked(without)
    assert all(b.tokens <= b.cap for b in with_mirror.sections)
    assert f"n:{notes[0].pk}" in ranked(with_mirror)
