"""Strict input: each field takes only its JSON type, a 400 names the field, and nothing is written.

DRF alone would take `12345` as a string, "5" as a number, "yes" as a boolean and "١" (an
Arabic-Indic digit) as 1; the fields of memory/api/fields.py refuse all of them, in bodies and
in query strings alike. The size limits answer in the JSON envelope too: a body over
DATA_UPLOAD_MAX_MEMORY_SIZE is a 413 (the request line and headers are the web server's,
test_api_webserver.py).
"""

import json

import pytest
from rest_framework import serializers

import memoryweb.urls
from memory.api.base import StrictSerializer
from memory.api.fields import STRICT_FIELDS
from memory.models import (
    AuditEvent,
    ConsentCategory,
    Conversation,
    Message,
    Note,
    NoteVersion,
    ProfileFact,
    RetrievalEvent,
    Subject,
    SubjectConsent,
    VoteEvent,
)
from memory.services import note_store
from memory.services.conversations import conversation_get_or_create

API = "/api/v1"
WRITTEN = (
    Subject,
    Conversation,
    Message,
    Note,
    NoteVersion,
    ProfileFact,
    VoteEvent,
    RetrievalEvent,
    AuditEvent,
    SubjectConsent,
)


@pytest.fixture
def world(subject, actor, config):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)
    note, _ = note_store(subject=subject, content="Alice's cat is called Miso", actor=actor, config=config)
    return {"conversation": conversation.pk, "note": note.pk}


# (method, path, body, field): each body is valid but for one value of the wrong JSON type
WRONG_TYPES = [
    ("post", "/subjects/alice/notes", {"content": 12345}, "content"),
    ("post", "/subjects/alice/notes", {"content": True}, "content"),
    ("post", "/subjects/alice/notes", {"content": "x", "tags": [1, 2]}, "tags.0"),
    ("post", "/subjects/alice/notes", {"content": "x", "tags": "pets"}, "tags"),
    ("post", "/subjects/alice/notes", {"content": "x", "conversation": "{conversation}s"}, "conversation"),
    ("post", "/subjects/alice/notes", {"content": "x", "message": 1.0}, "message"),
    ("post", "/subjects/alice/notes", {"content": "x", "occurred_at": 1700000000}, "occurred_at"),
    ("post", "/subjects/alice/notes", {"content": "x", "occurred_at": "٢٠٢٤-01-01T00:00:00Z"}, "occurred_at"),
    ("patch", "/subjects/alice/notes/{note}", {"content": 7}, "content"),
    ("post", "/subjects/alice/profile", {"key": "city", "value": "Lyon", "pinned": "yes"}, "pinned"),
    ("post", "/subjects/alice/profile", {"key": "city", "value": "Lyon", "pinned": 1}, "pinned"),
    ("post", "/subjects/alice/profile", {"key": "city", "value": 42}, "value"),
    ("post", "/subjects/alice/profile", {"key": "city", "value": "Lyon", "confidence": "0.5"}, "confidence"),
    ("post", "/subjects/alice/profile", {"key": "city", "value": "Lyon", "confidence": True}, "confidence"),
    ("post", "/subjects/alice/profile", {"key": "city", "value": "Lyon", "keywords": [3]}, "keywords.0"),
    ("post", "/context", {"subject": "alice", "message": "hi", "k": "5"}, "k"),
    ("post", "/context", {"subject": "alice", "message": "hi", "full": "true"}, "full"),
    ("post", "/context", {"subject": "alice", "message": "hi", "conversation": True}, "conversation"),
    ("post", "/context", {"subject": 7, "message": "hi"}, "subject"),
    ("post", "/conversations", {"subject": "alice", "external_id": 9}, "external_id"),
    ("post", "/conversations/{conversation}/messages", {"text": "hi", "role": 1}, "role"),
    ("post", "/conversations/{conversation}/messages", {"text": ["hi"]}, "text"),
    ("post", "/conversations/{conversation}/responses", {"text": 3.5}, "text"),
    ("post", "/flush", {"subject": "alice", "timeout_ms": "100"}, "timeout_ms"),
    ("post", "/subjects/alice/votes", {"item": "n:{note}", "signal": 1}, "signal"),
    ("post", "/subjects/alice/votes", {"item": "n:١", "signal": "up"}, "item"),
    ("post", "/subjects/alice/consent", {"category": "health", "policy": 1}, "policy"),
    ("post", "/subjects/alice/notes", {"content": "x", "": 1}, ""),
]


def _fill(value, world):
    if isinstance(value, dict):
        return {k: _fill(v, world) for k, v in value.items()}
    if isinstance(value, str):
        for name, id_ in world.items():
            if value == "{" + name + "}":
                return id_
            value = value.replace("{" + name + "}", str(id_))
    return value


def _counts():
    return [model.objects.count() for model in WRITTEN]


