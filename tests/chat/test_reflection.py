from datetime import UTC, datetime

import pytest
from django.utils import timezone

from chat.models import ReflectionRun
from chat.reflect import reflection_enqueue, turn_reflect
from memory.models import AuditEvent, Message, Note, PendingMemory, ProfileFact
from memory.services import app_config_set
from memory.services.conversations import conversation_get_or_create, message_add
from memoryweb.models import Counter


def empty_answer(**parts):
    return {"facts": [], "notes": [], "evolutions": [], "retractions": [], **parts}


@pytest.fixture
def llm_app(app, actor):
    app_config_set(app=app, config={"memory": {"llm": {"reflection": "openai/gpt-4o-mini"}}}, actor=actor)
    return app


@pytest.fixture
def turn(subject, actor):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    user, _ = message_add(
        conversation=conversation,
        role="user",
        actor=actor,
        occurred_at=when,
        text="I moved to Lisbon last month and I'm allergic to peanuts.",
    )
    reply, _ = message_add(
        conversation=conversation, role="assistant", actor=actor, occurred_at=when, text="Noted!"
    )
    return conversation, user, reply


def reflect(conversation, through):
    run = reflection_enqueue(conversation=conversation, through_message=through)
    return run, turn_reflect(run_id=run.pk)


def test_the_model_answer_becomes_facts_notes_and_pending_items(llm_app, subject, turn, openai_wire):
    conversation, user, reply = turn
    openai_wire.answer_json(
        empty_answer(
            facts=[
                {
                    "message": 1,
                    "key": "home_city",
                    "value": "Lisbon",
                    "pinned": True,
                    "keywords": [],
                    "confidence": 0.95,
                    "category": None,
                },
                {
                    "message": 1,
                    "key": "allergies",
                    "value": "peanuts",
                    "pinned": False,
                    "keywords": ["food", "restaurant"],
                    "confidence": 0.95,
                    "category": "health",
                },
            ],
            notes=[
                {
                    "message": 1,
                    "content": "The user moved to Lisbon in April 2023.",
                    "tags": ["relocation"],
                    "occurred_at": "2023-04-15",
                    "category": None,
                }
            ],
        )
    )

    run, stats = reflect(conversation, reply)

    run.refresh_from_db()
    assert run.status == "done" and stats["source"] == "llm"
    fact = ProfileFact.objects.get(subject=subject, key="home_city")
    assert (fact.value, fact.origin, fact.source_message_id) == ("Lisbon", "reflection", user.pk)
    note = Note.objects.get(subject=subject)
    assert note.occurred_at.date().isoformat() == "2023-04-15" and note.source_message_id == user.pk
    pending = PendingMemory.objects.exclude(kind="evidence").get(subject=subject)  # the turn asks too
    assert pending.category.slug == "health" and pending.payload["value"] == "peanuts"
    assert not ProfileFact.objects.filter(key="allergies").exists()
    sent = openai_wire.requests[0]
    assert "I moved to Lisbon last month" in sent["messages"][-1]["content"]


def test_a_run_superseded_while_the_model_thinks_writes_nothing(llm_app, subject, turn, openai_wire, actor):
    conversation, user, reply = turn
    newer_reply = []

    def a_new_turn_arrives(request):
        message, _ = message_add(conversation=conversation, role="assistant", text="More.", actor=actor)
        newer_reply.append(reflection_enqueue(conversation=conversation, through_message=message))

    openai_wire.on_request = a_new_turn_arrives
    openai_wire.answer_json(
        empty_answer(
            facts=[
                {
                    "message": 1,
                    "key": "home_city",
                    "value": "Lisbon",
                    "pinned": True,
                    "keywords": [],
                    "confidence": 0.95,
                    "category": None,
                }
            ]
        )
    )

    run, stats = reflect(conversation, reply)

    run.refresh_from_db()
    assert stats["skipped"] == "superseded" and run.status == "superseded"
    assert not ProfileFact.objects.exists()
    assert ReflectionRun.objects.get(pk=newer_reply[0].pk).status == "queued"


def test_the_newer_run_covers_the_messages_of_the_superseded_one(llm_app, subject, turn, openai_wire, actor):
    conversation, user, reply = turn
    old = reflection_enqueue(conversation=conversation, through_message=reply)
    later, _ = message_add(
        conversation=conversation, role="user", text="Also I started learning Dutch.", actor=actor
    )
    new = reflection_enqueue(conversation=conversation, through_message=later)
    openai_wire.answer_json(empty_answer())

    assert turn_reflect(run_id=old.pk) == {"run": old.pk, "skipped": "not queued"}
    stats = turn_reflect(run_id=new.pk)

    assert stats["messages"] == 3
    conversation_text = openai_wire.requests[0]["messages"][-1]["content"]
    assert "Lisbon" in conversation_text and "Dutch" in conversation_text


