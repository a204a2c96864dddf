"""POST /subjects/{subject}/import and the export it reads (GET /subjects/{subject})."""

import json

import jsonschema
import pytest

from memory.api.portable import SubjectExportSerializer
from memory.models import AuditEvent, Note, Subject
from memory.services.portable import SCHEMA_PATH
from tests.memory.portable_world import portable_world

API = "/api/v1"


@pytest.fixture
def exported(client, subject, actor, config):
    portable_world(subject, actor, config)
    response = client.get(f"{API}/subjects/alice")
    assert response.status_code == 200
    return response.json()


def test_the_export_matches_its_openapi_serializer_and_its_json_schema(exported):
    serializer = SubjectExportSerializer(data=exported)
    assert serializer.is_valid(), serializer.errors
    jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text())).validate(exported)


def test_an_import_answers_201_with_counts_and_writes_the_subject(client, exported):
    response = client.post(f"{API}/subjects/alice-2/import", exported, format="json")

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["subject"] == "alice-2"
    assert body["counts"]["notes"] == 5 and body["counts"]["facts"] == 4 and body["counts"]["messages"] == 2
    copy = Subject.objects.get(external_id="alice-2")
    assert Note.objects.filter(subject=copy).count() == 5
    assert AuditEvent.objects.filter(action="subject.imported", subject=copy).exists()


def test_a_subject_with_memory_is_409(client, exported):
    response = client.post(f"{API}/subjects/alice/import", exported, format="json")

    assert response.status_code == 409
    assert response.json()["error"]["field"] == "subject"


def test_a_malformed_document_is_400_naming_the_field_and_writes_nothing(client, exported):
    exported["notes"][0]["content"] = 12
    notes = Note.objects.count()

    response = client.post(f"{API}/subjects/alice-2/import", exported, format="json")

    assert response.status_code == 400
    assert "content" in response.json()["error"]["field"]
    assert Note.objects.count() == notes
    assert not Subject.objects.filter(external_id="alice-2").exists()


def test_a_dangling_reference_is_404_naming_it_and_writes_nothing(client, exported):
    exported["links"][0]["dst"] = 999999

    response = client.post(f"{API}/subjects/alice-2/import", exported, format="json")

    assert response.status_code == 404
    assert response.json()["error"]["field"] == "links[0].dst"
    assert not Subject.objects.filter(external_id="alice-2").exists()


def test_another_app_imports_into_its_own_subject_and_ours_is_untouched(
    client, other_client, other_app, exported
):
    ours = sorted(Note.objects.values_list("pk", "content"))

    response = other_client.post(f"{API}/subjects/alice/import", exported, format="json")

    assert response.status_code == 201
    theirs = Subject.objects.get(app=other_app, external_id="alice")
    assert Note.objects.filter(subject=theirs).count() == 5
    assert sorted(Note.objects.exclude(subject=theirs).values_list("pk", "content")) == ours
