"""Who may call the sidecar: API keys (missing, wrong, revoked), paused apps, and the tenant wall.

Every endpoint and method of memory/api/urls.py is in ENDPOINTS; a test checks the table
against the URLconf, so a new endpoint cannot skip these checks.
"""

from types import SimpleNamespace

import pytest
from rest_framework.test import APIClient

from chat.summaries.mental_models import mental_models_seed
from memory.models import (
    ApiKey,
    AuditEvent,
    BeliefRevision,
    Consequence,
    Conversation,
    Evidence,
    InteractionContract,
    JobRun,
    Lesson,
    MemoryDocument,
    MemoryDocumentVersion,
    Message,
    Note,
    PendingMemory,
    Procedure,
    ProfileFact,
    RetrievalEvent,
    SessionExtraction,
    Subject,
    SubjectAppPause,
    SubjectConsent,
    VoteEvent,
)
from memory.services import api_key_revoke, app_config_set, fact_set, note_store
from memory.services.consent import memory_candidate_route
from memory.services.consequences import consequence_record
from memory.services.contract import contract_set
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.documents import document_write
from memory.services.evidence import evidence_record
from memoryweb.urls import api_patterns
from tests.factories import SubjectFactory

API = "/api/v1"

IMPORT_DOCUMENT = {
    "format": "memoryweb.subject",
    "version": 1,
    "subject": "bob",
    "display_name": "",
    "app": "elsewhere",
    "exported_at": "2026-01-02T03:04:05+00:00",
    "facts": [],
    "notes": [
        {
            "id": 7,
            "content": "Bob keeps bees",
            "tags": [],
            "mode": "",
            "scope": "",
            "working_dir": "",
            "category": "",
            "origin": "api",
            "confidence": 1.0,
            "version": 1,
            "conversation": None,
            "source_message": None,
            "occurred_at": None,
            "vote_score": 0.0,
            "recall_count": 0,
            "last_recalled_at": None,
            "archived_at": None,
            "consolidated_into": None,
            "created_at": "2026-01-01T00:00:00+00:00",
            "updated_at": "2026-01-01T00:00:00+00:00",
            "versions": [],
            "sources": [],
        }
    ],
    "links": [],
    "lessons": [],
    "procedures": [],
    "votes": [],
    "evidence": [],
    "conversations": [],
    "consent": {},
    "pending": [],
}

