"""Parking through the API: PATCH a note's or a fact's `parked` (docs/api.md)."""

import pytest

from memory.models import AuditEvent, Note, ProfileFact

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
