"""The person over REST: GET /conversations/<id>/state and the consequence chains under
/subjects/<s>/consequences — end to end through the sidecar's own message and response posts,
reflection and the context endpoint; strict input; another app's objects are 404."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from chat.models import ReflectionRun
from chat.reflect import turn_reflect
from memory.models import AuditEvent, Consequence

API = "/api/v1"
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
ADVICE = "Run `black .` on the whole repository to reformat every file at once."


@pytest.fixture
def conversation_id(client):
    response = client.post(
        f"{API}/conversations",
        {"subject": "alice", "external_id": "repo", "mode": "coding_debug", "scope": "acme/api"},
        format="json",
    )
    assert response.status_code == 201
    return response.json()["id"]


def post(client, conversation_id, kind, text):
    response = client.post(f"{API}/conversations/{conversation_id}/{kind}", {"text": text}, format="json")
    assert response.status_code in (200, 201, 202), response.content
    return response


def reflect_all():
    for run in ReflectionRun.objects.filter(status="queued").order_by("id"):
        turn_reflect(run_id=run.pk)


def test_the_state_endpoint_shows_decayed_levels_raw_ones_and_their_cues(client, conversation_id, config):
    with time_machine.travel(T0, tick=False):
        post(client, conversation_id, "messages", "ugh, the deploy still doesn't work and it's urgent!!")
        now = client.get(f"{API}/conversations/{conversation_id}/state").json()
    with time_machine.travel(T0 + timedelta(minutes=config["state.halfLifeMinutes"]), tick=False):
        later = client.get(f"{API}/conversations/{conversation_id}/state").json()

    assert now["messages"] == 1 and now["conversation"] == conversation_id
    assert now["levels"] == now["raw"] and now["raw"]["urgency"] > 0.5
    assert "urgent" in now["signals"][0]["urgency"] and "ugh" in now["signals"][0]["frustration"]
    assert now["signals"][0]["topic_changed"] is False
    assert any(line.startswith("- urgency:") for line in now["lines"])
    assert later["raw"] == now["raw"]
    assert later["levels"]["urgency"] == pytest.approx(now["raw"]["urgency"] / 2, abs=1e-3)


def test_a_conversation_without_user_messages_has_a_calm_state(client, conversation_id):
    body = client.get(f"{API}/conversations/{conversation_id}/state").json()

    assert body["levels"] == {"urgency": 0.0, "focus": 0.0, "frustration": 0.0}
    assert (
        body["messages"] == 0 and body["updated_at"] is None and body["signals"] == [] and body["lines"] == []
    )


def test_a_reported_failure_becomes_a_chain_that_the_context_shows_when_stuck_again(client, conversation_id):
    post(client, conversation_id, "messages", "How do I fix the lint errors in the api?")
    post(client, conversation_id, "responses", ADVICE)
    post(client, conversation_id, "messages", "that broke the build")
    post(client, conversation_id, "responses", "Sorry about that. Revert the commit with `git revert HEAD`.")
    reflect_all()  # the reply closed the turn: reflection reads the report

    listed = client.get(f"{API}/subjects/alice/consequences").json()["consequences"]
    assert len(listed) == 1
    chain = listed[0]
    assert chain["outcome"] == "failure" and chain["conversation"] == conversation_id
    assert "fragile to sweeping changes" in chain["tendency"] and chain["surfaced_count"] == 0

    calm = client.post(
        f"{API}/context",
        {"subject": "alice", "message": "what does the flake8 config do?", "conversation": conversation_id},
        format="json",
    ).json()
    stuck = client.post(
        f"{API}/context",
        {"subject": "alice", "message": "same error again", "conversation": conversation_id},
        format="json",
    ).json()

    blocks = {b["name"]: b["text"] for b in stuck["blocks"]}
    assert "fragile to sweeping changes" in blocks["consequences"] and "consequences" in stuck["tail"]
    assert {b["name"]: b["text"] for b in calm["blocks"]}["consequences"] == ""
    assert client.get(f"{API}/subjects/alice/consequences/{chain['id']}").json()["surfaced_count"] == 1


@pytest.fixture
def chain(client, conversation_id):
    post(client, conversation_id, "responses", ADVICE)
    post(client, conversation_id, "messages", "that broke the build")
    post(client, conversation_id, "responses", "Sorry about that.")
    reflect_all()
    return Consequence.objects.get()


def test_the_person_corrects_a_chain_over_rest(client, chain):
    response = client.patch(
        f"{API}/subjects/alice/consequences/{chain.pk}",
        {"tendency": "CI pins black 23", "outcome_text": "lint job red"},
        format="json",
    )

    assert response.status_code == 200
    assert response.json()["tendency"] == "CI pins black 23" and response.json()["confidence"] == 1.0
    chain.refresh_from_db()
    assert (chain.tendency, chain.outcome_text) == ("CI pins black 23", "lint job red")
    assert AuditEvent.objects.filter(action="consequence.edited", object_id=str(chain.pk)).exists()


@pytest.mark.parametrize(
    "body,field",
    [
        ({}, "tendency"),
        ({"outcome": "meh"}, "outcome"),
        ({"outcome": 1}, "outcome"),
        ({"tendency": 3}, "tendency"),
        ({"action": "   "}, "action"),
        ({"tendency": "x" * 201}, "tendency"),
        ({"tendency": "ok", "confidence": 0.2}, "confidence"),
    ],
)
def test_a_bad_correction_is_a_400_naming_the_field_and_writes_nothing(client, chain, body, field):
    before = Consequence.objects.values().get(pk=chain.pk)

    response = client.patch(f"{API}/subjects/alice/consequences/{chain.pk}", body, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["field"] == field
    assert Consequence.objects.values().get(pk=chain.pk) == before


@pytest.mark.parametrize(
    "query,field",
    [("outcome=meh", "outcome"), ("limit=0", "limit"), ("limit=abc", "limit"), ("colour=red", "colour")],
)
def test_a_bad_list_filter_is_a_400_naming_it(client, chain, query, field):
    response = client.get(f"{API}/subjects/alice/consequences?{query}")

    assert response.status_code == 400
    assert response.json()["error"]["field"] == field


def test_the_list_filters_by_outcome_and_conversation(client, chain, conversation_id):
    assert len(client.get(f"{API}/subjects/alice/consequences?outcome=failure").json()["consequences"]) == 1
    assert client.get(f"{API}/subjects/alice/consequences?outcome=success").json() == {"consequences": []}
    assert client.get(f"{API}/subjects/alice/consequences?conversation={conversation_id + 1000}").json() == {
        "consequences": []
    }


def test_deleting_a_chain_over_rest(client, chain):
    assert client.delete(f"{API}/subjects/alice/consequences/{chain.pk}").status_code == 204
    assert not Consequence.objects.exists()
    assert client.get(f"{API}/subjects/alice/consequences/{chain.pk}").status_code == 404


def test_another_app_sees_neither_the_state_nor_the_chains(other_client, client, chain, conversation_id):
    assert other_client.get(f"{API}/conversations/{conversation_id}/state").status_code == 404
    assert other_client.get(f"{API}/subjects/alice/consequences/{chain.pk}").status_code == 404
    response = other_client.patch(
        f"{API}/subjects/alice/consequences/{chain.pk}", {"tendency": "stolen"}, format="json"
    )
    assert response.status_code == 404
    chain.refresh_from_db()
    assert chain.tendency != "stolen"