# name → (url name, method, path, body); "{conversation}", "{note}", "{fact}", "{message}"
# and "{key}" are filled with the ids of the `world` fixture.
ENDPOINTS = {
    "context": (
        "api-context",
        "post",
        "/context",
        {"subject": "alice", "message": "what is my cat called", "conversation": "{conversation}"},
    ),
    "modes-list": ("api-modes", "get", "/modes", None),
    "mode-read": ("api-mode", "get", "/modes/coding_debug", None),
    "tools-list": ("api-tools", "get", "/tools?format=anthropic", None),
    "tools-call": (
        "api-tools-call",
        "post",
        "/tools/call",
        {
            "conversation": "{conversation}",
            "format": "openai",
            "call": {
                "id": "call_1",
                "type": "function",
                "function": {"name": "memory_profile_list", "arguments": "{}"},
            },
        },
    ),
    "conversations-list": ("api-conversations", "get", "/conversations?subject=alice", None),
    "conversations-open": (
        "api-conversations",
        "post",
        "/conversations",
        {"subject": "alice", "external_id": "x"},
    ),
    "conversation-read": ("api-conversation", "get", "/conversations/{conversation}", None),
    "messages-list": ("api-messages", "get", "/conversations/{conversation}/messages", None),
    "messages-post": ("api-messages", "post", "/conversations/{conversation}/messages", {"text": "hello"}),
    "conversation-state": ("api-conversation-state", "get", "/conversations/{conversation}/state", None),
    "responses-post": ("api-responses", "post", "/conversations/{conversation}/responses", {"text": "hi!"}),
    "profile-list": ("api-profile", "get", "/subjects/alice/profile", None),
    "profile-set": ("api-profile", "post", "/subjects/alice/profile", {"key": "city", "value": "Lyon"}),
    "profile-remove": ("api-profile-key", "delete", "/subjects/alice/profile/{key}", None),
    "profile-park": ("api-profile-key", "patch", "/subjects/alice/profile/{key}", {"parked": True}),
    "profile-history": ("api-profile-history", "get", "/subjects/alice/profile/{key}/history", None),
    "contract-list": ("api-contract", "get", "/subjects/alice/contract", None),
    "contract-set": (
        "api-contract",
        "patch",
        "/subjects/alice/contract",
        {"mode": "coding_debug", "depth": "brief"},
    ),
    "contract-reset-all": ("api-contract", "delete", "/subjects/alice/contract", None),
    "contract-read": ("api-contract-mode", "get", "/subjects/alice/contract/coding_debug", None),
    "contract-mode-set": (
        "api-contract-mode",
        "patch",
        "/subjects/alice/contract/coding_debug",
        {"pace": "slow"},
    ),
    "contract-reset": (
        "api-contract-mode",
        "delete",
        "/subjects/alice/contract/coding_debug?dimension=depth",
        None,
    ),
    "notes-recall": ("api-notes", "get", "/subjects/alice/notes?query=cat", None),
    "notes-store": ("api-notes", "post", "/subjects/alice/notes", {"content": "Alice plays the cello"}),
    "note-read": ("api-note", "get", "/subjects/alice/notes/{note}", None),
    "note-edit": ("api-note", "patch", "/subjects/alice/notes/{note}", {"content": "Alice's cat is Mochi"}),
    "note-forget": ("api-note", "delete", "/subjects/alice/notes/{note}", None),
    "evidence-read": ("api-evidence", "get", "/evidence/{evidence}", None),
    "evidence-forget": ("api-evidence", "delete", "/evidence/{evidence}", None),
    "votes-cast": ("api-votes", "post", "/subjects/alice/votes", {"item": "n:{note}", "signal": "up"}),
    "beliefs-list": ("api-beliefs", "get", "/subjects/alice/beliefs", None),
    "belief-read": ("api-belief", "get", "/subjects/alice/beliefs/f:{fact}", None),
    "belief-revise": (
        "api-belief-revise",
        "post",
        "/subjects/alice/beliefs/f:{fact}/revise",
        {"action": "REINFORCE", "reason": "Alice said it again"},
    ),
    "revisions-list": ("api-revisions", "get", "/subjects/alice/revisions", None),
    "flush": ("api-flush", "post", "/flush", {"subject": "alice", "timeout_ms": 100}),
    "consent-categories": ("api-consent-categories", "get", "/consent/categories", None),
    "subject-export": ("api-subject", "get", "/subjects/alice", None),
    "subject-delete": ("api-subject", "delete", "/subjects/alice", None),
    # into a subject without memory ("alice" has some: 409); no FOREIGN row, as the document
    # names no object of the server, and another app's "bob" is its own (test_api_portable.py)
    "subject-import": ("api-subject-import", "post", "/subjects/bob/import", IMPORT_DOCUMENT),
    "consent-list": ("api-consent", "get", "/subjects/alice/consent", None),
    "consent-set": (
        "api-consent",
        "post",
        "/subjects/alice/consent",
        {"category": "health", "policy": "allow"},
    ),
    "pending-list": ("api-pending", "get", "/subjects/alice/pending", None),
    "pending-approve": ("api-pending-approve", "post", "/subjects/alice/pending/{pending}/approve", None),
    "pending-reject": ("api-pending-reject", "post", "/subjects/alice/pending/{pending}/reject", None),
    "lessons-recall": ("api-lessons", "get", "/subjects/alice/lessons?query=deploy", None),
    "lesson-read": ("api-lesson", "get", "/subjects/alice/lessons/{lesson}", None),
    "lesson-edit": (
        "api-lesson",
        "patch",
        "/subjects/alice/lessons/{lesson}",
        {"text": "Deploy on Tuesdays."},
    ),
    "lesson-park": ("api-lesson", "patch", "/subjects/alice/lessons/{lesson}", {"parked": True}),
    "lesson-delete": ("api-lesson", "delete", "/subjects/alice/lessons/{lesson}", None),
    "procedures-recall": ("api-procedures", "get", "/subjects/alice/procedures?query=deploy", None),
    "procedure-read": ("api-procedure", "get", "/subjects/alice/procedures/{procedure}", None),
    "procedure-edit": (
        "api-procedure",
        "patch",
        "/subjects/alice/procedures/{procedure}",
        {"title": "Deploy"},
    ),
    "procedure-park": ("api-procedure", "patch", "/subjects/alice/procedures/{procedure}", {"parked": True}),
    "procedure-delete": ("api-procedure", "delete", "/subjects/alice/procedures/{procedure}", None),
    "consequences-list": ("api-consequences", "get", "/subjects/alice/consequences", None),
    "consequence-read": ("api-consequence", "get", "/subjects/alice/consequences/{consequence}", None),
    "consequence-edit": (
        "api-consequence",
        "patch",
        "/subjects/alice/consequences/{consequence}",
        {"tendency": "fragile to sweeping changes"},
    ),
    "consequence-delete": ("api-consequence", "delete", "/subjects/alice/consequences/{consequence}", None),
    "consolidate-now": ("api-consolidate", "post", "/subjects/alice/consolidate", None),
    "memory-read": ("api-memory-read", "get", "/subjects/alice/memory?url=memory://root/MEMORY.md", None),
    "memory-documents": ("api-memory-documents", "get", "/subjects/alice/memory/documents", None),
    "memory-history": (
        "api-memory-history",
        "get",
        "/subjects/alice/memory/history?url=memory://root/MEMORY.md",
        None,
    ),
    "memory-view": ("api-memory-view", "post", "/subjects/alice/memory/view", {"message": "cat"}),
    "memory-stats": ("api-memory-stats", "get", "/subjects/alice/memory/stats", None),
    "memory-diagnose": ("api-memory-diagnose", "get", "/subjects/alice/memory/diagnose", None),
    "memory-clear": ("api-memory-clear", "post", "/subjects/alice/memory/clear", {"confirm": True}),
    "memory-reset": ("api-memory-reset", "post", "/subjects/alice/memory/reset", {"confirm": True}),
    "memory-enqueue": ("api-memory-enqueue", "post", "/subjects/alice/memory/enqueue", None),
    "memory-rebuild": ("api-memory-rebuild", "post", "/subjects/alice/memory/rebuild", None),
    "memory-reload": (
        "api-memory-reload",
        "post",
        "/subjects/alice/memory/reload",
        {"conversation": "{conversation}"},
    ),
    "mental-models-list": ("api-mental-models", "get", "/subjects/alice/memory/mental-models", None),
    "mental-models-create": (
        "api-mental-models",
        "post",
        "/subjects/alice/memory/mental-models",
        {"name": "pets", "description": "Their pets"},
    ),
    "mental-models-seed": (
        "api-mental-models-seed",
        "post",
        "/subjects/alice/memory/mental-models/seed",
        None,
    ),
    "mental-models-refresh": (
        "api-mental-models-refresh",
        "post",
        "/subjects/alice/memory/mental-models/refresh",
        None,
    ),
    "mental-model-read": (
        "api-mental-model",
        "get",
        "/subjects/alice/memory/mental-models/who-they-are",
        None,
    ),
    "mental-model-delete": (
        "api-mental-model",
        "delete",
        "/subjects/alice/memory/mental-models/who-they-are",
        None,
    ),
    "mental-model-refresh": (
        "api-mental-model-refresh",
        "post",
        "/subjects/alice/memory/mental-models/who-they-are/refresh",
        None,
    ),
    "mental-model-history": (
        "api-mental-model-history",
        "get",
        "/subjects/alice/memory/mental-models/who-they-are/history",
        None,
    ),
}

