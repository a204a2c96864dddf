"""The REST twins of `manage.py memory …` (chat/memory_api.py), under
/api/v1/subjects/<id>/memory/: each behaviour, bad input naming the field, another app → 404."""

import pytest

from chat.summaries.mental_models import BUILTIN_MODELS, mental_model_get, mental_models_seed
from memory.models import (
    ContextDelivery,
    DocumentKind,
    JobRun,
    MemoryDocument,
    RetrievalEvent,
    SessionExtraction,
)
from memory.services import app_config_set
from tests.factories import ConversationFactory, FactFactory

BASE = "/api/v1/subjects/alice/memory"


def test_view_returns_both_halves_and_records_nothing(client, subject):
    FactFactory(subject=subject, key="name", value="Alice Martin", pinned=True)

    body = client.post(f"{BASE}/view", {"message": "what is my name"}, format="json").json()

    assert body["stable_prefix"].startswith("## Memory")
    assert "Alice Martin" in body["tail"]
    assert not RetrievalEvent.objects.exists()


def test_view_of_another_subjects_conversation_is_404(client, subject):
    other = ConversationFactory(subject__app=subject.app)

    response = client.post(f"{BASE}/view", {"conversation": other.pk}, format="json")

    assert response.status_code == 404 and response.json()["error"]["field"] == "conversation"


@pytest.mark.parametrize(
    "body,field", [({"message": 12}, "message"), ({"conversation": "1"}, "conversation"), ({"k": 1}, "k")]
)
def test_view_refuses_bad_input_naming_the_field(client, subject, body, field):
    response = client.post(f"{BASE}/view", body, format="json")

    assert response.status_code == 400 and response.json()["error"]["field"] == field


def test_stats_and_diagnose(client, summaries):
    stats = client.get(f"{BASE}/stats").json()
    report = client.get(f"{BASE}/diagnose").json()

    assert stats["extractions"] == 1 and stats["documents"]["mental_model"] == len(BUILTIN_MODELS)
    assert report["backend"] == "off" and report["conversations"]["active"] == 1
    assert report["lease"]["held"] is False and report["last_run"] is None


@pytest.mark.parametrize("body", [{}, {"confirm": False}, {"confirm": "yes"}])
def test_clear_without_confirm_true_is_400_naming_confirm_and_deletes_nothing(
    client, subject, summaries, body
):
    response = client.post(f"{BASE}/clear", body, format="json")

    assert response.status_code == 400 and response.json()["error"]["field"] == "confirm"
    assert SessionExtraction.objects.filter(subject=subject).count() == 1


def test_clear_keeps_the_mental_models_and_reset_does_not(client, subject, summaries):
    cleared = client.post(f"{BASE}/clear", {"confirm": True}, format="json").json()
    kinds = set(MemoryDocument.objects.filter(subject=subject).values_list("kind", flat=True))
    reset = client.post(f"{BASE}/reset", {"confirm": True}, format="json").json()

    assert cleared == {"extractions": 1, "documents": 2}
    assert kinds == {DocumentKind.MENTAL_MODEL}
    assert reset == {"extractions": 0, "documents": len(BUILTIN_MODELS)}
    assert not MemoryDocument.objects.filter(subject=subject).exists()


def test_enqueue_and_rebuild_are_409_with_the_backend_off(client, subject):
    for action in ("enqueue", "rebuild"):
        response = client.post(f"{BASE}/{action}")
        assert response.status_code == 409 and response.json()["error"]["field"] == "memory.backend"
    assert not JobRun.objects.exists()


def test_enqueue_and_rebuild_queue_runs(client, subject, app, actor):
    app_config_set(app=app, config={"memory": {"backend": "local"}}, actor=actor)

    queued = client.post(f"{BASE}/enqueue")
    rebuilt = client.post(f"{BASE}/rebuild")

    assert queued.status_code == rebuilt.status_code == 202
    runs = {r.pk: r for r in JobRun.objects.filter(subject=subject, kind="summaries")}
    assert runs[queued.json()["job_run"]].stats == {}
    assert runs[rebuilt.json()["job_run"]].stats == {"force": True}
    assert rebuilt.json()["status"] == "queued"


def test_reload_one_conversation_or_all(client, subject, summaries):
    other = ConversationFactory(subject=subject)
    for conversation in (summaries, other):
        ContextDelivery.objects.create(conversation=conversation, block="mental_models", digest="x")

    one = client.post(f"{BASE}/reload", {"conversation": other.pk}, format="json").json()
    left = ContextDelivery.objects.filter(conversation=summaries).count()
    every = client.post(f"{BASE}/reload", {}, format="json").json()

    assert one == {"conversations": [{"id": other.pk, "summary_version": 1}]}
    assert left == 1
    assert [c["id"] for c in every["conversations"]] == [summaries.pk, other.pk]
    assert not ContextDelivery.objects.exists()


