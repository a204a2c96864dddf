"""Each memory.* tool run through POST /api/v1/tools/call: its effect on the rows, and that
where it runs (subject, scope, working_dir) comes from the conversation."""

import json

import pytest

from memory.models import AuditEvent, Lesson, Note, PendingMemory, PendingStatus, Procedure, ProfileFact
from memory.services import fact_set, note_store
from memory.services.consent import consent_policy_set, pending_approve
from memory.services.documents import document_write
from tests.factories import ConversationFactory, SubjectFactory

pytestmark = pytest.mark.django_db


def output(answer):
    assert answer["ok"] is True, answer
    return answer["output"]


# --- profile ----------------------------------------------------------------------------------
def test_profile_set_stores_a_subject_wide_fact_of_the_conversations_subject(call, subject, conversation):
    answer = call("memory_profile_set", {"key": "timezone", "value": "Europe/Lisbon"})

    result = output(answer)
    fact = ProfileFact.objects.get(subject=subject, key="timezone", valid_to=None)
    assert (fact.value, fact.scope, fact.pinned, fact.origin) == ("Europe/Lisbon", "", True, "api")
    assert result["id"] == fact.pk and result["status"] == "stored" and result["changed"] is True
    assert answer["tool"] == "memory.profile.set"
    assert json.loads(answer["result"]["content"]) == result
    assert AuditEvent.objects.filter(action="fact.set", object_id=str(fact.pk)).exists()


def test_profile_set_twice_with_a_new_value_supersedes_the_old_one(call, subject):
    first = output(call("memory_profile_set", {"key": "city", "value": "Porto"}))
    second = output(call("memory_profile_set", {"key": "city", "value": "Lisbon"}))

    rows = list(ProfileFact.objects.filter(subject=subject, key="city").order_by("id"))
    assert [r.value for r in rows] == ["Porto", "Lisbon"]
    assert rows[0].valid_to is not None and rows[0].superseded_by_id == second["id"] != first["id"]


def test_profile_set_project_only_takes_the_conversations_scope(call, subject):
    output(call("memory.profile.set", {"key": "editor", "value": "vim", "project_only": True}))

    assert ProfileFact.objects.get(subject=subject, key="editor").scope == "billing-api"


def test_profile_set_project_only_in_a_conversation_without_a_project_is_refused(call, subject):
    plain = ConversationFactory(subject=subject)

    answer = call(
        "memory_profile_set",
        {"key": "editor", "value": "vim", "project_only": True},
        conversation_id=plain.pk,
    )

    assert answer["ok"] is False and answer["error"]["field"] == "project_only"
    assert not ProfileFact.objects.filter(subject=subject).exists()


def test_profile_set_has_no_argument_for_the_scope_or_the_subject(call, subject):
    for extra in ("scope", "subject", "working_dir"):
        answer = call("memory_profile_set", {"key": "k", "value": "v", extra: "elsewhere"})
        assert answer["ok"] is False
        assert answer["error"] == {
            "code": "invalid",
            "field": extra,
            "message": answer["error"]["message"],
        }
    assert not ProfileFact.objects.exists()


def test_profile_list_shows_the_facts_this_conversation_can_see(call, subject, actor):
    fact_set(subject=subject, key="name", value="Alice", actor=actor)
    fact_set(subject=subject, key="editor", value="vim", scope="billing-api", actor=actor)
    fact_set(subject=subject, key="editor", value="emacs", scope="other-project", actor=actor)

    facts = output(call("memory_profile_list"))["facts"]

    assert sorted((f["key"], f["value"], f["scope"]) for f in facts) == [
        ("editor", "vim", "billing-api"),
        ("name", "Alice", ""),
    ]