# The same endpoints aimed by another app at this app's objects. The two that only name a
# subject (opening a conversation, setting a fact) are absent: for another app "alice" is
# simply its own, new subject (see the tests at the end).
FOREIGN = {
    "context": ("post", "/context", {"subject": "alice", "message": "cat", "conversation": "{conversation}"}),
    "conversations-list": ("get", "/conversations?subject=alice", None),
    "conversation-read": ("get", "/conversations/{conversation}", None),
    "tools-call": (
        "post",
        "/tools/call",
        {
            "conversation": "{conversation}",
            "format": "openai",
            "call": {
                "id": "call_1",
                "type": "function",
                "function": {"name": "memory_profile_list", "arguments": "{}"},
            },
        },
    ),
    "messages-list": ("get", "/conversations/{conversation}/messages", None),
    "messages-post": ("post", "/conversations/{conversation}/messages", {"text": "hello"}),
    "responses-post": ("post", "/conversations/{conversation}/responses", {"text": "hi!"}),
    "profile-list": ("get", "/subjects/alice/profile", None),
    "profile-remove": ("delete", "/subjects/alice/profile/{key}", None),
    "profile-park": ("patch", "/subjects/alice/profile/{key}", {"parked": True}),
    "profile-history": ("get", "/subjects/alice/profile/{key}/history", None),
    "contract-list": ("get", "/subjects/alice/contract", None),
    "notes-recall": ("get", "/subjects/alice/notes?query=cat", None),
    "notes-store-in-conversation": (
        "post",
        "/subjects/alice/notes",
        {"content": "stolen", "conversation": "{conversation}"},
    ),
    "notes-store-from-message": (
        "post",
        "/subjects/alice/notes",
        {"content": "stolen", "message": "{message}"},
    ),
    "note-read": ("get", "/subjects/alice/notes/{note}", None),
    "note-edit": ("patch", "/subjects/alice/notes/{note}", {"content": "overwritten"}),
    "note-park": ("patch", "/subjects/alice/notes/{note}", {"parked": True}),
    "note-forget": ("delete", "/subjects/alice/notes/{note}", None),
    "evidence-read": ("get", "/evidence/{evidence}", None),
    "evidence-forget": ("delete", "/evidence/{evidence}", None),
    "votes-on-note": ("post", "/subjects/alice/votes", {"item": "n:{note}", "signal": "down"}),
    "votes-on-fact": ("post", "/subjects/alice/votes", {"item": "f:{fact}", "signal": "down"}),
    "beliefs-list": ("get", "/subjects/alice/beliefs", None),
    "belief-read": ("get", "/subjects/alice/beliefs/f:{fact}", None),
    "belief-read-note": ("get", "/subjects/alice/beliefs/n:{note}", None),
    "belief-revise": (
        "post",
        "/subjects/alice/beliefs/f:{fact}/revise",
        {"action": "ARCHIVE", "reason": "stolen"},
    ),
    "belief-revise-note": (
        "post",
        "/subjects/alice/beliefs/n:{note}/revise",
        {"action": "ARCHIVE", "reason": "x"},
    ),
    "revisions-list": ("get", "/subjects/alice/revisions", None),
    "flush": ("post", "/flush", {"subject": "alice", "conversation": "{conversation}", "timeout_ms": 100}),
    "pending-list": ("get", "/subjects/alice/pending", None),
    "pending-approve": ("post", "/subjects/alice/pending/{pending}/approve", None),
    "pending-reject": ("post", "/subjects/alice/pending/{pending}/reject", None),
    "lessons-recall": ("get", "/subjects/alice/lessons?query=deploy", None),
    "lesson-read": ("get", "/subjects/alice/lessons/{lesson}", None),
    "lesson-edit": ("patch", "/subjects/alice/lessons/{lesson}", {"text": "overwritten"}),
    "lesson-park": ("patch", "/subjects/alice/lessons/{lesson}", {"parked": True}),
    "lesson-delete": ("delete", "/subjects/alice/lessons/{lesson}", None),
    "procedures-recall": ("get", "/subjects/alice/procedures?query=deploy", None),
    "procedure-read": ("get", "/subjects/alice/procedures/{procedure}", None),
    "procedure-edit": ("patch", "/subjects/alice/procedures/{procedure}", {"title": "overwritten"}),
    "procedure-park": ("patch", "/subjects/alice/procedures/{procedure}", {"parked": True}),
    "procedure-delete": ("delete", "/subjects/alice/procedures/{procedure}", None),
    "conversation-state": ("get", "/conversations/{conversation}/state", None),
    "consequences-list": ("get", "/subjects/alice/consequences", None),
    "consequence-read": ("get", "/subjects/alice/consequences/{consequence}", None),
    "consequence-edit": ("patch", "/subjects/alice/consequences/{consequence}", {"tendency": "overwritten"}),
    "consequence-delete": ("delete", "/subjects/alice/consequences/{consequence}", None),
    "votes-on-lesson": ("post", "/subjects/alice/votes", {"item": "l:{lesson}", "signal": "down"}),
    "memory-read": ("get", "/subjects/alice/memory?url=memory://root/MEMORY.md", None),
    "memory-documents": ("get", "/subjects/alice/memory/documents", None),
    "memory-history": ("get", "/subjects/alice/memory/history?url=memory://root/MEMORY.md", None),
    # the memory/ endpoints that only name a subject act on the caller's own "alice", if any
    # (tests/chat/test_api_memory_ops.py: another app without one gets 404)
    "memory-view": ("post", "/subjects/alice/memory/view", {"conversation": "{conversation}"}),
    "memory-reload": ("post", "/subjects/alice/memory/reload", {"conversation": "{conversation}"}),
    "mental-model-read": ("get", "/subjects/alice/memory/mental-models/who-they-are", None),
    "mental-model-delete": ("delete", "/subjects/alice/memory/mental-models/who-they-are", None),
    "mental-model-refresh": ("post", "/subjects/alice/memory/mental-models/who-they-are/refresh", None),
    "mental-model-history": ("get", "/subjects/alice/memory/mental-models/who-they-are/history", None),
}

