"""A long pasted message reflected chunk by chunk: posted through the messages API and reflected
in the worker (eager tasks) on the heuristic path, and on the model path over a fake OpenAI."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from chat.models import ReflectionRun
from chat.reflect import reflection_enqueue, turn_reflect
from chat.reflection.chunking import message_chunks
from memory.config import get_config
from memory.models import Note, PendingMemory, ProfileFact
from memory.services import app_config_set, fact_set
from memory.services.conversations import conversation_get_or_create, message_add
from memoryweb.celery import app as celery_app

DATA = Path(__file__).resolve().parent.parent / "data" / "chunking"
TRANSCRIPT = (DATA / "voice_transcript.txt").read_text(encoding="utf-8")
CHAT_LOG = (DATA / "chat_log.txt").read_text(encoding="utf-8")
POSTED = datetime(2026, 3, 14, 18, 30, tzinfo=UTC)

pytestmark = pytest.mark.django_db


def empty_answer(**parts):
    return {"facts": [], "notes": [], "evolutions": [], "retractions": [], **parts}


def fact(key, value, message=1):
    return {
        "message": message,
        "key": key,
        "value": value,
        "pinned": False,
        "keywords": ["work", "food"],
        "confidence": 0.9,
        "category": None,
    }


def note(content, message=1, occurred_at=None):
    return {
        "message": message,
        "content": content,
        "tags": ["decision"],
        "occurred_at": occurred_at,
        "category": None,
    }


def kept_or_asked(subject):
    """The facts stored and the facts waiting for the person's consent (health, pets …)."""
    stored = list(ProfileFact.objects.filter(subject=subject).values_list("key", "value"))
    asked = [
        (p["key"], p["value"])
        for p in PendingMemory.objects.filter(subject=subject, kind="fact").values_list("payload", flat=True)
    ]
    return sorted(stored + asked)


def test_a_pasted_transcript_posted_through_the_api_yields_each_fact_and_note_once(
    client, subject, django_capture_on_commit_callbacks
):
    celery_app.conf.task_always_eager = True
    try:
        conversation = client.post(
            "/api/v1/conversations", {"subject": "alice", "external_id": "voice"}, format="json"
        ).json()
        posted = client.post(
            f"/api/v1/conversations/{conversation['id']}/messages", {"text": TRANSCRIPT}, format="json"
        )
        with django_capture_on_commit_callbacks(execute=True):
            client.post(
                f"/api/v1/conversations/{conversation['id']}/responses",
                {"text": "Thanks, I have read the transcript."},
                format="json",
            )
    finally:
        celery_app.conf.task_always_eager = False

    assert posted.status_code == 201
    run = ReflectionRun.objects.get()
    assert run.status == "done" and run.stats["source"] == "heuristic"
    assert run.stats["chunking"] == {"messages": 1, "chunks": 15, "level": 0, "model_cuts": 0, "fallback": ""}
    assert run.stats["dropped"] == {"facts": 0, "notes": 0}
    stored = ProfileFact.objects.filter(subject=subject)
    assert kept_or_asked(subject) == [
        ("allergies", "shellfish"),
        ("diet", "vegetarian"),
        ("employer", "Northwind Analytics"),
        ("job_title", "data engineer"),
        ("languages.learning", "Portuguese"),
        ("location", "Leeds"),
        ("name", "Dana Whitfield"),
        ("pets", "Biscuit (dog)"),  # the beagle is Biscuit
    ]  # one version each: nothing set twice, nobody else's facts
    source = stored.get(key="name").source_message
    assert source.text == TRANSCRIPT and {f.source_message_id for f in stored} == {source.pk}
    notes = list(Note.objects.filter(subject=subject).values_list("content", flat=True))
    assert len([n for n in notes if n.startswith("We decided to book the cabin in Snowdonia")]) == 1
    assert len([n for n in notes if n.startswith("I'm going to run the Leeds half marathon")]) == 1
    assert not [n for n in notes if "Sheffield" in n or "Crumb Bakery" in n]


@pytest.fixture
def llm_app(app, actor):
    app_config_set(app=app, config={"memory": {"llm": {"reflection": "openai/gpt-4o-mini"}}}, actor=actor)
    return app


