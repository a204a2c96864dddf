"""POST /api/v1/context's `Server-Timing` (memory/api/timing.py): only when the setting is on,
only durations, and the parts `bench context` breaks a request into."""

import pytest
from django.test import override_settings

from memory.api.timing import server_timing_parse
from memory.models import RetrievalEvent
from memory.services import note_store
from memoryweb.bench.context import BREAKDOWN, breakdown_of


@pytest.fixture
def remembered(subject, actor, config):
    note_store(subject=subject, content="Alice is allergic to peanuts", actor=actor, config=config)
    return subject


def _post(client):
    return client.post("/api/v1/context", {"subject": "alice", "message": "peanuts?"}, format="json")


def test_no_server_timing_by_default(client, remembered):
    response = _post(client)

    assert response.status_code == 200
    assert "Server-Timing" not in response


@override_settings(MEMORYWEB_SERVER_TIMING=True)
def test_server_timing_names_every_server_part_and_the_body_is_unchanged(client, remembered):
    response = _post(client)

    assert response.status_code == 200
    parts = server_timing_parse(response["Server-Timing"])
    assert list(parts) == [name for name in BREAKDOWN if name != "transport"]
    assert all(ms >= 0 for ms in parts.values())
    assert "peanuts" not in response["Server-Timing"]  # durations only, never content
    assert any("peanuts" in block["text"] for block in response.json()["blocks"])
    assert RetrievalEvent.objects.filter(subject=remembered).count() == 1  # still recorded once


@override_settings(MEMORYWEB_SERVER_TIMING=True)
def test_a_refused_request_carries_no_server_timing(client, remembered):
    response = client.post("/api/v1/context", {"subject": "alice", "message": ""}, format="json")

    assert response.status_code == 400
    assert "Server-Timing" not in response


def test_the_breakdown_gives_the_transport_what_the_server_did_not_account_for():
    split = breakdown_of(10.0, "auth;dur=1.5, lookup;dur=0.5, build;dur=4, event;dur=1, serialise;dur=1")

    assert list(split) == list(BREAKDOWN)
    assert split["transport"] == pytest.approx(2.0)
    # a response without the header: everything is transport
    assert breakdown_of(3.0, "") == {**dict.fromkeys(BREAKDOWN, 0.0), "transport": 3.0}
    assert server_timing_parse("x, y;desc=a, z;dur=oops, w;dur=2") == {"w": 2.0}
