"""Consent over the REST sidecar: categories, policies, the pending queue, subject export and
delete, flush, and the whole flow from a sensitive message to an approved memory."""

import pytest

from chat.models import ReflectionRun
from memory.models import (
    AuditEvent,
    ConsentCategory,
    Conversation,
    Evidence,
    Message,
    Note,
    NoteVersion,
    PendingMemory,
    ProfileFact,
    Subject,
    SubjectConsent,
)
from memory.services import fact_set, note_edit, note_store
from memory.services.consent import consent_policy, consent_policy_set, memory_candidate_route
from memory.services.conversations import conversation_get_or_create, message_add
from tests.factories import SubjectFactory

API = "/api/v1"
FACT = {"key": "condition", "value": "type 2 diabetes", "pinned": True, "keywords": []}
NOTE = {"content": "Alice started insulin in March", "tags": ["health"]}
DIAGNOSIS = "I was diagnosed with type 2 diabetes last year"


def post(api_client, path, body=None):
    return api_client.post(API + path, body, format="json")


def error_of(response) -> tuple[int, str | None]:
    return response.status_code, response.json()["error"]["field"]


@pytest.fixture
def source(subject, actor):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    message, _ = message_add(conversation=conversation, role="user", text=DIAGNOSIS, actor=actor)
    return message


def queue(subject, actor, config, *, kind="fact", payload=FACT, category="health", source_message=None):
    return memory_candidate_route(
        subject=subject,
        kind=kind,
        payload=payload,
        category=category,
        source_message=source_message,
        actor=actor,
        config=config,
    )


@pytest.fixture
def pending(subject, actor, config, source):
    return queue(subject, actor, config, source_message=source).obj


# --- categories and policies ------------------------------------------------------------------
def test_the_categories_are_listed_with_their_default(client):
    response = client.get(f"{API}/consent/categories")

    assert response.status_code == 200
    categories = response.json()["categories"]
    assert {c["slug"] for c in categories} == set(ConsentCategory.objects.values_list("slug", flat=True))
    assert {c["default_policy"] for c in categories} == {"ask"}
    assert all(c["name"] and c["description"] for c in categories)


def test_every_seeded_category_starts_at_ask(client, subject):
    response = client.get(f"{API}/subjects/alice/consent")

    assert response.status_code == 200
    policies = response.json()["policies"]
    assert [p["category"] for p in policies] == list(ConsentCategory.objects.values_list("slug", flat=True))
    assert {(p["policy"], p["is_default"]) for p in policies} == {("ask", True)}
    assert not SubjectConsent.objects.exists()


@pytest.mark.parametrize("policy", ["allow", "deny"])
def test_setting_a_policy_writes_the_row_and_changes_the_effective_policy(client, subject, policy):
    response = post(client, "/subjects/alice/consent", {"category": "health", "policy": policy})

    assert response.status_code == 200
    health = next(p for p in response.json()["policies"] if p["category"] == "health")
    assert (health["policy"], health["is_default"]) == (policy, False)
    row = SubjectConsent.objects.get(subject=subject)
    assert (row.category.slug, row.policy) == ("health", policy)
    assert consent_policy(subject=subject, category="health") == policy
    assert consent_policy(subject=subject, category="politics") == "ask"
    assert AuditEvent.objects.filter(action="consent.policy_set", object_id="health").count() == 1


def test_setting_a_policy_again_replaces_it(client, subject):
    post(client, "/subjects/alice/consent", {"category": "health", "policy": "deny"})

    post(client, "/subjects/alice/consent", {"category": "health", "policy": "allow"})

    assert list(SubjectConsent.objects.values_list("policy", flat=True)) == ["allow"]


def test_a_policy_for_a_new_subject_creates_the_subject(client, app):
    response = post(client, "/subjects/bob/consent", {"category": "politics", "policy": "deny"})

    assert response.status_code == 200
    assert SubjectConsent.objects.get().subject == Subject.objects.get(app=app, external_id="bob")


def test_an_unknown_category_is_400_naming_the_field(client, subject):
    response = post(client, "/subjects/alice/consent", {"category": "astrology", "policy": "deny"})

    assert error_of(response) == (400, "category")
    assert "astrology" in response.json()["error"]["message"]
    assert not SubjectConsent.objects.exists()