SUBJECT_LISTS = {
    "conversations-list": "conversations",
    "profile-list": "facts",
    "notes-recall": "notes",
    "contract-list": "contracts",
    "pending-list": "pending",
    "lessons-recall": "lessons",
    "procedures-recall": "procedures",
    "memory-documents": "documents",
    "beliefs-list": "beliefs",
    "revisions-list": "revisions",
    "consequences-list": "consequences",
}


@pytest.fixture
def world(subject, actor, config):
    """alice (of `client`'s app) with a conversation, a message, a note, a fact and MEMORY.md."""
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)
    message, _ = message_add(conversation=conversation, role="user", text="my cat is Miso", actor=actor)
    note, _ = note_store(subject=subject, content="Alice's cat is called Miso", actor=actor, config=config)
    fact, _ = fact_set(subject=subject, key="name", value="Alice", actor=actor)
    pending = memory_candidate_route(
        subject=subject,
        kind="fact",
        payload={"key": "condition", "value": "asthma"},
        category="health",
        source_message=message,
        actor=actor,
        config=config,
    ).obj
    evidence = evidence_record(message=message, category="", actor=actor, config=config)
    lesson = Lesson.objects.create(subject=subject, text="Deploys go out on Tuesdays after the checks pass.")
    procedure = Procedure.objects.create(
        subject=subject, title="Deploy the api", steps=["Run the checks.", "Deploy with make deploy."]
    )
    document_write(subject=subject, path="MEMORY.md", content="# Memory\n- Alice's cat is Miso", actor=actor)
    advice, _ = message_add(
        conversation=conversation, role="assistant", text="Run black on the whole repo.", actor=actor
    )
    report, _ = message_add(conversation=conversation, role="user", text="that broke the build", actor=actor)
    consequence, _ = consequence_record(
        subject=subject,
        advice_message=advice,
        outcome_message=report,
        action="Run black on the whole repo.",
        outcome="failure",
        outcome_text="that broke the build",
        actor=actor,
    )
    # the session summaries on (enqueue and rebuild answer 409 otherwise), a mental model to read
    app_config_set(app=subject.app, config={"memory": {"backend": "local"}}, actor=actor)
    mental_models_seed(subject=subject, actor=actor)
    contract_set(
        subject=subject, mode="coding_debug", values={"directness": "blunt"}, actor=actor, config=config
    )
    return SimpleNamespace(
        lesson=lesson,
        procedure=procedure,
        subject=subject,
        conversation=conversation,
        message=message,
        note=note,
        fact=fact,
        key=fact.key,
        pending=pending,
        evidence=evidence,
        consequence=consequence,
    )