def test_profile_remove_closes_the_fact_and_keeps_its_history(call, subject, actor):
    fact, _ = fact_set(subject=subject, key="city", value="Porto", actor=actor)

    result = output(call("memory_profile_remove", {"key": "city"}))

    fact.refresh_from_db()
    assert result["id"] == fact.pk and result["active"] is False and fact.valid_to is not None
    again = call("memory_profile_remove", {"key": "city"})
    assert again["ok"] is False and again["error"]["code"] == "not_found" and again["error"]["field"] == "key"
    assert again["result"]["role"] == "tool" and "not_found" in again["result"]["content"]


def test_profile_history_lists_every_version_oldest_first(call, subject, actor):
    fact_set(subject=subject, key="city", value="Porto", actor=actor)
    fact_set(subject=subject, key="city", value="Lisbon", actor=actor)
    fact_set(subject=subject, key="city", value="Madrid", scope="other-project", actor=actor)

    result = output(call("memory_profile_history", {"key": "city"}))

    assert result["key"] == "city"
    assert [(v["value"], v["active"]) for v in result["versions"]] == [("Porto", False), ("Lisbon", True)]
    missing = call("memory_profile_history", {"key": "shoe_size"})
    assert missing["ok"] is False and missing["error"]["field"] == "key"


# --- consent ----------------------------------------------------------------------------------
def test_a_sensitive_fact_under_ask_waits_for_the_person_and_is_not_stored(call, subject):
    result = output(
        call("memory_profile_set", {"key": "medication", "value": "insulin", "category": "health"})
    )

    pending = PendingMemory.objects.get(subject=subject)
    assert result["status"] == "pending" and result["pending"]["id"] == pending.pk
    assert (pending.kind, pending.category.slug, pending.status) == ("fact", "health", PendingStatus.PENDING)
    assert pending.payload["key"] == "medication" and pending.payload["value"] == "insulin"
    assert not ProfileFact.objects.filter(subject=subject).exists()


def test_a_sensitive_note_under_ask_is_pending_and_keeps_the_conversations_project_on_approval(
    call, subject, conversation, actor, config
):
    result = output(
        call("memory_notes_store", {"content": "Alice sees a cardiologist on Fridays", "category": "health"})
    )

    assert result["status"] == "pending" and not Note.objects.filter(subject=subject).exists()
    pending = PendingMemory.objects.get(pk=result["pending"]["id"])
    note = pending_approve(pending=pending, actor=actor, config=config)
    assert (note.scope, note.working_dir, note.conversation_id) == (
        "billing-api",
        "/src/billing",
        conversation.pk,
    )
    assert note.category == "health"


def test_a_sensitive_note_in_an_allowed_category_is_stored_with_its_category(call, subject, actor):
    consent_policy_set(subject=subject, category="health", policy="allow", actor=actor)

    result = output(call("memory_notes_store", {"content": "Alice runs 5k on Sundays", "category": "health"}))

    note = Note.objects.get(subject=subject)
    assert result["status"] == "stored" and result["id"] == note.pk and result["merged"] is False
    assert (note.category, note.scope, note.working_dir) == ("health", "billing-api", "/src/billing")
    assert not PendingMemory.objects.exists()


def test_a_sensitive_memory_in_a_denied_category_is_dropped(call, subject, actor):
    consent_policy_set(subject=subject, category="religion", policy="deny", actor=actor)

    result = output(call("memory_notes_store", {"content": "Alice fasts in Ramadan", "category": "religion"}))

    assert result["status"] == "denied"
    assert not Note.objects.exists() and not PendingMemory.objects.exists()


def test_a_sensitive_note_without_a_declared_category_is_classified_and_waits_for_consent(call, subject):
    # the model stored it without naming health: the consent classifier reads the content
    result = output(call("memory_notes_store", {"content": "Alice was diagnosed with type 2 diabetes"}))

    assert result["status"] == "pending" and result["category"] == "health"
    assert not Note.objects.filter(subject=subject).exists()
    assert PendingMemory.objects.get(subject=subject).category.slug == "health"