def test_an_unknown_policy_is_400_naming_the_field(client, subject):
    response = post(client, "/subjects/alice/consent", {"category": "health", "policy": "sometimes"})

    assert error_of(response) == (400, "policy")
    assert not SubjectConsent.objects.exists()


def test_a_missing_policy_is_400_naming_the_field(client, subject):
    response = post(client, "/subjects/alice/consent", {"category": "health"})

    assert error_of(response) == (400, "policy")


def test_the_policies_of_an_unknown_subject_are_404(client, subject):
    response = client.get(f"{API}/subjects/nobody/consent")

    assert response.status_code == 404


# --- the pending queue ------------------------------------------------------------------------
def test_the_pending_list_shows_the_candidate_and_the_message_it_came_from(client, pending, source):
    response = client.get(f"{API}/subjects/alice/pending")

    assert response.status_code == 200
    [item] = response.json()["pending"]
    assert (item["id"], item["kind"], item["category"], item["status"]) == (
        pending.pk,
        "fact",
        "health",
        "pending",
    )
    assert item["payload"]["value"] == "type 2 diabetes"
    assert (item["source_message"], item["source_text"]) == (source.pk, DIAGNOSIS)
    assert item["result_id"] is None and item["decided_at"] is None


def test_the_pending_list_filters_by_status(client, subject, actor, config, pending):
    queue(subject, actor, config, kind="note", payload=NOTE)
    post(client, f"/subjects/alice/pending/{pending.pk}/reject")

    waiting = client.get(f"{API}/subjects/alice/pending").json()["pending"]
    rejected = client.get(f"{API}/subjects/alice/pending", {"status": "rejected"}).json()["pending"]

    assert [p["kind"] for p in waiting] == ["note"]
    assert [p["id"] for p in rejected] == [pending.pk]


def test_an_unknown_pending_status_is_400_naming_the_field(client, pending):
    response = client.get(f"{API}/subjects/alice/pending", {"status": "maybe"})

    assert error_of(response) == (400, "status")


@pytest.mark.parametrize(
    "kind,payload,model,field,value",
    [
        ("fact", FACT, ProfileFact, "value", "type 2 diabetes"),
        ("note", NOTE, Note, "content", "Alice started insulin in March"),
    ],
)
def test_approving_stores_the_memory_with_its_category(
    client, subject, actor, config, source, kind, payload, model, field, value
):
    item = queue(subject, actor, config, kind=kind, payload=payload, source_message=source).obj
    assert not model.objects.exists()

    response = post(client, f"/subjects/alice/pending/{item.pk}/approve")

    assert response.status_code == 200
    stored = model.objects.get(subject=subject)
    assert (getattr(stored, field), stored.category, stored.source_message_id) == (value, "health", source.pk)
    item.refresh_from_db()
    assert (item.status, item.result_id) == ("approved", stored.pk)
    assert item.decided_at is not None and item.decided_by
    body = response.json()
    assert (body["status"], body["result_id"]) == ("approved", stored.pk)
    assert AuditEvent.objects.filter(action="pending.approved", object_id=str(item.pk)).count() == 1


def test_approving_twice_is_400_naming_the_field_and_stores_once(client, subject, pending):
    post(client, f"/subjects/alice/pending/{pending.pk}/approve")

    response = post(client, f"/subjects/alice/pending/{pending.pk}/approve")

    assert error_of(response) == (400, "status")
    assert "approved" in response.json()["error"]["message"]
    assert ProfileFact.objects.filter(subject=subject).count() == 1
    assert AuditEvent.objects.filter(action="pending.approved").count() == 1


def test_a_rejected_item_cannot_be_approved_afterwards(client, pending):
    post(client, f"/subjects/alice/pending/{pending.pk}/reject")

    response = post(client, f"/subjects/alice/pending/{pending.pk}/approve")

    assert error_of(response) == (400, "status")
    assert not ProfileFact.objects.exists()
    assert PendingMemory.objects.get().status == "rejected"