def test_the_model_reads_a_long_chat_log_chunk_by_chunk_told_what_it_already_gave(
    llm_app, subject, actor, openai_wire
):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="log", actor=actor)
    log, _ = message_add(
        conversation=conversation, role="user", text=CHAT_LOG, actor=actor, occurred_at=POSTED
    )
    reply, _ = message_add(
        conversation=conversation, role="assistant", text="Got it.", actor=actor, occurred_at=POSTED
    )
    chunks = message_chunks(CHAT_LOG, config=get_config(llm_app)).chunks
    assert len(chunks) == 3
    openai_wire.answer_json(
        empty_answer(facts=[fact("allergies", "peanuts"), fact("employer", "Brightline")])
    )
    openai_wire.answer_json(
        empty_answer(
            facts=[fact("allergies", "peanuts")],  # said again in the second chunk
            notes=[note("Alice's team decided to go with the blue logo for the launch.")],
        )
    )
    openai_wire.answer_json(
        empty_answer(
            facts=[fact("employer", "Brightline Studio")],  # a newer value supersedes
            notes=[note("Alice's team decided to go with the blue logo for the launch.")],
        )
    )
    openai_wire.answer_json(empty_answer())  # the reply, a whole message

    run = reflection_enqueue(conversation=conversation, through_message=reply)
    stats = turn_reflect(run_id=run.pk)

    assert stats["source"] == "llm" and stats["chunking"]["chunks"] == 3
    prompts = [r["messages"][-1]["content"] for r in openai_wire.requests]
    assert len(prompts) == 4
    earlier = [p.split("<earlier>\n")[1].split("\n</earlier>")[0] for p in prompts]
    assert "part 1" in earlier[0] and "Nothing was taken" in earlier[0]
    assert "- allergies: peanuts" in earlier[1] and "- employer: Brightline" in earlier[1]
    assert "blue logo" in earlier[2]
    assert earlier[3] == "(the message is shown whole)"
    for prompt, chunk in zip(prompts, chunks, strict=False):
        assert chunk.text[:200] in prompt and "part" in prompt
    assert kept_or_asked(subject) == [
        ("allergies", "peanuts"),
        ("employer", "Brightline Studio"),
    ]
    logo = Note.objects.get(subject=subject, content__contains="blue logo")
    assert logo.source_message_id == log.pk
    assert logo.occurred_at == chunks[1].occurred_at(
        POSTED
    )  # the chunk's clock time on the day it was posted


def test_the_person_named_in_the_profile_is_the_chat_log_speaker_whose_facts_count(subject, actor):
    fact_set(subject=subject, key="name", value="Alice Moreau", actor=actor)
    conversation, _ = conversation_get_or_create(subject=subject, external_id="log", actor=actor)
    message_add(conversation=conversation, role="user", text=CHAT_LOG, actor=actor, occurred_at=POSTED)
    reply, _ = message_add(
        conversation=conversation, role="assistant", text="Got it.", actor=actor, occurred_at=POSTED
    )

    run = reflection_enqueue(conversation=conversation, through_message=reply)
    stats = turn_reflect(run_id=run.pk)

    assert stats["source"] == "heuristic" and stats["chunking"]["chunks"] == 3
    assert kept_or_asked(subject) == [
        ("allergies", "peanuts"),
        ("employer", "Brightline"),
        ("job_title", "product designer"),
        ("name", "Alice Moreau"),
    ]  # bob lives in Glasgow, chen is allergic to dairy: theirs


def test_a_model_answer_unusable_for_one_chunk_falls_back_to_the_heuristic_path(
    llm_app, subject, actor, openai_wire
):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="voice", actor=actor)
    message_add(conversation=conversation, role="user", text=TRANSCRIPT, actor=actor, occurred_at=POSTED)
    reply, _ = message_add(
        conversation=conversation, role="assistant", text="Thanks.", actor=actor, occurred_at=POSTED
    )
    openai_wire.answer_json(empty_answer(facts=[fact("name", "Dana Whitfield")]))
    openai_wire.answer_text('{"facts": [ {"key": ', finish_reason="length")

    run = reflection_enqueue(conversation=conversation, through_message=reply)
    stats = turn_reflect(run_id=run.pk)

    assert len(openai_wire.requests) == 2
    assert stats["source"] == "heuristic" and stats["chunking"]["chunks"] == 15
    assert ProfileFact.objects.get(subject=subject, key="location").value == "Leeds"