def test_a_sensitive_fact_without_a_declared_category_is_classified_and_waits_for_consent(call, subject):
    result = output(call("memory_profile_set", {"key": "medication", "value": "insulin twice a day"}))

    assert result["status"] == "pending" and result["category"] == "health"
    assert not ProfileFact.objects.filter(subject=subject).exists()


def test_an_ordinary_note_without_a_category_is_stored_with_none(call, subject):
    result = output(call("memory_notes_store", {"content": "Alice prefers tabs over spaces in Go code"}))

    assert result["status"] == "stored"
    assert Note.objects.get(subject=subject).category == ""


def test_an_unknown_category_is_refused_naming_the_field(call):
    answer = call("memory_notes_store", {"content": "something", "category": "astrology"})

    assert answer["ok"] is False and answer["error"]["field"] == "category"
    assert not Note.objects.exists() and not PendingMemory.objects.exists()


def test_a_secret_in_a_pending_note_is_redacted_before_it_is_queued(call, subject):
    output(
        call(
            "memory_notes_store",
            {"content": "Alice's bank password is hunter2-Xq93!pLm, she said", "category": "credentials"},
        )
    )

    assert "hunter2-Xq93!pLm" not in json.dumps(PendingMemory.objects.get(subject=subject).payload)


# --- notes ------------------------------------------------------------------------------------
def test_notes_store_gives_the_note_the_conversation_and_its_scope(call, subject, conversation):
    result = output(
        call(
            "memory_notes_store",
            {
                "content": "Webhook retries back off exponentially",
                "tags": ["Webhooks"],
                "occurred_at": "2026-05-01T10:00:00Z",
            },
        )
    )

    note = Note.objects.get(subject=subject)
    assert (note.conversation_id, note.scope, note.working_dir) == (
        conversation.pk,
        "billing-api",
        "/src/billing",
    )
    assert note.tags == ["webhooks"] and note.occurred_at.isoformat().startswith("2026-05-01T10:00")
    assert result["id"] == note.pk and result["merged"] is False and result["scope"] == "billing-api"
    again = output(call("memory_notes_store", {"content": "Webhook retries back off exponentially"}))
    assert again["id"] == note.pk and again["merged"] is True and Note.objects.count() == 1


def test_notes_store_refuses_a_malformed_date_naming_it(call):
    answer = call("memory_notes_store", {"content": "x happened", "occurred_at": "last tuesday"})

    assert answer["ok"] is False and answer["error"]["field"] == "occurred_at" and not Note.objects.exists()


def test_notes_recall_reaches_unscoped_notes_and_this_project_only(call, subject, actor, config):
    here = ConversationFactory(subject=subject, scope="billing-api")
    elsewhere = ConversationFactory(subject=subject, scope="website")
    own = note_store(
        subject=subject, content="Invoices retry three times", conversation=here, actor=actor, config=config
    )[0]
    general = note_store(
        subject=subject, content="Alice prefers invoices in euros", actor=actor, config=config
    )[0]
    note_store(
        subject=subject,
        content="Website invoices page is slow",
        conversation=elsewhere,
        actor=actor,
        config=config,
    )

    notes = output(call("memory_notes_recall", {"query": "invoices"}))["notes"]

    assert sorted(n["id"] for n in notes) == sorted([own.pk, general.pk])
    assert all(isinstance(n["score"], float) for n in notes)
    own.refresh_from_db()
    assert own.recall_count == 1


def test_notes_recall_filters_by_tags(call, subject, actor, config, conversation):
    tagged = note_store(
        subject=subject, content="Deploy on Tuesdays", tags=["ops"], actor=actor, config=config
    )[0]
    note_store(subject=subject, content="Deploy notes are in the wiki", actor=actor, config=config)

    notes = output(call("memory_notes_recall", {"query": "deploy", "tags": ["ops"], "k": 5}))["notes"]

    assert [n["id"] for n in notes] == [tagged.pk]