def _fill(value, world):
    ids = {
        "conversation": world.conversation.pk,
        "message": world.message.pk,
        "note": world.note.pk,
        "fact": world.fact.pk,
        "key": world.key,
        "pending": world.pending.pk,
        "lesson": world.lesson.pk,
        "procedure": world.procedure.pk,
        "evidence": world.evidence.pk,
        "consequence": world.consequence.pk,
    }
    if isinstance(value, dict):
        return {k: _fill(v, world) for k, v in value.items()}
    if isinstance(value, str):
        for name, id_ in ids.items():
            if value == "{" + name + "}":
                return id_  # a whole-value placeholder keeps its type (ids are ints in JSON)
            value = value.replace("{" + name + "}", str(id_))
    return value


def call(api_client, world, method, path, body):
    send = getattr(api_client, method)
    url = API + _fill(path, world)
    if body is None:
        return send(url)
    return send(url, _fill(body, world), format="json")


def snapshot():
    """Row counts of everything an endpoint may write."""
    models = [
        BeliefRevision,
        Subject,
        Conversation,
        Message,
        Note,
        ProfileFact,
        VoteEvent,
        RetrievalEvent,
        AuditEvent,
        PendingMemory,
        SubjectConsent,
        Evidence,
        MemoryDocument,
        MemoryDocumentVersion,
        SessionExtraction,
        JobRun,
        InteractionContract,
        Consequence,
    ]
    counts = {model.__name__: model.objects.count() for model in models}
    counts["lessons"] = sorted(Lesson.objects.values_list("text", flat=True))
    counts["procedures"] = sorted(Procedure.objects.values_list("title", flat=True))
    counts["active facts"] = ProfileFact.objects.filter(valid_to=None).count()
    counts["note contents"] = sorted(Note.objects.values_list("content", flat=True))
    counts["pending statuses"] = sorted(PendingMemory.objects.values_list("status", flat=True))
    counts["evidence"] = sorted(Evidence.objects.values_list("status", "text"))
    counts["contracts"] = sorted((c.mode, str(c.dimensions)) for c in InteractionContract.objects.all())
    counts["consequences"] = sorted(Consequence.objects.values_list("outcome", "tendency"))
    return counts