def test_running_the_same_run_twice_does_nothing_the_second_time(llm_app, turn, openai_wire):
    conversation, user, reply = turn
    openai_wire.answer_json(empty_answer())
    run, _ = reflect(conversation, reply)

    assert turn_reflect(run_id=run.pk)["skipped"] == "not queued"
    assert len(openai_wire.requests) == 1


def test_evolve_changes_tags_of_a_shown_note_and_never_its_content(
    llm_app, subject, turn, openai_wire, actor, config
):
    from memory.services import note_store

    conversation, user, reply = turn
    note, _ = note_store(
        subject=subject, content="Alice lives in Lisbon now", tags=["home"], actor=actor, config=config
    )
    openai_wire.answer_json(
        empty_answer(
            evolutions=[
                {"message": 1, "note_id": note.pk, "add_tags": ["relocation"], "remove_tags": ["home"]},
                {"message": 1, "note_id": 999999, "add_tags": ["hijack"], "remove_tags": []},
            ]
        )
    )

    reflect(conversation, reply)

    note.refresh_from_db()
    assert note.tags == ["relocation"] and note.content == "Alice lives in Lisbon now"
    assert note.versions.count() == 2


def test_a_retraction_closes_the_fact(llm_app, subject, turn, openai_wire, actor):
    from memory.services import fact_set

    conversation, user, reply = turn
    fact_set(subject=subject, key="home_city", value="Paris", actor=actor)
    openai_wire.answer_json(empty_answer(retractions=[{"message": 1, "key": "home_city", "value": "Paris"}]))

    reflect(conversation, reply)

    assert not ProfileFact.objects.filter(subject=subject, valid_to=None).exists()
    assert ProfileFact.objects.filter(subject=subject, key="home_city").count() == 1


def test_an_evolution_and_a_retraction_are_announced_to_open_pages(
    llm_app, subject, turn, openai_wire, actor, config, django_capture_on_commit_callbacks
):
    from memory.services import fact_set, note_store
    from memoryweb.models import LiveEvent

    conversation, user, reply = turn
    note, _ = note_store(
        subject=subject, content="Alice lives in Lisbon now", tags=["home"], actor=actor, config=config
    )
    fact, _ = fact_set(subject=subject, key="home_city", value="Paris", actor=actor)
    LiveEvent.objects.all().delete()
    openai_wire.answer_json(
        empty_answer(
            evolutions=[{"message": 1, "note_id": note.pk, "add_tags": ["relocation"], "remove_tags": []}],
            retractions=[{"message": 1, "key": "home_city", "value": "Paris"}],
        )
    )

    with django_capture_on_commit_callbacks(execute=True):
        reflect(conversation, reply)

    announced = LiveEvent.objects.filter(event="memory.changed").values_list("subject_id", "payload")
    assert sorted(announced, key=lambda row: row[1]["kind"]) == [
        (subject.pk, {"kind": "fact", "id": fact.pk}),
        (subject.pk, {"kind": "note", "id": note.pk}),
    ]


def test_caps_limit_facts_and_notes_per_call(llm_app, subject, turn, openai_wire, actor):
    conversation, user, reply = turn
    app_config_set(
        app=subject.app,
        config={
            "memory": {
                "llm": {"reflection": "openai/gpt-4o-mini"},
                "reflection": {"maxFactsPerCall": 1, "maxNotesPerCall": 1},
            }
        },
        actor=actor,
    )
    fact = {"message": 1, "pinned": True, "keywords": [], "confidence": 0.9, "category": None}
    note = {"message": 1, "tags": [], "occurred_at": None, "category": None}
    openai_wire.answer_json(
        empty_answer(
            facts=[{**fact, "key": f"k{i}", "value": f"v{i}"} for i in range(3)],
            notes=[{**note, "content": f"A distinct memory number {i} about topic{i}"} for i in range(3)],
        )
    )

    reflect(conversation, reply)

    # the model's items name nothing sensitive, but they share no word with any clause of the
    # message, which mentions an allergy: they take the whole message's category and wait
    kept = ProfileFact.objects.count() + Note.objects.count()
    waiting = PendingMemory.objects.exclude(kind="evidence").filter(category__slug="health").count()
    assert ProfileFact.objects.count() + PendingMemory.objects.filter(kind="fact").count() == 1
    assert Note.objects.count() + PendingMemory.objects.filter(kind="note").count() == 1
    assert kept + waiting == 2


def test_a_secret_in_a_message_never_reaches_the_database(subject, actor, api_key):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2

    message, _ = message_add(
        conversation=conversation, role="user", actor=actor, text=f"my openai key is {secret}, remember that"
    )

    assert secret not in Message.objects.get(pk=message.pk).text
    assert "[REDACTED" in message.text
    assert not AuditEvent.objects.filter(data__icontains=secret).exists()
    assert Counter.objects.get(name="redaction.message").value >= 1


