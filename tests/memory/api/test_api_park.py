"""Parking through the API: PATCH a note's or a fact's `parked` (docs/api.md)."""

import pytest

from memory.models import AuditEvent, Lesson, Note, Procedure, ProfileFact

pytestmark = pytest.mark.django_db

API = "/api/v1/subjects/alice"
QUESTION = {"subject": "alice", "message": "Any tips for my marathon training?"}


def _prompt(client) -> str:
    body = client.post("/api/v1/context", {**QUESTION, "full": True}, format="json").json()
    return f"{body['stable_prefix']}\n{body['tail']}"


def test_a_parked_note_is_out_of_recall_and_the_context_until_unparked(client):
    note = client.post(
        f"{API}/notes", {"content": "Alice trains for the Lisbon marathon"}, format="json"
    ).json()
    assert note["parked_at"] is None
    assert "Lisbon marathon" in _prompt(client)

    response = client.patch(f"{API}/notes/{note['id']}", {"parked": True}, format="json")

    assert response.status_code == 200
    assert response.json()["parked_at"] is not None
    assert client.get(f"{API}/notes", {"query": "marathon"}).json()["notes"] == []
    assert client.get(f"{API}/notes", {"query": "marathon", "archived": "true"}).json()["notes"] == []
    assert "Lisbon marathon" not in _prompt(client)
    assert client.get(f"{API}/notes/{note['id']}").json()["parked_at"] is not None  # kept
    assert AuditEvent.objects.filter(action="note.parked", actor_kind="api_key").exists()

    client.patch(f"{API}/notes/{note['id']}", {"parked": False}, format="json")
    assert [n["id"] for n in client.get(f"{API}/notes", {"query": "marathon"}).json()["notes"]] == [
        note["id"]
    ]
    assert "Lisbon marathon" in _prompt(client)


def test_parked_must_be_a_boolean_and_nothing_changes(client):
    note = client.post(
        f"{API}/notes", {"content": "Alice trains for the Lisbon marathon"}, format="json"
    ).json()
    for value in ("true", 1, None):
        response = client.patch(f"{API}/notes/{note['id']}", {"parked": value, "tags": ["x"]}, format="json")
        assert response.status_code == 400, value
        assert response.json()["error"]["field"] == "parked"
    stored = Note.objects.get(pk=note["id"])
    assert (stored.parked_at, stored.tags, stored.version) == (None, [], 1)


def test_a_fact_is_parked_by_key_and_leaves_the_profile_and_context(client):
    client.post(f"{API}/profile", {"key": "city", "value": "Lisbon"}, format="json")
    assert "Lisbon" in _prompt(client)

    response = client.patch(f"{API}/profile/city", {"parked": True}, format="json")

    assert response.status_code == 200
    assert response.json()["parked_at"] is not None
    assert client.get(f"{API}/profile").json()["facts"] == []
    assert "Lisbon" not in _prompt(client)
    assert ProfileFact.objects.get(key="city").parked_at is not None

    assert client.patch(f"{API}/profile/city", {"parked": "yes"}, format="json").status_code == 400
    assert client.patch(f"{API}/profile/town", {"parked": True}, format="json").status_code == 404
    client.patch(f"{API}/profile/city", {"parked": False}, format="json")
    assert [f["key"] for f in client.get(f"{API}/profile").json()["facts"]] == ["city"]
    assert "Lisbon" in _prompt(client)


DISTILLED = {
    "lessons": (Lesson, {"text": "Alice runs her marathon training on easy long runs"}),
    "procedures": (
        Procedure,
        {"title": "Marathon training week", "steps": ["Run easy on Monday", "Long run on Sunday"]},
    ),
}


@pytest.mark.parametrize("name", DISTILLED)
def test_a_parked_lesson_or_procedure_is_out_of_recall_tools_and_the_context_until_unparked(
    name, client, subject
):
    model, fields = DISTILLED[name]
    item = model.objects.create(subject=subject, **fields)
    kind = model._meta.model_name
    ref = f"[{kind[0]}:{item.pk}]"
    assert client.get(f"{API}/{name}/{item.pk}").json()["parked_at"] is None
    assert ref in _prompt(client)

    response = client.patch(f"{API}/{name}/{item.pk}", {"parked": True}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["parked_at"] is not None
    assert client.get(f"{API}/{name}", {"query": "marathon training"}).json()[name] == []
    assert client.get(f"{API}/{name}").json()[name] == []  # newest first: none
    assert ref not in _prompt(client)
    assert client.get(f"{API}/{name}/{item.pk}").json()["parked_at"] is not None  # kept
    assert model.objects.get(pk=item.pk).version == 1  # parking is no new version
    assert AuditEvent.objects.filter(action=f"{kind}.parked", actor_kind="api_key").exists()

    response = client.patch(f"{API}/{name}/{item.pk}", {"parked": False}, format="json")

    assert response.json()["parked_at"] is None
    found = client.get(f"{API}/{name}", {"query": "marathon training"}).json()[name]
    assert [i["id"] for i in found] == [item.pk]
    assert ref in _prompt(client)


@pytest.mark.parametrize("name", DISTILLED)
def test_parking_a_lesson_or_procedure_is_strict_and_a_refusal_changes_nothing(name, client, subject):
    model, fields = DISTILLED[name]
    item = model.objects.create(subject=subject, **fields)
    edit = {"text": "Changed"} if name == "lessons" else {"title": "Changed"}
    for value in ("true", 1, None):
        response = client.patch(f"{API}/{name}/{item.pk}", {"parked": value, **edit}, format="json")
        assert response.status_code == 400, value
        assert response.json()["error"]["field"] == "parked"
    assert client.patch(f"{API}/{name}/{item.pk}", {}, format="json").status_code == 400
    unknown = client.patch(f"{API}/{name}/{item.pk}", {"parked": True, "pinned": True}, format="json")
    assert unknown.status_code == 400 and unknown.json()["error"]["field"] == "pinned"
    assert client.patch(f"{API}/{name}/999999", {"parked": True}, format="json").status_code == 404
    stored = model.objects.get(pk=item.pk)
    assert (stored.parked_at, stored.version) == (None, 1)
    assert not AuditEvent.objects.filter(action__endswith=".parked").exists()


def test_an_edit_and_a_park_in_one_request_are_both_done(client, subject):
    lesson = Lesson.objects.create(subject=subject, text="Alice runs easy on Mondays")

    response = client.patch(
        f"{API}/lessons/{lesson.pk}", {"text": "Alice runs easy on Tuesdays", "parked": True}, format="json"
    )

    body = response.json()
    assert response.status_code == 200
    assert (body["text"], body["version"], body["parked_at"] is not None) == (
        "Alice runs easy on Tuesdays",
        2,
        True,
    )


def test_the_schema_documents_parked_on_lessons_and_procedures(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    components = schema["components"]["schemas"]
    for out in ("LessonOut", "ProcedureOut"):
        assert components[out]["properties"]["parked_at"]["nullable"] is True, out
    for edit in ("LessonEditRequest", "ProcedureEditRequest"):
        assert components[edit]["properties"]["parked"]["type"] == "boolean", edit
        assert components[edit]["minProperties"] == 1, edit
