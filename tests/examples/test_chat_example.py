"""examples/chat.py end to end: memoryweb in-process over Django's WSGI app, and the real openai
SDK talking to a fake provider (an httpx2.MockTransport answering like chat.completions)."""

import io
import json

import httpx
import httpx2
import openai
import pytest
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections

from examples.chat import main
from memory.models import Message
from memoryweb.client import MemoryWeb
from tests.llm_wire import openai_completion

# The tool the fake model calls, its arguments, and what its result must hold.
TOOL, ARGUMENTS, RESULT_HOLDS = "memory_profile_set", {"key": "city", "value": "Lisbon"}, "Lisbon"


def tool_call_completion(name: str, arguments: dict) -> dict:
    body = openai_completion("", finish_reason="tool_calls")
    body["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }
    return body


class Provider:
    """Answers the first request with a tool call, the next (which must carry its result) in text."""

    def __init__(self):
        self.requests: list[dict] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        assert request.url.path.endswith("/chat/completions")
        body = json.loads(request.content)
        self.requests.append(body)
        if len(self.requests) == 1:
            return httpx2.Response(200, json=tool_call_completion(TOOL, ARGUMENTS))
        results = [m for m in body["messages"] if m["role"] == "tool"]
        if not results or results[0]["tool_call_id"] != "call_1":
            return httpx2.Response(400, json={"error": {"message": "the tool result is missing"}})
        return httpx2.Response(200, json=openai_completion("Try Taberna do Mar, Alice."))


@pytest.fixture
def memory(api_key, db):
    # Django would close the test transaction's connection at the end of each request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    transport = httpx.WSGITransport(app=get_wsgi_application())
    with MemoryWeb("http://testserver", api_key, transport=transport) as client:
        yield client
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def provider():
    return Provider()


@pytest.fixture
def llm(provider):
    http = httpx2.Client(transport=httpx2.MockTransport(provider.handler))
    return openai.OpenAI(api_key="sk-test", base_url="http://provider.test/v1", http_client=http)


def run(memory, llm, *args):
    out = io.StringIO()
    code = main(
        ["--subject", "alice", "--conversation", "t-1", "--api-key", "unused", *args],
        memory=memory,
        llm=llm,
        out=out,
    )
    return code, out.getvalue()


def test_a_turn_gets_memory_runs_the_tool_and_posts_the_turn(memory, llm, provider):
    memory.profile_set("alice", "name", "Alice")

    code, printed = run(memory, llm, "--once", "Where should I eat in Lisbon?")

    assert code == 0 and printed.strip() == "Try Taberna do Mar, Alice."
    first, second = provider.requests
    system = "\n".join(m["content"] for m in first["messages"] if m["role"] == "system")
    assert "- name: Alice" in system
    assert first["messages"][-1] == {"role": "user", "content": "Where should I eat in Lisbon?"}
    assert TOOL in [t["function"]["name"] for t in first["tools"]]
    assistant, result = second["messages"][-2:]
    assert assistant["tool_calls"][0]["function"]["name"] == TOOL
    assert result["role"] == "tool" and result["tool_call_id"] == "call_1"
    assert RESULT_HOLDS in result["content"] and "error" not in json.loads(result["content"])
    turn = Message.objects.filter(conversation__external_id="t-1").order_by("id")
    assert [(m.role, m.text) for m in turn] == [
        ("user", "Where should I eat in Lisbon?"),
        ("assistant", "Try Taberna do Mar, Alice."),
    ]


def test_a_provider_error_is_shown_and_no_reply_is_posted(memory, provider, capsys):
    broken = openai.OpenAI(
        api_key="sk-test",
        base_url="http://provider.test/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(lambda r: httpx2.Response(503, json={}))),
    )

    code, printed = run(memory, broken, "--once", "hello")

    assert code == 1 and printed == ""
    assert "model: InternalServerError" in capsys.readouterr().err
    assert list(Message.objects.values_list("role", flat=True)) == ["user"]


def test_dry_run_prints_the_request_and_calls_no_model(memory, llm, provider):
    memory.profile_set("alice", "name", "Alice")

    code, printed = run(memory, llm, "--dry-run", "--once", "Where should I eat in Lisbon?")

    assert code == 0 and provider.requests == []
    request = json.loads(printed)
    assert "- name: Alice" in "\n".join(m["content"] for m in request["messages"] if m["role"] == "system")
    assert request["messages"][-1] == {"role": "user", "content": "Where should I eat in Lisbon?"}
    assert TOOL in [t["function"]["name"] for t in request["tools"]]
    assert not Message.objects.exists()
