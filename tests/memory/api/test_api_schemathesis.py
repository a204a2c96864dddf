"""The OpenAPI schema tells the truth: schemathesis generates requests from /api/schema/ for every
operation (valid ones and invalid ones), sends them to the Django app in-process (WSGI) with a
test app's API key, and runs all its checks on each answer: the status is documented, the body
matches the documented schema and content type, valid input is accepted, invalid input is
refused with a 4xx, nothing is a 5xx, a missing key is a 401, an unsupported method a 405.

Bounded: a few examples per operation and generation mode, so the run takes a minute or so.
`make test` runs it with the slow tests; alone: `pytest tests/memory/api/test_api_schemathesis.py`.
"""

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode

from memory.services import note_store
from memory.services.admin_keys import admin_key_create
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.documents import document_write
from memoryweb.wsgi import application

EXAMPLES_PER_OPERATION = 6


@pytest.fixture
def world(subject, actor, config):
    """Something to find: alice has a conversation with a message, a note, a fact and MEMORY.md."""
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)
    message_add(conversation=conversation, role="user", text="my cat is called Miso", actor=actor)
    note_store(subject=subject, content="Alice's cat is called Miso", actor=actor, config=config)
    document_write(subject=subject, path="MEMORY.md", content="# Memory\n- the cat is Miso", actor=actor)


@pytest.fixture
def connections_kept():
    """The app is called as WSGI, not through Django's test client, so the request signals would
    run `close_old_connections` and close the test's own connection mid-transaction (PostgreSQL;
    SQLite's in-memory test database ignores the close). Keep it open, as the test client does."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


def _bounded(case):
    # flush waits up to timeout_ms for background work that never runs inside a test transaction
    if case.operation.path == "/api/v1/flush" and isinstance(case.body, dict):
        if isinstance(case.body.get("timeout_ms"), int) and not isinstance(case.body["timeout_ms"], bool):
            case.body["timeout_ms"] = min(case.body["timeout_ms"], 20)
    return case


@pytest.mark.slow
@pytest.mark.django_db
def test_every_operation_answers_as_its_schema_says(api_key, world, connections_kept, actor):
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
    headers = {"Authorization": f"Bearer {api_key}"}
    # the operators' routes take an admin key, never an app's (docs/admin-api.md)
    admin_headers = {"Authorization": f"Bearer {admin_key_create(name='schemathesis', actor=actor)[1]}"}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 30
    failures = {}
    ran = expected = 0

    for operation in operations:
        # an operation that takes nothing (liveness) has no input to get wrong
        takes_input = any(True for _ in operation.iter_parameters()) or bool(operation.body)
        modes = (
            (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if takes_input else (GenerationMode.POSITIVE,)
        )
        expected += len(modes)
        for mode in modes:

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES_PER_OPERATION,
                deadline=None,
                database=None,
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            def run(case):
                admin = case.operation.path.startswith("/api/v1/admin/")
                _bounded(case).call_and_validate(headers=admin_headers if admin else headers)

            try:
                run()
                ran += 1
            except (Exception, BaseExceptionGroup) as exc:  # every operation's failures are collected
                failures[f"{operation.label} [{mode.value}]"] = str(exc)[:3000]

    assert failures == {}, "\n\n".join(f"{label}:\n{text}" for label, text in failures.items())
    assert ran == expected and expected > len(operations)