def test_rejecting_stores_nothing_and_the_same_content_is_not_asked_again(
    client, subject, actor, config, pending
):
    response = post(client, f"/subjects/alice/pending/{pending.pk}/reject")

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["result_id"]) == ("rejected", None)
    pending.refresh_from_db()
    assert pending.status == "rejected" and pending.decided_at is not None
    assert not ProfileFact.objects.exists() and not Note.objects.exists()
    # the same fact, spelled a little differently, comes out of a later reflection
    again = queue(subject, actor, config, payload={**FACT, "value": "Type 2  Diabetes"})
    assert (again.action, again.obj.pk) == ("rejected_before", pending.pk)
    assert PendingMemory.objects.count() == 1 and not ProfileFact.objects.exists()


def test_a_pending_item_of_another_subject_of_the_same_app_is_404(client, app, pending):
    SubjectFactory(app=app, external_id="bob")

    listed = client.get(f"{API}/subjects/bob/pending")
    approved = post(client, f"/subjects/bob/pending/{pending.pk}/approve")
    rejected = post(client, f"/subjects/bob/pending/{pending.pk}/reject")

    assert listed.status_code == 200 and listed.json()["pending"] == []
    assert error_of(approved) == (404, "id") and error_of(rejected) == (404, "id")
    assert PendingMemory.objects.get().status == "pending"
    assert not ProfileFact.objects.exists()


def test_a_pending_item_of_another_app_is_404(other_client, other_app, pending):
    SubjectFactory(app=other_app, external_id="alice")

    listed = other_client.get(f"{API}/subjects/alice/pending")
    approved = post(other_client, f"/subjects/alice/pending/{pending.pk}/approve")

    assert listed.json()["pending"] == []
    assert approved.status_code == 404
    assert "diabetes" not in approved.content.decode()
    assert PendingMemory.objects.get().status == "pending"


def test_an_unknown_pending_item_is_404(client, pending):
    response = post(client, f"/subjects/alice/pending/{pending.pk + 100}/approve")

    assert error_of(response) == (404, "id")


# --- export and delete ------------------------------------------------------------------------
@pytest.fixture
def memories(subject, actor, config, source):
    """Alice with a fact history, a categorised fact, a note with two versions, a health note,
    a policy and a pending item."""
    fact_set(subject=subject, key="city", value="Lyon", actor=actor)
    fact_set(subject=subject, key="city", value="Porto", actor=actor)
    fact_set(subject=subject, key="condition", value="type 2 diabetes", category="health", actor=actor)
    note, _ = note_store(subject=subject, content="Alice's cat is called Miso", actor=actor, config=config)
    note_edit(note=note, content="Alice's cat is called Miso and is 3", actor=actor, config=config)
    note_store(subject=subject, content="Alice votes green", category="politics", actor=actor, config=config)
    consent_policy_set(subject=subject, category="politics", policy="allow", actor=actor)
    queue(subject, actor, config, kind="note", payload=NOTE, source_message=source)
    return note


def test_the_export_holds_every_memory_with_its_category(client, memories, source):
    response = client.get(f"{API}/subjects/alice")

    assert response.status_code == 200
    export = response.json()
    assert export["subject"] == "alice"
    assert [(f["key"], f["value"], f["category"], f["valid_to"] is None) for f in export["facts"]] == [
        ("city", "Lyon", "", False),
        ("city", "Porto", "", True),
        ("condition", "type 2 diabetes", "health", True),
    ]
    assert [(n["content"], n["category"]) for n in export["notes"]] == [
        ("Alice's cat is called Miso and is 3", ""),
        ("Alice votes green", "politics"),
    ]
    assert [v["content"] for v in export["notes"][0]["versions"]] == [
        "Alice's cat is called Miso",
        "Alice's cat is called Miso and is 3",
    ]
    assert export["consent"] == {"politics": "allow"}
    assert [(p["kind"], p["category"], p["status"]) for p in export["pending"]] == [
        ("note", "health", "pending")
    ]
    [conversation] = export["conversations"]
    assert [(m["id"], m["text"]) for m in conversation["messages"]] == [(source.pk, DIAGNOSIS)]


def test_the_export_of_another_apps_subject_is_404(other_client, memories):
    response = other_client.get(f"{API}/subjects/alice")

    assert response.status_code == 404
    assert "Miso" not in response.content.decode()