def test_the_endpoint_table_covers_every_sidecar_url_and_method():
    in_urlconf = set()
    for pattern in api_patterns:
        view = pattern.callback.view_class
        for method in view.http_method_names:
            if method not in ("options", "head") and hasattr(view, method):
                in_urlconf.add((pattern.name, method))

    in_table = {(url_name, method) for url_name, method, _, _ in ENDPOINTS.values()}

    assert in_table == in_urlconf


@pytest.mark.parametrize("name", ENDPOINTS)
def test_a_valid_key_reaches_every_endpoint(client, world, name):
    _, method, path, body = ENDPOINTS[name]

    response = call(client, world, method, path, body)

    assert response.status_code in (200, 201, 202, 204), response.content


@pytest.mark.parametrize("name", ENDPOINTS)
def test_a_request_without_a_key_is_refused_with_401_and_writes_nothing(anon_client, world, name):
    _, method, path, body = ENDPOINTS[name]
    before = snapshot()

    response = call(anon_client, world, method, path, body)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert response.json()["error"]["code"] == "not_authenticated"
    assert snapshot() == before


@pytest.mark.parametrize("name", ENDPOINTS)
def test_a_request_with_a_wrong_secret_is_refused_with_401_and_writes_nothing(api_key, world, name):
    _, method, path, body = ENDPOINTS[name]
    prefix = api_key.split("_")[1]
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION=f"Bearer mw_{prefix}_not-the-secret")
    before = snapshot()

    response = call(wrong, world, method, path, body)

    assert response.status_code == 401
    assert response.json()["error"] == {"code": "authentication_failed", "message": "invalid API key"}
    assert snapshot() == before


@pytest.mark.parametrize("name", ENDPOINTS)
def test_a_revoked_key_is_refused_with_401_and_writes_nothing(client, api_key, actor, world, name):
    _, method, path, body = ENDPOINTS[name]
    api_key_revoke(key=ApiKey.objects.get(prefix=api_key.split("_")[1]), actor=actor)
    before = snapshot()

    response = call(client, world, method, path, body)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"
    assert snapshot() == before


@pytest.mark.parametrize("name", ENDPOINTS)
def test_a_paused_app_is_refused_with_403_and_writes_nothing(client, app, world, name):
    _, method, path, body = ENDPOINTS[name]
    app.paused = True
    app.save(update_fields=["paused"])
    before = snapshot()

    response = call(client, world, method, path, body)

    assert response.status_code == 403
    assert response.json()["error"] == {"code": "permission_denied", "message": "this app is paused"}
    assert snapshot() == before


# --- the person's pause of this app for their memory (the dashboard's Apps page) -------------
# endpoints that name no subject (reference data), and the import into another subject (bob)
NOT_ALICES = {"modes-list", "mode-read", "tools-list", "consent-categories", "subject-import"}


@pytest.fixture
def alice_paused(world, app):
    return SubjectAppPause.objects.create(subject=world.subject, app=app)


@pytest.mark.parametrize("name", [n for n in ENDPOINTS if n not in NOT_ALICES])
def test_an_app_paused_for_a_subject_is_refused_403_on_that_subject_and_writes_nothing(
    client, world, alice_paused, name
):
    _, method, path, body = ENDPOINTS[name]
    before = snapshot()

    response = call(client, world, method, path, body)

    assert response.status_code == 403, response.content
    error = response.json()["error"]
    assert error["code"] == "app_paused_for_subject"
    assert "'alice'" in error["message"]
    assert error["field"] == "subject"
    assert snapshot() == before


