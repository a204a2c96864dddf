"""Beliefs over REST: facts and notes as beliefs with evidence, versions and revisions, and the
person's own revision (memory/api/beliefs.py; docs/layers.md)."""

import pytest

from memory.models import AuditEvent, BeliefRevision, Note, NoteLink, ProfileFact, RevisionAction
from memory.services import fact_set, note_store
from memory.services.beliefs import revision_apply
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.evidence import evidence_record
from tests.factories import SubjectFactory

API = "/api/v1/subjects/alice"


@pytest.fixture
def beliefs(subject, actor, config):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)
    message, _ = message_add(conversation=conversation, role="user", text="I live in Lisbon", actor=actor)
    unit = evidence_record(message=message, category="", actor=actor, config=config)
    fact, _ = fact_set(subject=subject, key="city", value="Lisbon", source_message=message, actor=actor)
    note, _ = note_store(
        subject=subject, content="Alice walks her dog by the river", actor=actor, config=config
    )
    old, _ = note_store(subject=subject, content="Alice used to play the cello", actor=actor, config=config)
    Note.objects.filter(pk=old.pk).update(confidence=0.4)
    return {"fact": fact, "note": note, "old": old, "unit": unit, "message": message}


def _revise(client, ref, body):
    return client.post(f"{API}/beliefs/{ref}/revise", body, format="json")


def test_the_list_gives_facts_and_notes_as_beliefs_with_their_evidence(client, beliefs):
    response = client.get(f"{API}/beliefs")

    assert response.status_code == 200
    by_id = {b["id"]: b for b in response.json()["beliefs"]}
    fact = by_id[f"f:{beliefs['fact'].pk}"]
    assert fact["kind"] == "fact" and fact["layer"] == "belief" and fact["active"] is True
    assert (fact["key"], fact["value"], fact["text"]) == ("city", "Lisbon", "city: Lisbon")
    assert fact["evidence"] == [beliefs["unit"].pk] and fact["confidence"] == 1.0
    old = by_id[f"n:{beliefs['old'].pk}"]
    assert old["kind"] == "note" and old["confidence"] == 0.4 and old["key"] is None and old["evidence"] == []


def test_the_list_filters_by_kind_and_words_and_hides_inactive_unless_asked(client, beliefs, actor, config):
    assert {b["kind"] for b in client.get(f"{API}/beliefs?kind=note").json()["beliefs"]} == {"note"}
    found = client.get(f"{API}/beliefs?q=cello").json()["beliefs"]
    assert [b["id"] for b in found] == [f"n:{beliefs['old'].pk}"]
    revision_apply(
        subject=beliefs["old"].subject,
        belief=beliefs["old"],
        action=RevisionAction.ARCHIVE,
        reason="no longer plays",
        decided_by="person",
        actor=actor,
        config=config,
    )

    assert client.get(f"{API}/beliefs?q=cello").json()["beliefs"] == []
    archived = client.get(f"{API}/beliefs?q=cello&archived=true").json()["beliefs"]
    assert [(b["id"], b["active"]) for b in archived] == [(f"n:{beliefs['old'].pk}", False)]


def test_revising_a_fact_writes_a_version_with_the_reason_and_the_detail_shows_the_history(client, beliefs):
    ref = f"f:{beliefs['fact'].pk}"

    response = _revise(client, ref, {"action": "SUPERSEDE", "reason": "moved last month", "value": "Porto"})

    assert response.status_code == 201, response.content
    body = response.json()
    revision = body["revision"]
    assert (revision["action"], revision["decided_by"], revision["reason"]) == (
        "SUPERSEDE",
        "person",
        "moved last month",
    )
    assert revision["belief"] == ref and [b["value"] for b in body["beliefs"]] == ["Porto"]
    new_ref = body["beliefs"][0]["id"]
    assert revision["results"] == [new_ref]
    assert ProfileFact.objects.get(pk=beliefs["fact"].pk).confidence == 0.0  # it was wrong
    assert AuditEvent.objects.filter(action="belief.revised", object_id=str(beliefs["fact"].pk)).exists()

    detail = client.get(f"{API}/beliefs/{new_ref}").json()
    assert [(v["text"], v["active"]) for v in detail["versions"]] == [("Lisbon", False), ("Porto", True)]
    assert detail["versions"][0]["revision"] is None
    assert detail["versions"][1]["revision"]["reason"] == "moved last month"
    assert [r["action"] for r in detail["revisions"]] == ["SUPERSEDE"]
    listed = client.get(f"{API}/revisions?belief={new_ref}").json()["revisions"]
    assert [r["id"] for r in listed] == [revision["id"]]


def test_a_split_by_mode_from_the_person_keeps_both_values(client, beliefs):
    ref = f"f:{beliefs['fact'].pk}"

    response = _revise(
        client,
        ref,
        {
            "action": "SPLIT_BY_MODE",
            "reason": "in coding it's the office",
            "value": "Braga",
            "mode": "coding_debug",
        },
    )

    assert response.status_code == 201, response.content
    active = ProfileFact.objects.filter(subject=beliefs["fact"].subject, key="city", valid_to=None)
    assert {(f.value, f.mode) for f in active} == {("Lisbon", ""), ("Braga", "coding_debug")}