def test_delete_removes_everything_about_the_subject_and_keeps_one_audit_record(
    client, app, other_app, actor, config, subject, memories
):
    bob = SubjectFactory(app=app, external_id="bob")
    fact_set(subject=bob, key="city", value="Oslo", actor=actor)
    theirs = SubjectFactory(app=other_app, external_id="alice")
    fact_set(subject=theirs, key="city", value="Rome", actor=actor)
    note_store(subject=theirs, content="Their alice likes jazz", actor=actor, config=config)
    subject_id = subject.pk

    response = client.delete(f"{API}/subjects/alice")

    assert response.status_code == 204
    assert not Subject.objects.filter(pk=subject_id).exists()
    assert not ProfileFact.objects.filter(subject_id=subject_id).exists()
    assert not Note.objects.filter(subject_id=subject_id).exists()
    assert not NoteVersion.objects.filter(note_id=memories.pk).exists()
    assert not Conversation.objects.filter(subject_id=subject_id).exists()
    assert not Message.objects.filter(text=DIAGNOSIS).exists()
    assert not PendingMemory.objects.exists() and not SubjectConsent.objects.exists()
    [deleted] = AuditEvent.objects.filter(action="subject.deleted")
    assert (deleted.app, deleted.object_id, deleted.data) == (app, str(subject_id), {"external_id": "alice"})
    # bob and the other app's alice are untouched
    assert list(ProfileFact.objects.order_by("value").values_list("value", flat=True)) == ["Oslo", "Rome"]
    assert list(Note.objects.values_list("content", flat=True)) == ["Their alice likes jazz"]
    assert client.get(f"{API}/subjects/alice").status_code == 404


def test_another_app_cannot_delete_the_subject(other_client, other_app, subject, memories):
    SubjectFactory(app=other_app, external_id="bob")

    response = other_client.delete(f"{API}/subjects/alice")

    assert response.status_code == 404
    assert Subject.objects.filter(pk=subject.pk).exists()
    assert ProfileFact.objects.filter(subject=subject).count() == 3
    assert not AuditEvent.objects.filter(action="subject.deleted").exists()


# --- no key -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "method,path",
    [
        ("get", "/consent/categories"),
        ("get", "/subjects/alice/consent"),
        ("post", "/subjects/alice/consent"),
        ("get", "/subjects/alice/pending"),
        ("post", "/subjects/alice/pending/1/approve"),
        ("post", "/subjects/alice/pending/1/reject"),
        ("get", "/subjects/alice"),
        ("delete", "/subjects/alice"),
        ("post", "/flush"),
    ],
)
def test_every_consent_endpoint_needs_a_key(anon_client, subject, method, path):
    response = getattr(anon_client, method)(
        API + path, {"category": "health", "policy": "allow"}, format="json"
    )

    assert response.status_code == 401
    assert Subject.objects.filter(pk=subject.pk).exists() and not SubjectConsent.objects.exists()


# --- from a message to an approved memory -----------------------------------------------------
def converse(client, django_capture_on_commit_callbacks, user_text, reply_text):
    """Post a user message and the reply; the reflection the reply queues runs on commit."""
    conversation = post(client, "/conversations", {"subject": "alice", "external_id": "c"}).json()
    post(client, f"/conversations/{conversation['id']}/messages", {"text": user_text})
    with django_capture_on_commit_callbacks(execute=True):
        post(client, f"/conversations/{conversation['id']}/responses", {"text": reply_text})
    return conversation


def holds(text: str) -> bool:
    return (
        ProfileFact.objects.filter(value__icontains=text).exists()
        or Note.objects.filter(content__icontains=text).exists()
        or Evidence.objects.filter(status="visible", text__icontains=text).exists()
    )