@pytest.mark.parametrize("name", sorted(NOT_ALICES))
def test_a_pause_for_alice_leaves_the_endpoints_about_no_subject_of_hers_open(
    client, world, alice_paused, name
):
    _, method, path, body = ENDPOINTS[name]

    response = call(client, world, method, path, body)

    assert response.status_code in (200, 201), response.content


def test_a_pause_for_one_subject_leaves_the_apps_other_subjects_alone(client, world, alice_paused, actor):
    carol = SubjectFactory(app=world.subject.app, external_id="carol")
    fact_set(subject=carol, key="city", value="Porto", actor=actor)

    read = client.get(f"{API}/subjects/carol/profile")
    write = client.post(f"{API}/subjects/carol/notes", {"content": "Carol sails"}, format="json")

    assert read.status_code == 200
    assert [f["value"] for f in read.json()["facts"]] == ["Porto"]
    assert write.status_code == 201
    assert Note.objects.filter(subject=carol, content="Carol sails").exists()


def test_an_import_into_a_paused_subject_is_refused_and_writes_nothing(client, app, world):
    bob = SubjectFactory(app=app, external_id="bob")
    SubjectAppPause.objects.create(subject=bob, app=app)
    before = snapshot()

    response = client.post(f"{API}/subjects/bob/import", IMPORT_DOCUMENT, format="json")

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "app_paused_for_subject"
    assert snapshot() == before


def test_resuming_opens_the_subject_to_the_app_again(client, world, alice_paused, actor):
    from memory.services.apps import subject_app_resume

    assert client.get(f"{API}/subjects/alice/profile").status_code == 403
    assert subject_app_resume(subject=world.subject, app=world.subject.app, actor=actor) is True

    assert client.get(f"{API}/subjects/alice/profile").status_code == 200
    assert not SubjectAppPause.objects.exists()


def test_the_schema_documents_the_per_subject_pause_on_403(client):
    from django.test import Client as WebClient

    schema = WebClient().get("/api/schema/?format=json").json()
    response_403 = schema["paths"]["/api/v1/subjects/{subject}/profile"]["get"]["responses"]["403"]

    assert "app_paused_for_subject" in response_403["description"]


@pytest.mark.parametrize(
    "header",
    [
        "Basic dXNlcjpwYXNz",
        "Bearer",
        "Bearer not-a-memoryweb-key",
        "Bearer mw_only-two-parts",
        "Token mw_a_b",
    ],
)
def test_a_malformed_authorization_header_is_refused_with_401(world, header):
    api_client = APIClient()
    api_client.credentials(HTTP_AUTHORIZATION=header)

    response = api_client.get(f"{API}/subjects/alice/profile")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"


def test_a_key_of_another_app_sees_only_its_own_app(client, other_client, world):
    assert client.get(f"{API}/subjects/alice/profile").status_code == 200
    assert other_client.get(f"{API}/subjects/alice/profile").status_code == 404


def test_using_a_key_stamps_last_used_at_once_a_minute_at_most(client, api_key, world):
    key = ApiKey.objects.get(prefix=api_key.split("_")[1])
    assert key.last_used_at is None

    client.get(f"{API}/subjects/alice/profile")
    key.refresh_from_db()
    first = key.last_used_at
    client.get(f"{API}/subjects/alice/profile")
    key.refresh_from_db()

    assert first is not None
    assert key.last_used_at == first


# --- the tenant wall --------------------------------------------------------------------------
@pytest.fixture(params=[False, True], ids=["other-app-has-no-alice", "other-app-has-its-own-alice"])
def other_alice(request, other_app):
    """Run each tenant test twice: another app without a subject "alice", and with one."""
    if request.param:
        return SubjectFactory(app=other_app, external_id="alice")
    return None


