"""Fixtures of the memory tool tests: a conversation in a project, and one tool call through
POST /api/v1/tools/call."""

import json

import httpx
import pytest
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections

from memoryweb.client import MemoryWeb
from tests.factories import ConversationFactory


@pytest.fixture
def conversation(subject):
    return ConversationFactory(subject=subject, scope="billing-api", working_dir="/src/billing")


def tool_call_body(conversation_id: int, name: str, arguments=None, *, format: str = "openai") -> dict:
    if format == "openai":
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
        call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": raw}}
    else:
        call = {"id": "toolu_1", "type": "tool_use", "name": name, "input": arguments or {}}
    return {"conversation": conversation_id, "format": format, "call": call}


@pytest.fixture
def call(client, conversation):
    """call(name, arguments) → the endpoint's answer (asserting it is a 200)."""

    def run(name, arguments=None, *, conversation_id=None, format="openai"):
        body = tool_call_body(conversation_id or conversation.pk, name, arguments, format=format)
        response = client.post("/api/v1/tools/call", body, format="json")
        assert response.status_code == 200, response.json()
        return response.json()

    return run


@pytest.fixture
def memoryweb(api_key, db):
    """memoryweb.client over Django's real WSGI stack, in-process."""
    # the test's transaction owns the connection; Django would close it after each request
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    transport = httpx.WSGITransport(app=get_wsgi_application())
    with MemoryWeb("http://testserver", api_key, transport=transport) as client:
        yield client
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)