def test_a_sensitive_statement_waits_for_consent_until_approved(
    client, subject, eager_tasks, django_capture_on_commit_callbacks
):
    converse(
        client, django_capture_on_commit_callbacks, DIAGNOSIS + ".", "I'm sorry to hear that. How are you?"
    )

    run = ReflectionRun.objects.get()
    queued = client.get(f"{API}/subjects/alice/pending").json()["pending"]
    assert run.status == "done" and run.stats["pending"] + run.stats["evidence_pending"] == len(queued)
    assert sorted((p["kind"], p["category"]) for p in queued) == [
        ("evidence", "health"),  # the turn itself
        ("fact", "health"),
        ("note", "health"),
    ]
    assert all(p["source_text"] == DIAGNOSIS + "." for p in queued)
    assert not holds("diabetes")

    for item in queued:
        assert post(client, f"/subjects/alice/pending/{item['id']}/approve").status_code == 200

    assert holds("diabetes")
    stored = (
        list(ProfileFact.objects.filter(subject=subject, value__icontains="diabetes"))
        + list(Note.objects.filter(subject=subject, content__icontains="diabetes"))
        + list(Evidence.objects.filter(subject=subject, status="visible", text__icontains="diabetes"))
    )
    assert len(stored) == len(queued)
    assert {m.category for m in stored} == {"health"}
    assert not PendingMemory.objects.filter(status="pending").exists()


def test_a_denied_category_is_never_queued_nor_stored(
    client, subject, eager_tasks, django_capture_on_commit_callbacks
):
    post(client, "/subjects/alice/consent", {"category": "health", "policy": "deny"})

    converse(client, django_capture_on_commit_callbacks, DIAGNOSIS + ".", "I'm sorry to hear that.")

    assert ReflectionRun.objects.get().stats["denied"] >= 1
    assert not PendingMemory.objects.exists()
    assert not holds("diabetes")


def test_an_allowed_category_is_stored_with_its_category(
    client, subject, eager_tasks, django_capture_on_commit_callbacks
):
    post(client, "/subjects/alice/consent", {"category": "health", "policy": "allow"})

    converse(client, django_capture_on_commit_callbacks, DIAGNOSIS + ".", "I'm sorry to hear that.")

    assert not PendingMemory.objects.exists()
    fact = ProfileFact.objects.get(subject=subject, value__icontains="diabetes")
    assert (fact.category, fact.origin) == ("health", "reflection")


# --- flush ------------------------------------------------------------------------------------
def test_flush_after_an_eager_reflection_is_done_at_once(
    client, subject, eager_tasks, django_capture_on_commit_callbacks
):
    conversation = converse(
        client, django_capture_on_commit_callbacks, "Call me Sam. I work at Acme.", "Hi Sam!"
    )

    response = post(client, "/flush", {"subject": "alice", "conversation": conversation["id"]})

    assert response.status_code == 200
    body = response.json()
    assert (body["done"], body["pending"]) == (True, 0)
    assert body["waited_ms"] < 1000
    assert ReflectionRun.objects.get().status == "done"
    assert ProfileFact.objects.filter(subject=subject, origin="reflection").exists()


def test_flush_without_the_reflection_run_reports_it_pending(client, subject, actor):
    conversation = post(client, "/conversations", {"subject": "alice", "external_id": "c"}).json()
    post(client, f"/conversations/{conversation['id']}/responses", {"text": "Hi!"})  # never committed

    body = post(client, "/flush", {"subject": "alice", "timeout_ms": 0}).json()

    assert (body["done"], body["pending"]) == (False, 1)
    assert ReflectionRun.objects.get().status == "queued"


def test_flush_of_another_subjects_conversation_is_404(client, app, subject, actor):
    bob = SubjectFactory(app=app, external_id="bob")
    theirs, _ = conversation_get_or_create(subject=bob, external_id="c", actor=actor)

    response = post(client, "/flush", {"subject": "alice", "conversation": theirs.pk})

    assert response.status_code == 404


def test_flush_with_a_bad_timeout_is_400_naming_the_field(client, subject):
    response = post(client, "/flush", {"subject": "alice", "timeout_ms": -1})

    assert error_of(response) == (400, "timeout_ms")


def test_a_refused_policy_for_a_new_subject_leaves_no_subject_behind(client, app):
    response = post(client, "/subjects/bob/consent", {"category": "astrology", "policy": "deny"})

    assert error_of(response) == (400, "category")
    assert not Subject.objects.filter(app=app, external_id="bob").exists()