def test_an_unusable_model_answer_falls_back_and_is_counted(llm_app, turn, openai_wire):
    conversation, user, reply = turn
    openai_wire.answer_text('{"facts": [ {"key": ', finish_reason="length")

    run, stats = reflect(conversation, reply)

    assert stats["source"] == "heuristic"
    assert Counter.objects.filter(name__startswith="llm.fallback.reflection").exists()


def test_flush_waits_for_open_reflections(client, subject, actor):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    reply, _ = message_add(conversation=conversation, role="assistant", text="hi", actor=actor)
    run = reflection_enqueue(conversation=conversation, through_message=reply)

    waiting = client.post("/api/v1/flush", {"subject": "alice", "timeout_ms": 50}, format="json").json()
    ReflectionRun.objects.filter(pk=run.pk).update(status="done", finished_at=timezone.now())
    done = client.post("/api/v1/flush", {"subject": "alice"}, format="json").json()

    assert waiting["done"] is False and waiting["pending"] == 1
    assert done == {
        "done": True,
        "pending": 0,
        "reflections": 0,
        "jobs": 0,
        "dead": 0,
        "waited_ms": done["waited_ms"],
    }


def test_posting_a_response_reflects_on_the_turn_after_commit(
    client, subject, actor, settings, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    from memoryweb.celery import app as celery_app

    celery_app.conf.task_always_eager = True
    try:
        conversation = client.post(
            "/api/v1/conversations", {"subject": "alice", "external_id": "c"}, format="json"
        ).json()
        client.post(
            f"/api/v1/conversations/{conversation['id']}/messages",
            {"text": "Call me Sam. I work at Acme as a data engineer."},
            format="json",
        )
        with django_capture_on_commit_callbacks(execute=True):
            client.post(
                f"/api/v1/conversations/{conversation['id']}/responses", {"text": "Hi Sam!"}, format="json"
            )
    finally:
        celery_app.conf.task_always_eager = False

    run = ReflectionRun.objects.get()
    assert run.status == "done" and run.stats["source"] == "heuristic"
    assert ProfileFact.objects.filter(subject=subject, origin="reflection").exists()


def test_heuristic_reflection_grounds_relative_dates_against_the_message_time(subject, actor):
    import time_machine

    conversation, _ = conversation_get_or_create(subject=subject, external_id="history", actor=actor)
    sent = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    with time_machine.travel(datetime(2026, 11, 29, 12, 0, tzinfo=UTC), tick=False):
        message_add(
            conversation=conversation,
            role="user",
            occurred_at=sent,
            actor=actor,
            text="I'm flying to Tokyo next Friday for a conference.",
        )
        reply, _ = message_add(
            conversation=conversation,
            role="assistant",
            occurred_at=sent,
            actor=actor,
            text="Have a great trip!",
        )
        run, stats = reflect(conversation, reply)

    note = Note.objects.get(subject=subject, origin="reflection")
    assert stats["source"] == "heuristic"
    assert note.occurred_at.date().isoformat() == "2023-05-19"
    assert "2023-05-19" in note.content


def test_secrets_in_api_writes_are_removed_before_storing(client, subject):
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"

    note = client.post("/api/v1/subjects/alice/notes", {"content": f"deploy token {secret}"}, format="json")
    fact = client.post("/api/v1/subjects/alice/profile", {"key": "token", "value": secret}, format="json")

    assert note.status_code == 201 and fact.status_code == 201
    assert secret not in Note.objects.get().content
    assert secret not in ProfileFact.objects.get().value
    assert not AuditEvent.objects.filter(data__icontains=secret).exists()


def _heuristic_turn(subject, actor, text):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="pets", actor=actor)
    when = datetime(2025, 6, 11, 18, 0, tzinfo=UTC)
    message_add(conversation=conversation, role="user", occurred_at=when, actor=actor, text=text)
    reply, _ = message_add(
        conversation=conversation, role="assistant", occurred_at=when, actor=actor, text="Oh no."
    )
    return reflect(conversation, reply)


def test_a_retracted_list_item_leaves_the_other_items(subject, actor):
    from memory.services import fact_set

    fact_set(
        subject=subject,
        key="pets",
        value="Rex (dog), Miso (cat)",
        pinned=False,
        keywords=["pet"],
        actor=actor,
    )

    _, stats = _heuristic_turn(subject, actor, "our dog Rex died on Sunday, the house is so quiet")

    assert stats["source"] == "heuristic" and stats["retracted"] == 1
    active = ProfileFact.objects.get(subject=subject, key="pets", valid_to=None)
    assert active.value == "Miso (cat)"
    assert ProfileFact.objects.filter(subject=subject, key="pets").count() == 2  # the old version is history


def test_retracting_the_last_item_of_a_list_closes_the_fact(subject, actor):
    from memory.services import fact_set

    fact_set(subject=subject, key="pets", value="Rex (dog)", pinned=False, keywords=["pet"], actor=actor)

    _heuristic_turn(subject, actor, "our dog Rex died on Sunday, the house is so quiet")

    assert not ProfileFact.objects.filter(subject=subject, key="pets", valid_to=None).exists()
