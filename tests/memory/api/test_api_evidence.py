"""GET/DELETE /api/v1/evidence/<id>: an evidence unit of one of the key's app's subjects."""

import pytest

from memory.models import AuditEvent, Evidence
from memory.selectors import subject_export
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.evidence import evidence_record

API = "/api/v1"


@pytest.fixture
def unit(subject, actor, config):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    message, _ = message_add(
        conversation=conversation, role="user", text="the shed key is under the flowerpot", actor=actor
    )
    return evidence_record(message=message, category="", actor=actor, config=config)


def test_an_evidence_unit_is_read_by_id(client, unit):
    response = client.get(f"{API}/evidence/{unit.pk}")

    assert response.status_code == 200
    body = response.json()
    assert body["id"] == unit.pk and body["subject"] == "alice" and body["message"] == unit.message_id
    assert (body["role"], body["text"], body["status"], body["retrievable"]) == (
        "user",
        "the shed key is under the flowerpot",
        "visible",
        True,
    )


def test_another_apps_key_gets_404_for_the_unit(other_client, unit):
    assert other_client.get(f"{API}/evidence/{unit.pk}").status_code == 404
    assert other_client.delete(f"{API}/evidence/{unit.pk}").status_code == 404
    assert Evidence.objects.get(pk=unit.pk).text  # untouched


def test_no_key_gets_401(anon_client, unit):
    assert anon_client.get(f"{API}/evidence/{unit.pk}").status_code == 401


def test_an_unknown_id_is_404(client, unit):
    assert client.get(f"{API}/evidence/{unit.pk + 1000}").status_code == 404


def test_deleting_forgets_the_unit_and_audits_it(client, unit):
    response = client.delete(f"{API}/evidence/{unit.pk}")

    assert response.status_code == 204
    unit.refresh_from_db()
    assert (unit.status, unit.text) == ("forgotten", "")
    assert AuditEvent.objects.filter(action="evidence.forgotten", object_id=str(unit.pk)).exists()
    assert client.get(f"{API}/evidence/{unit.pk}").json()["retrievable"] is False


def test_the_subject_export_holds_its_evidence(client, subject, unit):
    exported = client.get(f"{API}/subjects/alice").json()

    assert [e["id"] for e in exported["evidence"]] == [unit.pk]
    assert subject_export(subject=subject)["evidence"][0]["text"] == unit.text
