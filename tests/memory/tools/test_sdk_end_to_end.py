"""The tool loop end to end with the official SDKs: the provider (an httpx2 transport answering
like OpenAI or Anthropic) asks for a memory tool, memoryweb runs it in the conversation
(memoryweb.client over Django's WSGI stack), the result goes back to the provider in the SDK's
own shape, and the rows show the effect. Both SDKs run on httpx2 (their `http_client`)."""

import json

import anthropic
import httpx2
import openai
import pytest

from memory.models import Note, PendingMemory, ProfileFact
from tests.llm_wire import anthropic_tool_message, openai_completion

pytestmark = pytest.mark.django_db


class Provider:
    """Answers the first request with `first`, every later one with `then`; keeps the bodies."""

    def __init__(self, first: dict, then: dict):
        self.answers = [first, then]
        self.requests: list[dict] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        return httpx2.Response(200, json=self.answers[min(len(self.requests), 2) - 1])


def openai_tool_call(name: str, arguments: dict) -> dict:
    body = openai_completion("", finish_reason="tool_calls")
    body["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "tool_calls": [
            {
                "id": "call_abc",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }
    return body


def anthropic_text(text: str) -> dict:
    return {
        "id": "msg_02",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 120, "output_tokens": 12},
    }


def openai_client(provider: Provider) -> openai.OpenAI:
    transport = httpx2.MockTransport(provider.handler)
    return openai.OpenAI(
        api_key="x", base_url="http://provider.test/v1", http_client=httpx2.Client(transport=transport)
    )


def anthropic_client(provider: Provider) -> anthropic.Anthropic:
    transport = httpx2.MockTransport(provider.handler)
    return anthropic.Anthropic(
        api_key="x", base_url="http://provider.test", http_client=httpx2.Client(transport=transport)
    )


def test_the_openai_sdk_stores_a_note_through_the_tool_endpoint(memoryweb, conversation, subject):
    provider = Provider(
        openai_tool_call(
            "memory_notes_store", {"content": "Alice's invoices go out on the 1st", "tags": ["billing"]}
        ),
        openai_completion("Noted: invoices go out on the 1st."),
    )
    llm = openai_client(provider)
    messages: list = [{"role": "user", "content": "Remember: my invoices go out on the 1st."}]
    tools = memoryweb.tools("openai")

    reply = llm.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
    messages.append(reply.choices[0].message.model_dump(exclude_none=True))
    answers = [
        memoryweb.tool_call(conversation.pk, call, format="openai")
        for call in reply.choices[0].message.tool_calls
    ]
    messages += [answer["result"] for answer in answers]
    final = llm.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)

    assert final.choices[0].message.content == "Noted: invoices go out on the 1st."
    assert {t["function"]["name"] for t in provider.requests[0]["tools"]} >= {
        "memory_notes_store",
        "memory_read",
    }
    sent_back = provider.requests[1]["messages"][-1]
    assert sent_back == {
        "role": "tool",
        "tool_call_id": "call_abc",
        "content": answers[0]["result"]["content"],
    }
    note = Note.objects.get(subject=subject)
    assert json.loads(sent_back["content"])["id"] == note.pk
    assert (note.content, note.tags, note.scope, note.conversation_id) == (
        "Alice's invoices go out on the 1st",
        ["billing"],
        "billing-api",
        conversation.pk,
    )


def test_the_anthropic_sdk_sets_a_fact_through_the_tool_endpoint(memoryweb, conversation, subject):
    provider = Provider(
        anthropic_tool_message("memory_profile_set", {"key": "timezone", "value": "Europe/Lisbon"}),
        anthropic_text("Got it, Lisbon time."),
    )
    llm = anthropic_client(provider)
    messages: list = [{"role": "user", "content": "I live in Lisbon now, use my time zone."}]
    tools = memoryweb.tools("anthropic")

    reply = llm.messages.create(model="claude-haiku-4-5", max_tokens=512, messages=messages, tools=tools)
    uses = [block for block in reply.content if block.type == "tool_use"]
    messages.append(
        {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in reply.content]}
    )
    results = [memoryweb.tool_call(conversation.pk, block, format="anthropic")["result"] for block in uses]
    messages.append({"role": "user", "content": results})
    final = llm.messages.create(model="claude-haiku-4-5", max_tokens=512, messages=messages, tools=tools)

    assert final.content[0].text == "Got it, Lisbon time."
    assert {t["name"] for t in provider.requests[0]["tools"]} >= {"memory_profile_set"}
    sent_back = provider.requests[1]["messages"][-1]["content"]
    assert sent_back == [{"type": "tool_result", "tool_use_id": "toolu_01", "content": results[0]["content"]}]
    fact = ProfileFact.objects.get(subject=subject, key="timezone", valid_to=None)
    assert json.loads(sent_back[0]["content"])["id"] == fact.pk and fact.value == "Europe/Lisbon"


def test_a_refused_call_goes_back_to_anthropic_as_an_error_result(memoryweb, conversation, subject):
    provider = Provider(
        anthropic_tool_message(
            "memory_notes_store", {"content": "Alice takes insulin", "category": "health"}
        ),
        anthropic_text("I'll keep that once you approve it."),
    )
    llm = anthropic_client(provider)
    messages: list = [{"role": "user", "content": "I take insulin, remember that."}]

    reply = llm.messages.create(
        model="claude-haiku-4-5", max_tokens=512, messages=messages, tools=memoryweb.tools("anthropic")
    )
    block = next(b for b in reply.content if b.type == "tool_use")
    answer = memoryweb.tool_call(conversation.pk, block, format="anthropic")
    messages += [
        {"role": "assistant", "content": [block.model_dump(exclude_none=True)]},
        {"role": "user", "content": [answer["result"]]},
    ]
    llm.messages.create(model="claude-haiku-4-5", max_tokens=512, messages=messages)

    # under "ask" (the default) a health note is not stored: it waits for the person
    assert json.loads(provider.requests[1]["messages"][-1]["content"][0]["content"])["status"] == "pending"
    assert not Note.objects.filter(subject=subject).exists()
    assert PendingMemory.objects.get(subject=subject).payload["content"] == "Alice takes insulin"

    bad = memoryweb.tool_call(
        conversation.pk,
        {"id": "toolu_9", "type": "tool_use", "name": "memory_notes_store", "input": {}},
        format="anthropic",
    )
    assert bad["result"]["is_error"] is True and bad["error"]["field"] == "content"