@pytest.mark.parametrize("name", FOREIGN)
def test_another_apps_objects_are_404_and_untouched(other_client, other_app, world, other_alice, name):
    method, path, body = FOREIGN[name]
    before = snapshot()
    subjects_before = set(Subject.objects.values_list("pk", flat=True))

    response = call(other_client, world, method, path, body)

    if other_alice is not None and name in SUBJECT_LISTS:
        # its own alice exists: the list is hers, and she has nothing
        assert response.status_code == 200
        assert response.json() == {SUBJECT_LISTS[name]: []}
    else:
        assert response.status_code == 404, response.content
        assert response.json()["error"]["code"] == "not_found"
    after = snapshot()
    before.pop("Subject"), after.pop("Subject")
    assert after == before
    # context and notes-store create the caller's own "alice" before they look the
    # conversation up; nothing else may appear, and nothing in this app
    new_subjects = Subject.objects.exclude(pk__in=subjects_before)
    assert [(s.app_id, s.external_id) for s in new_subjects] in ([], [(other_app.pk, "alice")])
    assert Note.objects.get(pk=world.note.pk).content == "Alice's cat is called Miso"
    assert ProfileFact.objects.get(pk=world.fact.pk).valid_to is None


@pytest.mark.parametrize(
    "path,placeholder",
    [
        ("/subjects/alice/notes/{id}", "note"),
        ("/evidence/{id}", "evidence"),
        ("/conversations/{id}", "conversation"),
        ("/conversations/{id}/messages", "conversation"),
        ("/subjects/alice/profile/{id}/history", "key"),
        ("/conversations/{id}/state", "conversation"),
        ("/subjects/alice/consequences/{id}", "consequence"),
    ],
)
def test_the_404_for_another_apps_object_says_no_more_than_for_a_missing_one(
    other_client, world, other_alice, path, placeholder
):
    existing = _fill("{" + placeholder + "}", world)
    missing = "no-such-key" if placeholder == "key" else 987654321

    foreign_body = other_client.get(API + path.format(id=existing)).json()
    missing_body = other_client.get(API + path.format(id=missing)).json()

    assert foreign_body == _replace_everywhere(missing_body, str(missing), str(existing))


def _replace_everywhere(value, old, new):
    if isinstance(value, dict):
        return {k: _replace_everywhere(v, old, new) for k, v in value.items()}
    return value.replace(old, new) if isinstance(value, str) else value


def test_another_app_setting_a_fact_for_alice_writes_to_its_own_alice(other_client, other_app, world):
    response = other_client.post(
        f"{API}/subjects/alice/profile", {"key": "name", "value": "Mallory"}, format="json"
    )

    assert response.status_code == 201
    theirs = Subject.objects.get(app=other_app, external_id="alice")
    assert theirs.pk != world.subject.pk
    assert ProfileFact.objects.get(subject=theirs).value == "Mallory"
    assert ProfileFact.objects.get(subject=world.subject, valid_to=None).value == "Alice"


def test_another_app_opening_conversation_c1_for_alice_gets_a_new_one(other_client, other_app, world):
    response = other_client.post(
        f"{API}/conversations", {"subject": "alice", "external_id": "c1"}, format="json"
    )

    assert response.status_code == 201
    assert response.json()["id"] != world.conversation.pk
    assert Conversation.objects.get(pk=response.json()["id"]).subject.app == other_app
    assert Conversation.objects.filter(subject=world.subject).count() == 1


def test_a_conversation_of_another_subject_of_the_same_app_is_404_for_context(client, world):
    response = client.post(
        f"{API}/context",
        {"subject": "bob", "message": "cat", "conversation": world.conversation.pk},
        format="json",
    )

    assert response.status_code == 404
    assert response.json()["error"]["field"] == "conversation"
    assert not RetrievalEvent.objects.exists()


def test_another_app_exporting_alice_never_sees_this_apps_alice(other_client, world, other_alice):
    response = other_client.get(f"{API}/subjects/alice")

    if other_alice is None:
        assert response.status_code == 404
    else:
        data = response.json()
        assert data["facts"] == [] and data["notes"] == [] and data["conversations"] == []


def test_another_app_deleting_alice_leaves_this_apps_alice_whole(other_client, world, other_alice):
    response = other_client.delete(f"{API}/subjects/alice")

    assert response.status_code == (404 if other_alice is None else 204)
    assert Subject.objects.filter(pk=world.subject.pk).exists()
    assert Note.objects.filter(pk=world.note.pk).exists()


def test_another_apps_consent_settings_never_touch_this_apps_alice(other_client, world, other_alice):
    response = other_client.post(
        f"{API}/subjects/alice/consent", {"category": "health", "policy": "allow"}, format="json"
    )

    assert response.status_code == 200
    assert not SubjectConsent.objects.filter(subject=world.subject).exists()