def test_notes_forget_deletes_a_note_this_conversation_can_see(call, subject, actor, config):
    note = note_store(subject=subject, content="Alice's old phone is a Nokia", actor=actor, config=config)[0]

    result = output(call("memory_notes_forget", {"id": note.pk}))

    assert result == {"id": note.pk, "forgotten": True} and not Note.objects.filter(pk=note.pk).exists()


def test_notes_forget_of_another_projects_or_subjects_note_looks_missing(call, subject, app, actor, config):
    elsewhere = ConversationFactory(subject=subject, scope="website")
    theirs = note_store(
        subject=subject, content="Website uses Hugo", conversation=elsewhere, actor=actor, config=config
    )[0]
    bob = SubjectFactory(app=app, external_id="bob")
    bobs = note_store(subject=bob, content="Bob likes tea", actor=actor, config=config)[0]

    for note in (theirs, bobs):
        answer = call("memory_notes_forget", {"id": note.pk})
        assert (
            answer["ok"] is False
            and answer["error"]["code"] == "not_found"
            and answer["error"]["field"] == "id"
        )
    assert Note.objects.filter(pk__in=[theirs.pk, bobs.pk]).count() == 2


def test_notes_forget_refuses_an_id_that_is_not_an_integer(call):
    answer = call("memory_notes_forget", {"id": "12"})

    assert answer["ok"] is False and answer["error"]["field"] == "id"


# --- lessons, procedures ----------------------------------------------------------------------
def test_lessons_recall_finds_the_subjects_lessons_and_counts_the_recall(call, subject, app):
    lesson = Lesson.objects.create(subject=subject, text="Alice wants short answers with code first.")
    Lesson.objects.create(subject=SubjectFactory(app=app), text="Short answers with code first.")

    result = output(call("memory_lessons_recall", {"query": "short answers"}))

    assert [item["id"] for item in result["lessons"]] == [lesson.pk]
    assert result["lessons"][0]["text"] == lesson.text
    lesson.refresh_from_db()
    assert lesson.recall_count == 1


def test_procedures_recall_finds_the_subjects_procedures(call, subject):
    procedure = Procedure.objects.create(
        subject=subject, title="Release the billing service", steps=["tag the release", "deploy to staging"]
    )

    result = output(call("memory.procedures.recall", {"query": "release billing"}))

    assert [item["id"] for item in result["procedures"]] == [procedure.pk]
    assert result["procedures"][0]["steps"] == ["tag the release", "deploy to staging"]


# --- memory:// --------------------------------------------------------------------------------
def test_memory_read_returns_a_subject_wide_document_and_the_projects_own(call, subject, actor):
    document_write(subject=subject, path="MEMORY.md", content="# Memory\n- Alice likes tea.", actor=actor)
    document_write(
        subject=subject,
        path="MEMORY.md",
        content="# Billing\n- Retries back off.",
        scope="billing-api",
        actor=actor,
    )

    root = output(call("memory_read", {"url": "memory://root/MEMORY.md"}))
    project = output(call("memory_read", {"url": "memory://scope/billing-api/MEMORY.md"}))

    assert root["content"].endswith("Alice likes tea.") and root["url"] == "memory://root/MEMORY.md"
    assert project["content"].endswith("Retries back off.") and project["scope"] == "billing-api"


def test_memory_read_of_another_projects_document_or_a_bad_address_looks_missing(call, subject, actor):
    document_write(
        subject=subject, path="MEMORY.md", content="# Website\n- Hugo.", scope="website", actor=actor
    )

    for url in ("memory://scope/website/MEMORY.md", "memory://root/nothing.md", "memory://root/MEMORY.md"):
        answer = call("memory_read", {"url": url})
        assert answer["ok"] is False and answer["error"]["code"] == "not_found", url
    bad = call("memory_read", {"url": "https://example.com"})
    assert bad["ok"] is False and bad["error"]["field"] == "url"