def test_a_note_superseded_by_a_newer_one_is_archived_and_linked(client, beliefs):
    newer = beliefs["note"]
    ref = f"n:{beliefs['old'].pk}"

    response = _revise(client, ref, {"action": "SUPERSEDE", "reason": "a newer note", "note": newer.pk})

    assert response.status_code == 201, response.content
    assert Note.objects.get(pk=beliefs["old"].pk).archived_at is not None
    assert NoteLink.objects.filter(src=newer, dst=beliefs["old"], kind="contradicts").exists()


@pytest.mark.parametrize(
    "body,field",
    [
        ({"reason": "no action"}, "action"),
        ({"action": "MAYBE", "reason": "x"}, "action"),
        ({"action": "REINFORCE"}, "reason"),
        ({"action": "REINFORCE", "reason": "   "}, "reason"),
        ({"action": "REINFORCE", "reason": 12}, "reason"),
        ({"action": "SUPERSEDE", "reason": "x", "value": 3}, "value"),
        ({"action": "SUPERSEDE", "reason": "x"}, "value"),
        ({"action": "SPLIT_BY_MODE", "reason": "x", "value": "Braga"}, "mode"),
        ({"action": "SPLIT_BY_MODE", "reason": "x", "value": "Braga", "mode": "no_such_mode"}, "mode"),
        ({"action": "MARK_EXCEPTION", "reason": "x"}, "text"),
        ({"action": "SUPERSEDE", "reason": "x", "value": "Porto", "note": 1}, "note"),
        ({"action": "REINFORCE", "reason": "x", "decided_by": "llm"}, "decided_by"),
    ],
)
def test_a_bad_revision_is_a_400_naming_the_field_and_writes_nothing(client, beliefs, body, field):
    before = (BeliefRevision.objects.count(), ProfileFact.objects.count(), AuditEvent.objects.count())

    response = _revise(client, f"f:{beliefs['fact'].pk}", body)

    assert response.status_code == 400, response.content
    assert response.json()["error"]["field"] == field
    assert (BeliefRevision.objects.count(), ProfileFact.objects.count(), AuditEvent.objects.count()) == before
    assert ProfileFact.objects.get(pk=beliefs["fact"].pk).confidence == 1.0


def test_a_note_revision_refuses_fact_fields_and_a_foreign_note(client, beliefs, app, actor, config):
    stranger = SubjectFactory(app=app, external_id="bob")
    foreign, _ = note_store(subject=stranger, content="Bob's note", actor=actor, config=config)
    ref = f"n:{beliefs['old'].pk}"

    assert (
        _revise(client, ref, {"action": "SUPERSEDE", "reason": "x", "value": "y"}).json()["error"]["field"]
        == "value"
    )
    response = _revise(client, ref, {"action": "SUPERSEDE", "reason": "x", "note": foreign.pk})
    assert response.status_code == 400 and response.json()["error"]["field"] == "note"
    assert Note.objects.get(pk=beliefs["old"].pk).archived_at is None


@pytest.mark.parametrize("ref", ["12", "x:1", "f:", "f:1a", "n:-3"])
def test_a_malformed_belief_id_names_no_belief(client, beliefs, ref):
    response = client.get(f"{API}/beliefs/{ref}")

    assert response.status_code == 404
    assert response.json()["error"]["field"] == "belief_id"


def test_another_subjects_belief_is_a_404(client, beliefs, app, actor):
    other = SubjectFactory(app=app, external_id="bob")
    fact, _ = fact_set(subject=other, key="city", value="Oslo", actor=actor)

    assert client.get(f"{API}/beliefs/f:{fact.pk}").status_code == 404
    response = _revise(client, f"f:{fact.pk}", {"action": "ARCHIVE", "reason": "not hers"})
    assert response.status_code == 404
    assert ProfileFact.objects.get(pk=fact.pk).valid_to is None


def test_revisions_filter_by_action_and_refuse_a_bad_filter(client, beliefs):
    _revise(client, f"f:{beliefs['fact'].pk}", {"action": "REINFORCE", "reason": "again"})
    _revise(client, f"n:{beliefs['note'].pk}", {"action": "WEAKEN", "reason": "not sure"})

    weakened = client.get(f"{API}/revisions?action=WEAKEN").json()["revisions"]
    assert [(r["action"], r["belief"]) for r in weakened] == [("WEAKEN", f"n:{beliefs['note'].pk}")]
    assert len(client.get(f"{API}/revisions").json()["revisions"]) == 2
    assert client.get(f"{API}/revisions?action=NOPE").json()["error"]["field"] == "action"
    assert client.get(f"{API}/revisions?belief=f12").json()["error"]["field"] == "belief"
    assert client.get(f"{API}/revisions?limit=1.5").json()["error"]["field"] == "limit"
