"""GET /api/v1/tools and POST /api/v1/tools/call: the two SDK shapes, the conversation as the
only context, and every failure a tool result (never a 500)."""

import jsonschema
import pytest
from django.db import connection

from memory.models import Note
from memory.tools import registry
from memory.tools.registry import Tool
from memoryweb.models import Counter
from tests.memory.tools.conftest import tool_call_body

pytestmark = pytest.mark.django_db

TOOLS = {
    "memory.lessons.recall",
    "memory.notes.forget",
    "memory.notes.recall",
    "memory.notes.store",
    "memory.procedures.recall",
    "memory.profile.history",
    "memory.profile.list",
    "memory.profile.remove",
    "memory.profile.set",
    "memory.read",
}
WIRE = {name.replace(".", "_") for name in TOOLS}


def test_the_tools_come_in_the_openai_shape_by_default(client):
    response = client.get("/api/v1/tools")

    assert response.status_code == 200 and response.json()["format"] == "openai"
    tools = response.json()["tools"]
    assert {t["function"]["name"] for t in tools} == WIRE
    for tool in tools:
        assert tool["type"] == "function" and tool["function"]["description"]
        jsonschema.Draft202012Validator.check_schema(tool["function"]["parameters"])
        assert tool["function"]["parameters"]["additionalProperties"] is False


def test_the_tools_come_in_the_anthropic_shape(client):
    tools = client.get("/api/v1/tools?format=anthropic").json()["tools"]

    assert {t["name"] for t in tools} == WIRE
    assert all(set(t) == {"name", "description", "input_schema"} for t in tools)


def test_no_tool_takes_a_subject_scope_or_working_dir(client):
    for tool in client.get("/api/v1/tools?format=anthropic").json()["tools"]:
        assert not {"subject", "scope", "working_dir", "conversation"} & set(
            tool["input_schema"]["properties"]
        )


def test_an_unknown_format_is_a_400_naming_it(client):
    response = client.get("/api/v1/tools?format=gemini")

    assert response.status_code == 400 and response.json()["error"]["field"] == "format"


def test_a_call_in_the_anthropic_shape_answers_with_a_tool_result_block(call, subject):
    answer = call("memory_notes_store", {"content": "Alice moved to Lisbon"}, format="anthropic")

    assert answer["ok"] is True and answer["error"] is None
    assert answer["result"]["type"] == "tool_result" and answer["result"]["tool_use_id"] == "toolu_1"
    assert "is_error" not in answer["result"]
    assert Note.objects.get(subject=subject).content == "Alice moved to Lisbon"


def test_a_failed_anthropic_call_is_a_tool_result_marked_as_an_error(call):
    answer = call("memory_profile_remove", {"key": "nothing"}, format="anthropic")

    assert answer["ok"] is False and answer["result"]["is_error"] is True
    assert answer["output"] == {"error": answer["error"]}


def test_an_unknown_tool_is_a_tool_result_naming_the_name(call):
    answer = call("memory_everything_delete", {})

    assert answer["ok"] is False and answer["error"]["code"] == "unknown_tool"
    assert answer["error"]["field"] == "name" and answer["tool"] == "memory_everything_delete"
    assert answer["result"] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": answer["result"]["content"],
    }


def test_arguments_that_are_not_json_are_a_tool_result_naming_them(call):
    answer = call("memory_notes_store", '{"content": "unterminated')

    assert answer["ok"] is False and answer["error"]["field"] == "arguments"


def test_a_missing_or_mistyped_argument_is_a_tool_result_naming_it(call):
    missing = call("memory_notes_store", {"tags": ["x"]})
    mistyped = call("memory_notes_store", {"content": "x", "tags": "travel"})
    nested = call("memory_notes_store", {"content": "x", "tags": ["ok", 7]})

    assert (missing["error"]["code"], missing["error"]["field"]) == ("invalid", "content")
    assert mistyped["error"]["field"] == "tags" and nested["error"]["field"] == "tags.1"
    assert not Note.objects.exists()


def test_another_apps_conversation_is_a_404(other_client, conversation):
    response = other_client.post(
        "/api/v1/tools/call",
        tool_call_body(conversation.pk, "memory_notes_store", {"content": "x"}),
        format="json",
    )

    assert response.status_code == 404 and response.json()["error"]["field"] == "conversation"
    assert not Note.objects.exists()


def test_a_malformed_openai_call_is_a_400_naming_the_nested_field(client, conversation):
    body = tool_call_body(conversation.pk, "memory_profile_list")
    body["call"]["function"]["arguments"] = {"already": "parsed"}

    response = client.post("/api/v1/tools/call", body, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["field"] == "call.function.arguments"


def test_a_call_in_the_other_sdks_shape_is_a_400_naming_what_does_not_fit(client, conversation):
    body = tool_call_body(conversation.pk, "memory_profile_list", format="openai")
    body["format"] = "anthropic"

    response = client.post("/api/v1/tools/call", body, format="json")

    assert response.status_code == 400 and response.json()["error"]["field"] == "call.function"


def test_a_call_without_its_id_is_a_400_naming_it(client, conversation):
    body = tool_call_body(conversation.pk, "memory_profile_list", format="anthropic")
    del body["call"]["id"]

    response = client.post("/api/v1/tools/call", body, format="json")

    assert response.status_code == 400 and response.json()["error"]["field"] == "call.id"


@pytest.fixture
def broken_tool(monkeypatch):
    """A tool whose code fails: one that raises, one whose SQL the database refuses."""

    def raises(context, arguments):
        Note.objects.create(subject=context.subject, content="half-done")
        raise RuntimeError("boom")

    def bad_sql(context, arguments):
        Note.objects.create(subject=context.subject, content="half-done")
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table")
        return {}

    registry._load()
    for name, run in (("memory.test.raises", raises), ("memory.test.bad_sql", bad_sql)):
        monkeypatch.setitem(
            registry._TOOLS, name, Tool(name=name, description="fails", input_schema={}, run=run)
        )


@pytest.mark.parametrize("name", ["memory_test_raises", "memory_test_bad_sql"])
def test_a_tool_that_fails_unexpectedly_is_a_tool_result_and_leaves_nothing_behind(call, broken_tool, name):
    answer = call(name, {})

    assert answer["ok"] is False and answer["error"]["code"] == "internal"
    assert "boom" not in answer["error"]["message"]  # what failed is logged, not told to the model
    assert not Note.objects.exists()  # the half-done write was rolled back
    assert Counter.objects.get(name="tools.error.internal").value == 1  # the connection still works