@pytest.mark.parametrize(
    "method,path,body,field", WRONG_TYPES, ids=lambda v: v if isinstance(v, str) else None
)
def test_a_value_of_the_wrong_json_type_is_a_400_naming_the_field_and_writes_nothing(
    client, world, method, path, body, field
):
    before = _counts()

    response = getattr(client, method)(API + _fill(path, world), _fill(body, world), format="json")

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("invalid", field)
    assert field in error["fields"]
    assert _counts() == before


QUERY_WRONG = [
    ("/subjects/alice/notes?k=١", "k"),
    ("/subjects/alice/notes?k=5.0", "k"),
    ("/subjects/alice/notes?archived=yes", "archived"),
    ("/subjects/alice/notes?archived=1", "archived"),
    ("/subjects/alice/notes?quer=cat", "quer"),
    ("/subjects/alice/lessons?k=٣", "k"),
    ("/conversations?subject=alice&limit=%EF%BC%95", "limit"),  # a fullwidth 5
    ("/conversations/{conversation}/messages?before=١", "before"),
    ("/subjects/alice/pending?limit=+5", "limit"),
]


@pytest.mark.parametrize("path,field", QUERY_WRONG)
def test_a_query_parameter_that_is_not_its_type_in_ascii_is_a_400_naming_it(client, world, path, field):
    response = client.get(API + _fill(path, world))

    assert response.status_code == 400, response.content
    assert response.json()["error"]["field"] == field


def test_query_numbers_and_booleans_in_ascii_still_work(client, world):
    response = client.get(API + "/subjects/alice/notes", {"k": "1", "archived": "true", "query": "cat"})

    assert response.status_code == 200
    assert [n["id"] for n in response.json()["notes"]] == [world["note"]]


def test_a_vote_on_a_note_id_in_arabic_indic_digits_casts_nothing(client, subject, actor, config):
    note, _ = note_store(subject=subject, content="Alice runs on Sundays", actor=actor, config=config)
    arabic_indic = "".join(chr(0x0660 + int(digit)) for digit in str(note.pk))  # int() reads these

    response = client.post(
        API + "/subjects/alice/votes", {"item": f"n:{arabic_indic}", "signal": "up"}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["error"]["field"] == "item"
    assert not VoteEvent.objects.exists()


def test_an_unknown_field_named_empty_is_reported_under_its_own_name(client, subject):
    response = client.post(API + "/subjects/alice/notes", {"content": "x", "": "?"}, format="json")

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "" and error["fields"] == {"": "unknown field"}
    assert error["message"] == '"": unknown field'
    assert not Note.objects.exists()


def test_a_string_over_its_max_length_as_sent_is_refused_even_when_trimming_would_fit_it(client, subject):
    keyword = "\n" + "k" * 60  # 61 characters as sent, 60 once trimmed: the schema counts 61

    response = client.post(
        API + "/subjects/alice/profile",
        {"key": "city", "value": "Lyon", "pinned": False, "keywords": [keyword]},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["error"]["field"].startswith("keywords")
    assert not ProfileFact.objects.exists()


def test_a_body_over_the_upload_limit_is_a_413_in_the_json_envelope(client, subject, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = json.dumps({"content": "x" * 2000})

    response = client.post(API + "/subjects/alice/notes", body, content_type="application/json")

    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("too_large", "body")
    assert "1000" in error["message"]
    assert not Note.objects.exists()


def test_a_body_over_the_default_limit_of_2_5_mb_is_a_413(client, subject):
    body = json.dumps({"content": "x" * (3 * 1024 * 1024)})

    response = client.post(API + "/subjects/alice/notes", body, content_type="application/json")

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"


def _input_serializers():
    """Every StrictSerializer subclass that a view of the URLconf uses (imported by it)."""
    assert memoryweb.urls.urlpatterns
    seen, todo = [], list(StrictSerializer.__subclasses__())
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return [cls for cls in seen if cls.__module__.split(".")[0] in ("memory", "chat", "consolidation")]


def _leaf_fields(field):
    if isinstance(field, serializers.ListSerializer):
        yield from _leaf_fields(field.child)
    elif isinstance(field, serializers.Serializer):
        for child in field.fields.values():
            yield from _leaf_fields(child)
    else:
        yield field
        if isinstance(field, serializers.ListField):
            yield from _leaf_fields(field.child)


def test_every_input_field_of_the_api_is_a_strict_field():
    classes = _input_serializers()
    assert len(classes) > 10
    loose = [
        f"{cls.__qualname__}.{field.field_name or field.parent.field_name}: {type(field).__name__}"
        for cls in classes
        for field in _leaf_fields(cls())
        if not isinstance(field, STRICT_FIELDS)
    ]
    assert loose == []


def test_consent_category_choice_still_takes_a_known_slug(client, subject):
    category = ConsentCategory.objects.first()

    response = client.post(
        API + "/subjects/alice/consent", {"category": category.slug, "policy": "allow"}, format="json"
    )

    assert response.status_code == 200
