"""Bi-temporal facts: a fact learned from a message is valid from the message's `occurred_at`;
the record time (`recorded_at`) is kept apart, so history reads in the order things happened
even when the turns arrive out of order."""

from datetime import UTC, datetime

from django.utils import timezone

from chat.models import ReflectionRun
from chat.reflect import turn_reflect
from memory.models import ProfileFact

PARIS = datetime(2022, 1, 10, 9, 0, tzinfo=UTC)
MADRID = datetime(2022, 9, 15, 9, 0, tzinfo=UTC)
BERLIN = datetime(2023, 6, 1, 9, 0, tzinfo=UTC)


def conversation(client):
    return client.post(
        "/api/v1/conversations", {"subject": "alice", "external_id": "c"}, format="json"
    ).json()["id"]


def turn_reflected(client, conversation_id, text, at):
    url = f"/api/v1/conversations/{conversation_id}"
    client.post(f"{url}/messages", {"text": text, "occurred_at": at.isoformat()}, format="json")
    client.post(f"{url}/responses", {"text": "Noted.", "occurred_at": at.isoformat()}, format="json")
    turn_reflect(run_id=ReflectionRun.objects.get(status="queued").pk)


def test_a_fact_from_a_past_message_is_valid_from_the_message_time(client, subject):
    before = timezone.now()

    turn_reflected(client, conversation(client), "I live in Paris.", PARIS)

    fact = ProfileFact.objects.get(subject=subject, key="location")
    assert fact.valid_from == PARIS
    assert fact.created_at >= before  # the record time is when it was learned
    shown = client.get("/api/v1/subjects/alice/profile").json()["facts"][0]
    assert shown["valid_from"].startswith("2022-01-10") and shown["recorded_at"] >= before.isoformat()[:19]


def test_turns_posted_out_of_order_read_in_the_order_they_happened(client, subject):
    conversation_id = conversation(client)
    turn_reflected(client, conversation_id, "I live in Paris.", PARIS)
    turn_reflected(client, conversation_id, "I live in Berlin.", BERLIN)
    turn_reflected(client, conversation_id, "I live in Madrid.", MADRID)  # learned last, happened between

    versions = client.get("/api/v1/subjects/alice/profile/location/history").json()["versions"]

    assert [v["value"] for v in versions] == ["Paris", "Madrid", "Berlin"]
    assert [v["valid_from"][:10] for v in versions] == ["2022-01-10", "2022-09-15", "2023-06-01"]
    assert [v["valid_to"] and v["valid_to"][:10] for v in versions] == ["2022-09-15", "2023-06-01", None]
    by_value = {v["value"]: v for v in versions}
    assert by_value["Paris"]["superseded_by"] == by_value["Madrid"]["id"]
    assert by_value["Madrid"]["superseded_by"] == by_value["Berlin"]["id"]
    recorded = sorted(versions, key=lambda v: v["recorded_at"])
    assert [v["value"] for v in recorded] == ["Paris", "Berlin", "Madrid"]  # record time kept apart
    active = ProfileFact.objects.get(subject=subject, key="location", valid_to=None)
    assert active.value == "Berlin"  # what is true now is what happened last


def test_a_statement_older_than_the_current_value_with_the_same_value_confirms_it(client, subject):
    conversation_id = conversation(client)
    turn_reflected(client, conversation_id, "I live in Paris.", PARIS)
    turn_reflected(client, conversation_id, "I live in Berlin.", BERLIN)
    turn_reflected(client, conversation_id, "I live in Paris.", MADRID)  # still Paris then

    facts = ProfileFact.objects.filter(subject=subject, key="location").order_by("valid_from")
    assert [(f.value, f.confirmations) for f in facts] == [("Paris", 1), ("Berlin", 0)]
