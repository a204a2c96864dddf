"""The OpenAPI schema says what the API answers and refuses (the full check against the running
app is test_api_schemathesis.py): list wrappers, the context, errors, enums, unknown fields."""

import pytest
from rest_framework.test import APIClient

from memory.models import ConsentCategory, Policy, Signal


@pytest.fixture
def schema(db):
    response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()


def _ok_schema(schema, path, method, status="200"):
    ref = schema["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]["$ref"]
    return schema["components"]["schemas"][ref.rsplit("/", 1)[1]]


@pytest.mark.parametrize(
    "path,key",
    [
        ("/api/v1/subjects/{subject}/notes", "notes"),
        ("/api/v1/subjects/{subject}/profile", "facts"),
        ("/api/v1/subjects/{subject}/lessons", "lessons"),
        ("/api/v1/subjects/{subject}/procedures", "procedures"),
        ("/api/v1/subjects/{subject}/pending", "pending"),
        ("/api/v1/conversations", "conversations"),
        ("/api/v1/conversations/{conversation_id}/messages", "messages"),
        ("/api/v1/consent/categories", "categories"),
        ("/api/v1/subjects/{subject}/consent", "policies"),
    ],
)
def test_a_list_endpoint_is_documented_as_the_object_wrapping_its_list(schema, path, key):
    body = _ok_schema(schema, path, "get")

    assert body["type"] == "object" and body["required"] == [key]
    assert body["properties"][key]["type"] == "array"


def test_the_context_answer_has_its_schema(schema):
    body = _ok_schema(schema, "/api/v1/context", "post")

    assert {"stable_prefix", "tail", "blocks", "items", "tokens", "retrieval_event_id"} <= set(
        body["required"]
    )


def test_every_operation_documents_its_errors_in_the_envelope(schema):
    for path, operations in schema["paths"].items():
        if not path.startswith("/api/v1/"):
            continue
        for method, operation in operations.items():
            if not operation.get("security"):
                # keyless (liveness): only its own answers, no auth or rate-limit errors
                assert not {"401", "403", "429"} & set(operation["responses"]), (method, path)
                continue
            # the admin routes (docs/admin-api.md) are not rate limited: no 429
            statuses = ("400", "401", "403", "404") + (() if path.startswith("/api/v1/admin/") else ("429",))
            for status in statuses:
                error = operation["responses"][status]["content"]["application/json"]["schema"]
                assert error == {"$ref": "#/components/schemas/ErrorOut"}, (method, path, status)
            if "requestBody" in operation:
                assert {"413", "415"} <= set(operation["responses"]), (method, path)
    assert "409" in schema["paths"]["/api/v1/subjects/{subject}/votes"]["post"]["responses"]


def test_signals_policies_and_categories_are_listed_as_enums(schema):
    components = schema["components"]["schemas"]

    assert components["SignalEnum"]["enum"] == Signal.values
    assert components["PolicyEnum"]["enum"] == Policy.values
    slugs = sorted(ConsentCategory.objects.values_list("slug", flat=True))
    assert slugs and components["CategoryEnum"]["enum"] == slugs


def test_request_bodies_refuse_unknown_fields(schema):
    requests = {name: s for name, s in schema["components"]["schemas"].items() if name.endswith("Request")}

    assert len(requests) >= 12
    open_bodies = {
        name
        for name, s in requests.items()
        if s.get("additionalProperties") is not False and "oneOf" not in s  # a oneOf of strict ones
    }
    assert open_bodies == set()
    assert requests["MessageOrBatchRequest"]["oneOf"] == [
        {"$ref": "#/components/schemas/SingleMessageInRequest"},
        {"$ref": "#/components/schemas/MessagesBatchRequest"},
    ]
