"""The admin routes that act (docs/admin-api.md): rebuild re-runs reflection and a repeat writes
nothing, reindex finds a note whose full-text row was lost, the lifecycle runs decay, expiry and
eviction now, and the no_consent_gate replay names what the gate withheld without its text."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from chat.reflect import reflection_enqueue, turn_reflect
from memory.context import context_build
from memory.models import (
    BeliefRevision,
    ConsentCategory,
    Evidence,
    Note,
    NoteSource,
    PendingMemory,
    ProfileFact,
)
from memory.services import app_config_set, note_store
from memory.services.admin_keys import admin_key_create
from memory.services.consent import consent_policy_set
from memory.services.conversations import conversation_get_or_create, message_add

SECRET = "The oncologist moved my chemotherapy to thursdays."


@pytest.fixture
def admin(db, actor):
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {admin_key_create(name='ops', actor=actor)[1]}")
    return c


@pytest.fixture
def conversation(subject, actor):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)
    for role, text in [
        ("user", "I live in Paris. I prefer green tea in the morning."),
        ("assistant", "Noted: Paris, and green tea."),
        ("user", "I'm flying to Tokyo next Friday for a conference."),
        ("assistant", "OK."),
    ]:
        message_add(conversation=conversation, role=role, text=text, actor=actor)
    return conversation


def _memory_rows(subject) -> dict:
    return {
        "facts": sorted(
            ProfileFact.objects.filter(subject=subject).values_list(
                "pk", "key", "value", "valid_to", "confirmations", "confidence"
            )
        ),
        "notes": sorted(Note.objects.filter(subject=subject).values_list("pk", "content", "confidence")),
        "sources": sorted(NoteSource.objects.values_list("note_id", "message_id")),
        "evidence": sorted(
            Evidence.objects.filter(subject=subject).values_list("pk", "message_id", "status")
        ),
        "revisions": BeliefRevision.objects.filter(subject=subject).count(),
        "pending": PendingMemory.objects.filter(subject=subject).count(),
    }


def test_rebuilding_a_conversation_twice_leaves_the_same_memories(admin, conversation, subject):
    first = admin.post("/api/v1/admin/rebuild", {"conversation": conversation.pk}, format="json")
    after_first = _memory_rows(subject)
    second = admin.post("/api/v1/admin/rebuild", {"conversation": conversation.pk}, format="json")

    assert first.status_code == 200, first.content
    assert first.json()["messages"] == 4 and first.json()["evidence"] == 4
    assert first.json()["facts"] >= 1 and first.json()["notes"] >= 1
    assert after_first["facts"] and after_first["notes"]
    assert second.json() == {"conversations": 1, "messages": 4, "facts": 0, "notes": 0, "evidence": 0}
    assert _memory_rows(subject) == after_first


def test_rebuilding_after_the_turns_were_reflected_writes_nothing(admin, conversation, subject):
    run = reflection_enqueue(
        conversation=conversation, through_message=conversation.messages.order_by("-pk")[0]
    )
    turn_reflect(run_id=run.pk)
    reflected = _memory_rows(subject)

    data = admin.post(
        "/api/v1/admin/rebuild", {"subject": "alice", "app": subject.app_id}, format="json"
    ).json()

    assert data["conversations"] == 1 and data["messages"] == 4
    assert (data["facts"], data["notes"], data["evidence"]) == (0, 0, 0)
    assert _memory_rows(subject) == reflected


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"conversation": "1"},
        {"subject": "alice"},
        {"conversation": 1, "subject": "alice", "app": 1},
        {"conversation": 1, "extra": 1},
    ],
)
def test_rebuild_input_is_strict(admin, conversation, body):
    assert admin.post("/api/v1/admin/rebuild", body, format="json").status_code == 400


def test_rebuild_of_an_unknown_conversation_or_subject_is_404(admin, conversation, subject):
    assert admin.post("/api/v1/admin/rebuild", {"conversation": 999999}, format="json").status_code == 404
    body = {"subject": "nobody", "app": subject.app_id}
    assert admin.post("/api/v1/admin/rebuild", body, format="json").status_code == 404


def test_reindex_finds_a_note_whose_full_text_row_was_deleted(admin, subject, actor, config):
    note = note_store(
        subject=subject, content="The zeppelin hangar opens at dawn.", actor=actor, config=config
    )[0]
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("INSERT INTO memory_note_fts(memory_note_fts) VALUES ('delete-all')")
        else:  # the tsvector is a generated column: what can be lost is the index itself
            cursor.execute("DROP INDEX memory_note_fts")

    def found() -> bool:
        context = context_build(subject=subject, message="zeppelin hangar", config=config, record=False)
        return f"n:{note.pk}" in {i.id for i in context.items}

    def indexed() -> bool:
        if connection.vendor == "sqlite":
            return found()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'memory_note_fts'")
            return cursor.fetchone() is not None and found()

    assert not indexed()

    response = admin.post("/api/v1/admin/reindex", {"vectors": False}, format="json")

    assert response.status_code == 200, response.content
    assert "memory_note_fts" in response.json()["fulltext"] and response.json()["vectors"] is None
    assert indexed()


def test_reindex_input_is_strict(admin, subject):
    assert admin.post("/api/v1/admin/reindex", {"fulltext": "yes"}, format="json").status_code == 400
    assert admin.post("/api/v1/admin/reindex", {"subject": "alice"}, format="json").status_code == 400
    body = {"subject": "nobody", "app": subject.app_id}
    assert admin.post("/api/v1/admin/reindex", body, format="json").status_code == 404


def test_lifecycle_decays_expires_and_evicts_now(admin, subject, actor, config, app):
    for text in ("First note about kites.", "Second note about boats."):
        note_store(subject=subject, content=text, actor=actor, config=config)
    app_config_set(app=app, config={"memory": {"notes": {"maxEntries": 1}}}, actor=actor)  # lowered since
    Note.objects.filter(subject=subject).update(vote_score=1.0)
    old = PendingMemory.objects.create(
        subject=subject,
        kind="note",
        payload={"content": "x"},
        category=ConsentCategory.objects.get(slug="health"),
        content_hash="h1",
    )
    PendingMemory.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=400))

    data = admin.post("/api/v1/admin/lifecycle", {"app": app.pk}, format="json").json()

    assert data["decay"]["skipped"] is False and data["decay"]["job_run"]
    assert data["expire"] == {"expired": 1}
    assert data["evict"]["notes"] >= 1
    assert PendingMemory.objects.get(pk=old.pk).status == "expired"
    assert Note.objects.filter(subject=subject, archived_at__isnull=True).count() <= 1
    assert all(
        score < 1.0 for score in Note.objects.filter(subject=subject).values_list("vote_score", flat=True)
    )
    again = admin.post("/api/v1/admin/lifecycle", {"app": app.pk, "steps": ["decay"]}, format="json").json()
    assert set(again) == {"decay"} and again["decay"]["skipped"] is False  # forced: no 3-hour gap


def test_lifecycle_input_is_strict(admin, app):
    assert admin.post("/api/v1/admin/lifecycle", {"steps": ["nap"]}, format="json").status_code == 400
    assert admin.post("/api/v1/admin/lifecycle", {"steps": "decay"}, format="json").status_code == 400
    assert admin.post("/api/v1/admin/lifecycle", {"app": 999999}, format="json").status_code == 404


def test_no_consent_gate_replay_names_what_was_withheld_without_its_text(admin, subject, actor, config):
    allowed = note_store(
        subject=subject, content="Chemotherapy questions go to the nurse line.", actor=actor, config=config
    )[0]
    secret = note_store(subject=subject, content=SECRET, category="health", actor=actor, config=config)[0]
    consent_policy_set(subject=subject, category="health", policy="deny", actor=actor)
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c2", actor=actor)
    message_add(conversation=conversation, role="user", text="when is my chemotherapy now?", actor=actor)

    response = admin.post(
        "/api/v1/admin/replay",
        {"conversation": conversation.pk, "ablation": "no_consent_gate"},
        format="json",
    )

    assert response.status_code == 200, response.content
    (turn,) = response.json()["turns"]
    assert f"n:{secret.pk}" not in {i["id"] for i in turn["baseline"]["items"]}
    assert f"n:{allowed.pk}" in {i["id"] for i in turn["baseline"]["items"]}
    assert turn["diff"]["withheld"] == [
        {"id": f"n:{secret.pk}", "kind": "note", "section": s, "category": "health"}
        for s in [next(i["section"] for i in turn["ablated"]["items"] if i["id"] == f"n:{secret.pk}")]
    ]
    masked = next(i for i in turn["ablated"]["items"] if i["id"] == f"n:{secret.pk}")
    assert masked["reason"] == "[withheld by consent: health]"
    body = response.content.decode()
    assert "oncologist" not in body and "thursdays" not in body and SECRET not in body