def test_mental_models_seed_list_show_and_delete(client, subject):
    seeded = client.post(f"{BASE}/mental-models/seed").json()
    listed = client.get(f"{BASE}/mental-models").json()
    shown = client.get(f"{BASE}/mental-models/who-they-are").json()
    deleted = client.delete(f"{BASE}/mental-models/who-they-are")

    assert sorted(m["name"] for m in seeded["mental_models"]) == sorted(BUILTIN_MODELS)
    assert len(listed["mental_models"]) == len(BUILTIN_MODELS)
    assert shown["url"] == "memory://root/mental_models/who-they-are.md"
    assert shown["version"] == 1 and shown["builtin"] is True and shown["content"]
    assert deleted.status_code == 204
    assert not MemoryDocument.objects.filter(subject=subject, name="who-they-are").exists()
    assert client.get(f"{BASE}/mental-models/who-they-are").status_code == 404


def test_create_writes_the_model_at_once(client, subject):
    FactFactory(subject=subject, key="job_title", value="pastry chef")

    response = client.post(
        f"{BASE}/mental-models",
        {"name": "career", "description": "Their job title and career", "auto_refresh": False},
        format="json",
    )

    assert response.status_code == 201
    document = mental_model_get(subject=subject, name="career")
    assert document.auto_refresh is False and "pastry chef" in document.current.content
    assert response.json()["content"] == document.current.content


@pytest.mark.parametrize(
    "body,field",
    [
        ({"name": "Bad Name", "description": "x"}, "name"),
        ({"name": "seed", "description": "x"}, "name"),
        ({"name": "ok", "description": ""}, "description"),
        ({"name": "ok", "description": "x", "auto_refresh": "yes"}, "auto_refresh"),
        ({"name": "ok", "description": "x", "builtin": True}, "builtin"),
    ],
)
def test_create_refuses_bad_input_naming_the_field(client, subject, body, field):
    response = client.post(f"{BASE}/mental-models", body, format="json")

    assert response.status_code == 400 and response.json()["error"]["field"] == field
    assert not MemoryDocument.objects.exists()


def test_create_of_a_name_taken_is_409(client, subject, actor):
    mental_models_seed(subject=subject, actor=actor)

    response = client.post(
        f"{BASE}/mental-models", {"name": "who-they-are", "description": "x"}, format="json"
    )

    assert response.status_code == 409 and response.json()["error"]["field"] == "name"


def test_refresh_one_and_all_then_history_has_the_diffs(client, subject, actor):
    mental_models_seed(subject=subject, actor=actor)
    unchanged = client.post(f"{BASE}/mental-models/who-they-are/refresh").json()
    FactFactory(subject=subject, key="employer", value="Stripe")
    every = client.post(f"{BASE}/mental-models/refresh").json()

    history = client.get(f"{BASE}/mental-models/who-they-are/history").json()

    assert unchanged == {"name": "who-they-are", "changed": False, "version": 1}
    assert every["models"] == len(BUILTIN_MODELS) and "who-they-are" in every["changed"]
    assert [v["number"] for v in history["versions"]] == [1, 2]
    assert "+- Employer: Stripe" in history["versions"][1]["diff"]


@pytest.mark.parametrize(
    "method,path",
    [
        ("post", "/view"),
        ("get", "/stats"),
        ("get", "/diagnose"),
        ("post", "/reload"),
        ("get", "/mental-models"),
        ("post", "/mental-models/seed"),
        ("post", "/mental-models/refresh"),
        ("get", "/mental-models/who-they-are"),
        ("delete", "/mental-models/who-they-are"),
        ("post", "/mental-models/who-they-are/refresh"),
        ("get", "/mental-models/who-they-are/history"),
    ],
)
def test_another_apps_subject_is_404_and_untouched(other_client, subject, actor, method, path):
    mental_models_seed(subject=subject, actor=actor)
    before = MemoryDocument.objects.count()

    response = getattr(other_client, method)(f"{BASE}{path}", {}, format="json")

    assert response.status_code == 404
    assert MemoryDocument.objects.count() == before


@pytest.mark.parametrize("action", ["clear", "reset"])
def test_another_app_cannot_clear(other_client, subject, summaries, action):
    response = other_client.post(f"{BASE}/{action}", {"confirm": True}, format="json")

    assert response.status_code == 404
    assert SessionExtraction.objects.filter(subject=subject).count() == 1
