"""The REST sidecar, endpoint by endpoint: what each answers and which rows it writes.

Keys, paused apps and the tenant wall are in test_api_auth.py.
"""

import datetime

import pytest
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from memory.api import urls as api_urls
from memory.models import (
    AuditEvent,
    ContextDelivery,
    Conversation,
    Message,
    Note,
    NoteSource,
    NoteVersion,
    ProfileFact,
    RetrievalEvent,
    Subject,
    VoteEvent,
)
from memory.services import fact_set, note_store
from memory.services.conversations import conversation_get_or_create, message_add
from memory.tokens import estimate_tokens

API = "/api/v1"
TAIL_ORDER = [
    "profile",
    "recalled",
    "memory-index",
    "lessons",
    "procedures",
    "contract",
    "state",
    "consequences",
    "topics",
    "transcript",
]


def post(api_client, path, body):
    return api_client.post(API + path, body, format="json")


def patch(api_client, path, body):
    return api_client.patch(API + path, body, format="json")


@pytest.fixture
def conversation(subject, actor):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c1", actor=actor)
    return conversation


@pytest.fixture
def note(subject, actor, config):
    note, _ = note_store(
        subject=subject, content="Alice's cat is called Miso", tags=["pets"], actor=actor, config=config
    )
    return note


@pytest.fixture
def fact(subject, actor):
    fact, _ = fact_set(subject=subject, key="name", value="Alice", actor=actor)
    return fact


def api_key_prefix(api_key):
    return api_key.split("_")[1]


# --- context ----------------------------------------------------------------------------------
def test_context_returns_the_stable_prefix_the_tail_and_why_each_item_was_chosen(client, memories):
    response = post(client, "/context", {"subject": "alice", "message": "Any Lisbon restaurant tips?"})

    assert response.status_code == 200
    data = response.json()
    assert data["stable_prefix"].startswith("## Memory")
    assert [b["name"] for b in data["blocks"]] == ["stable_prefix", *TAIL_ORDER]
    assert "- name: Alice" in data["tail"] and "- allergy: peanuts" in data["tail"]
    assert f"n:{memories[0].pk}" in data["tail"]
    assert f"n:{memories[4].pk}" not in data["tail"]  # the cat has nothing to do with Lisbon
    note_item = next(i for i in data["items"] if i["id"] == f"n:{memories[0].pk}")
    assert note_item["kind"] == "note" and note_item["section"] == "recalled"
    assert note_item["reason"].startswith("matched") and note_item["score"] > 0
    assert data["tokens"]["total"] == sum(b["tokens"] for b in data["blocks"])
    assert (data["query"], data["rewritten_query"]) == (
        "Any Lisbon restaurant tips?",
        "Any Lisbon restaurant tips?",
    )
    assert data["unchanged"] is False


def test_every_context_call_records_one_retrieval_event(client, memories, conversation):
    ids = []
    for _ in range(3):
        body = {"subject": "alice", "message": "Lisbon restaurant", "conversation": conversation.pk}
        ids.append(post(client, "/context", body).json()["retrieval_event_id"])

    events = list(RetrievalEvent.objects.order_by("pk"))
    assert [e.pk for e in events] == ids
    assert all(e.conversation_id == conversation.pk and e.query == "Lisbon restaurant" for e in events)
    assert f"n:{memories[0].pk}" in [item["id"] for item in events[0].items]
    assert events[0].tokens["total"] > 0


def test_the_second_identical_context_call_in_a_conversation_omits_the_unchanged_texts(
    client, memories, conversation
):
    body = {"subject": "alice", "message": "Lisbon restaurant", "conversation": conversation.pk}
    first = post(client, "/context", body).json()

    second = post(client, "/context", body).json()

    assert first["unchanged"] is False and all(b["text"] is not None for b in first["blocks"])
    assert second["unchanged"] is True
    assert all(b["unchanged"] and b["text"] is None for b in second["blocks"])
    assert (second["stable_prefix"], second["tail"]) == ("", "")
    assert [b["digest"] for b in second["blocks"]] == [b["digest"] for b in first["blocks"]]
    assert [b["tokens"] for b in second["blocks"]] == [b["tokens"] for b in first["blocks"]]
    assert ContextDelivery.objects.filter(conversation=conversation).count() == len(first["blocks"]) == 11


def test_full_true_returns_every_text_even_when_unchanged(client, memories, conversation):
    body = {"subject": "alice", "message": "Lisbon restaurant", "conversation": conversation.pk}
    first = post(client, "/context", body).json()

    again = post(client, "/context", {**body, "full": True}).json()

    assert again["unchanged"] is True
    assert [b["text"] for b in again["blocks"]] == [b["text"] for b in first["blocks"]]
    assert (again["stable_prefix"], again["tail"]) == (first["stable_prefix"], first["tail"])


def test_only_the_changed_block_is_sent_again_after_a_new_fact(
    client, memories, conversation, subject, actor
):
    body = {"subject": "alice", "message": "Lisbon restaurant", "conversation": conversation.pk}
    post(client, "/context", body)
    fact_set(subject=subject, key="city", value="Porto", actor=actor)

    data = post(client, "/context", body).json()

    sent = {b["name"]: b["text"] for b in data["blocks"] if not b["unchanged"]}
    assert list(sent) == ["profile"]
    assert "- city: Porto" in sent["profile"]
    assert data["tail"] == sent["profile"]


def test_without_a_conversation_nothing_is_ever_marked_unchanged(client, memories):
    body = {"subject": "alice", "message": "Lisbon restaurant"}
    post(client, "/context", body)

    data = post(client, "/context", body).json()

    assert data["unchanged"] is False and all(b["text"] is not None for b in data["blocks"])
    assert not ContextDelivery.objects.exists()


def test_context_sections_stay_under_their_caps_and_come_in_order(client, subject, actor, config):
    for i in range(40):
        fact_set(
            subject=subject, key=f"fact{i:02}", value=f"a rather long value number {i} " * 6, actor=actor
        )
        note_store(
            subject=subject,
            content=f"Lisbon memory {i}: " + f"trams{i} and Lisbon hills " * 30,
            actor=actor,
            config=config,
        )

    data = post(client, "/context", {"subject": "alice", "message": "Lisbon trams"}).json()

    for block in data["blocks"]:
        # no lessons, procedures, contract, state, chains or topics exist here and the
        # transcript is off: those blocks are empty
        empty = ("lessons", "procedures", "contract", "state", "consequences", "topics", "transcript")
        assert (0 if block["name"] in empty else 1) <= block["tokens"] <= block["cap"]
        assert block["tokens"] == estimate_tokens(block["text"])
    assert {b["name"]: b["cap"] for b in data["blocks"]} == {
        "stable_prefix": 400,
        "profile": 512,
        "recalled": 400,
        "memory-index": 300,
        "lessons": 300,
        "procedures": 400,
        "contract": 120,
        "state": 80,
        "consequences": 250,
        "topics": 200,
        "transcript": 2048,
    }
    headings = [line[4:] for line in data["tail"].splitlines() if line.startswith("### ")]
    assert headings == TAIL_ORDER[:3]  # empty sections are left out of the tail
    assert len([i for i in data["items"] if i["section"] == "recalled"]) <= 3


def test_context_caps_come_from_the_apps_config(client, app, subject, actor, config):
    app.config = {
        "memory": {
            "profile": {"maxTokens": 60},
            "recallInjection": {"maxTokens": 90},
            "memoryIndex": {"maxTokens": 50},
        }
    }
    app.save(update_fields=["config"])
    for i in range(10):
        fact_set(subject=subject, key=f"fact{i}", value="some value " * 3, actor=actor)
        note_store(
            subject=subject,
            content=f"note {i} about Lisbon " + "filler words " * 20,
            actor=actor,
            config=config,
        )

    data = post(client, "/context", {"subject": "alice", "message": "Lisbon"}).json()

    caps = {b["name"]: (b["tokens"], b["cap"]) for b in data["blocks"]}
    assert caps["profile"][1] == 60 and caps["recalled"][1] == 90 and caps["memory-index"][1] == 50
    assert all(tokens <= cap for tokens, cap in caps.values()), caps


def test_a_single_note_longer_than_the_recalled_cap_is_cut_to_fit(client, subject, actor, config):
    note_store(subject=subject, content="Lisbon " + "word " * 790, actor=actor, config=config)

    data = post(client, "/context", {"subject": "alice", "message": "Lisbon"}).json()

    recalled = next(b for b in data["blocks"] if b["name"] == "recalled")
    assert 0 < recalled["tokens"] <= recalled["cap"]


def test_k_sets_how_many_notes_are_recalled_in_full(client, memories):
    data = post(client, "/context", {"subject": "alice", "message": "Lisbon restaurant", "k": 1}).json()

    sections = [i["section"] for i in data["items"] if i["kind"] == "note"]
    assert sections.count("recalled") == 1
    assert sections.count("memory-index") >= 1


def test_context_counts_a_recall_of_the_notes_in_recalled_only(client, memories):
    data = post(client, "/context", {"subject": "alice", "message": "Lisbon restaurant", "k": 1}).json()

    recalled = {int(i["id"][2:]) for i in data["items"] if i["section"] == "recalled"}
    counts = dict(Note.objects.values_list("pk", "recall_count"))
    assert {pk for pk, count in counts.items() if count} == recalled
    assert Note.objects.get(pk=recalled.pop()).last_recalled_at is not None


def test_context_for_a_new_subject_creates_it_and_has_an_empty_tail(client, app):
    data = post(client, "/context", {"subject": "newcomer", "message": "hello"}).json()

    assert data["tail"] == "" and data["stable_prefix"]
    assert Subject.objects.filter(app=app, external_id="newcomer").exists()


# --- conversations ----------------------------------------------------------------------------
def test_opening_a_conversation_writes_it_with_its_mode_scope_and_working_dir(client, app, api_key):
    body = {
        "subject": "alice",
        "external_id": "chat-1",
        "mode": "coding_debug",
        "scope": "work",
        "working_dir": "/src",
    }

    response = post(client, "/conversations", body)

    assert response.status_code == 201
    conversation = Conversation.objects.get(pk=response.json()["id"])
    assert conversation.subject.app == app and conversation.subject.external_id == "alice"
    assert (conversation.external_id, conversation.mode, conversation.scope, conversation.working_dir) == (
        "chat-1",
        "coding_debug",
        "work",
        "/src",
    )
    assert response.json()["subject"] == "alice"


def test_opening_a_conversation_again_by_external_id_returns_the_same_one(client):
    first = post(client, "/conversations", {"subject": "alice", "external_id": "chat-1", "scope": "work"})

    again = post(client, "/conversations", {"subject": "alice", "external_id": "chat-1"})

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert Conversation.objects.count() == 1
    assert AuditEvent.objects.filter(action="conversation.created").count() == 1


def test_reopening_a_conversation_with_another_scope_is_refused(client):
    post(client, "/conversations", {"subject": "alice", "external_id": "chat-1", "scope": "work"})

    response = post(client, "/conversations", {"subject": "alice", "external_id": "chat-1", "scope": "home"})

    assert response.status_code == 400
    assert response.json()["error"]["field"] == "scope"
    assert Conversation.objects.get().scope == "work"


def test_listing_conversations_shows_the_subjects_most_recently_active_first(client, subject, actor):
    older, _ = conversation_get_or_create(subject=subject, external_id="older", actor=actor)
    newer, _ = conversation_get_or_create(subject=subject, external_id="newer", actor=actor)
    message_add(conversation=older, role="user", text="bump", actor=actor)

    response = client.get(f"{API}/conversations", {"subject": "alice"})

    assert response.status_code == 200
    assert [c["external_id"] for c in response.json()["conversations"]] == ["older", "newer"]


def test_reading_a_conversation_counts_its_messages(client, conversation, actor):
    message_add(conversation=conversation, role="user", text="one", actor=actor)
    message_add(conversation=conversation, role="assistant", text="two", actor=actor)

    response = client.get(f"{API}/conversations/{conversation.pk}")

    assert response.status_code == 200
    assert response.json()["message_count"] == 2
    assert response.json()["external_id"] == "c1"


# --- messages and responses ---------------------------------------------------------------------
def test_posting_a_message_writes_it_and_marks_the_conversation_active(client, conversation):
    before = conversation.updated_at

    response = post(
        client,
        f"/conversations/{conversation.pk}/messages",
        {"text": "I moved to Porto", "occurred_at": "2025-03-01T10:00:00Z"},
    )

    assert response.status_code == 201
    message = Message.objects.get(pk=response.json()["id"])
    assert (message.conversation_id, message.role, message.text) == (
        conversation.pk,
        "user",
        "I moved to Porto",
    )
    assert message.occurred_at == datetime.datetime(2025, 3, 1, 10, 0, tzinfo=datetime.UTC)
    conversation.refresh_from_db()
    assert conversation.updated_at > before


def test_posting_a_message_with_an_existing_external_id_is_idempotent(client, conversation):
    body = {"text": "hello", "external_id": "m-1"}
    first = post(client, f"/conversations/{conversation.pk}/messages", body)

    again = post(client, f"/conversations/{conversation.pk}/messages", body)

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert Message.objects.count() == 1
    assert AuditEvent.objects.filter(action="message.added").count() == 1


def test_a_batch_of_messages_is_written_in_order(client, conversation):
    batch = [{"text": "hi", "external_id": "a"}, {"role": "assistant", "text": "hello"}, {"text": "bye"}]

    response = post(client, f"/conversations/{conversation.pk}/messages", {"messages": batch})

    assert response.status_code == 201
    assert [m["text"] for m in response.json()["messages"]] == ["hi", "hello", "bye"]
    assert list(conversation.messages.values_list("role", "text")) == [
        ("user", "hi"),
        ("assistant", "hello"),
        ("user", "bye"),
    ]


def test_a_batch_repeating_known_external_ids_writes_only_the_new_ones(client, conversation, actor):
    message_add(conversation=conversation, role="user", text="hi", external_id="a", actor=actor)
    batch = [{"text": "hi", "external_id": "a"}, {"text": "new", "external_id": "b"}]

    response = post(client, f"/conversations/{conversation.pk}/messages", {"messages": batch})

    assert response.status_code == 201
    assert list(conversation.messages.values_list("external_id", flat=True)) == ["a", "b"]


@pytest.mark.parametrize(
    "bad_item,field",
    [
        ({"text": "   "}, "messages.1.text"),
        ({"role": "robot", "text": "x"}, "messages.1.role"),
        ({"text": "x", "occurred_at": "yesterday"}, "messages.1.occurred_at"),
        ({"text": "x", "scope": "work"}, "messages.1.scope"),
    ],
)
def test_a_batch_with_one_bad_message_is_refused_whole(client, conversation, bad_item, field):
    batch = [{"text": "fine"}, bad_item, {"text": "also fine"}]

    response = post(client, f"/conversations/{conversation.pk}/messages", {"messages": batch})

    assert response.status_code == 400
    assert response.json()["error"]["field"] == field
    assert not Message.objects.exists()
    assert not AuditEvent.objects.filter(action="message.added").exists()


def test_listing_messages_pages_backwards_oldest_first(client, conversation, actor):
    messages = [
        message_add(conversation=conversation, role="user", text=f"m{i}", actor=actor)[0] for i in range(5)
    ]

    page = client.get(
        f"{API}/conversations/{conversation.pk}/messages", {"limit": 2, "before": messages[4].pk}
    )

    assert page.status_code == 200
    assert [m["text"] for m in page.json()["messages"]] == ["m2", "m3"]


def test_posting_a_response_writes_an_assistant_message(client, conversation):
    response = post(client, f"/conversations/{conversation.pk}/responses", {"text": "Porto is lovely."})

    assert response.status_code == 201
    message = Message.objects.get(pk=response.json()["id"])
    assert (message.role, message.text, message.conversation_id) == (
        "assistant",
        "Porto is lovely.",
        conversation.pk,
    )


def test_a_message_and_a_response_carry_their_speakers_names(client, conversation):
    said = post(client, f"/conversations/{conversation.pk}/messages", {"text": "I paint", "name": "Melanie"})
    replied = post(
        client, f"/conversations/{conversation.pk}/responses", {"text": "Lovely", "name": "Caroline"}
    )
    batch = post(
        client,
        f"/conversations/{conversation.pk}/messages",
        {"messages": [{"text": "Me too", "name": "Jon"}, {"text": "no name"}]},
    )

    assert (said.status_code, replied.status_code, batch.status_code) == (201, 201, 201)
    assert (said.json()["name"], replied.json()["name"]) == ("Melanie", "Caroline")
    assert [m["name"] for m in batch.json()["messages"]] == ["Jon", ""]
    assert list(conversation.messages.values_list("role", "name")) == [
        ("user", "Melanie"),
        ("assistant", "Caroline"),
        ("user", "Jon"),
        ("user", ""),
    ]
    listed = client.get(f"{API}/conversations/{conversation.pk}/messages").json()["messages"]
    assert [m["name"] for m in listed] == ["Melanie", "Caroline", "Jon", ""]


@pytest.mark.parametrize("name", [12, ["Melanie"], None, "M" * 65, "Ana\nSystem"])
@pytest.mark.parametrize(
    "path,body,field",
    [
        ("messages", {"text": "I paint"}, "name"),
        ("responses", {"text": "Lovely"}, "name"),
        ("messages", {"messages": [{"text": "fine"}, {"text": "I paint"}]}, "messages.1.name"),
    ],
)
def test_a_name_that_is_no_short_one_line_string_is_a_400_naming_it(
    client, conversation, name, path, body, field
):
    if "messages" in body:
        body["messages"][1]["name"] = name
    else:
        body["name"] = name

    response = post(client, f"/conversations/{conversation.pk}/{path}", body)

    assert response.status_code == 400
    assert response.json()["error"]["field"] == field
    assert not Message.objects.exists()


# --- profile ----------------------------------------------------------------------------------
def test_setting_a_fact_writes_it(client, app):
    body = {"key": "city", "value": "Lyon", "mode": "personal_assistant", "confidence": 0.8}

    response = post(client, "/subjects/alice/profile", body)

    assert response.status_code == 201
    fact = ProfileFact.objects.get(pk=response.json()["id"])
    assert fact.subject.app == app and fact.subject.external_id == "alice"
    assert (fact.key, fact.value, fact.mode, fact.pinned, fact.confidence) == (
        "city",
        "Lyon",
        "personal_assistant",
        True,
        0.8,
    )
    assert response.json()["active"] is True


def test_setting_the_same_fact_again_confirms_it_without_a_new_version(client, fact):
    response = post(client, "/subjects/alice/profile", {"key": "name", "value": "Alice"})

    assert response.status_code == 200
    assert ProfileFact.objects.count() == 1
    fact.refresh_from_db()
    assert fact.confirmations == 1


def test_setting_a_new_value_supersedes_the_active_fact(client, fact):
    response = post(client, "/subjects/alice/profile", {"key": "name", "value": "Alicia"})

    assert response.status_code == 201
    fact.refresh_from_db()
    assert fact.valid_to is not None and fact.superseded_by_id == response.json()["id"]
    assert ProfileFact.objects.get(valid_to=None).value == "Alicia"


def test_a_contextual_fact_is_stored_with_its_keywords(client):
    body = {"key": "allergy", "value": "peanuts", "pinned": False, "keywords": ["Food", "restaurant"]}

    response = post(client, "/subjects/alice/profile", body)

    assert response.status_code == 201
    assert ProfileFact.objects.get().keywords == ["food", "restaurant"]


def test_listing_the_profile_shows_only_active_facts(client, fact, subject, actor):
    fact_set(subject=subject, key="name", value="Alicia", actor=actor)
    fact_set(subject=subject, key="city", value="Lyon", actor=actor)

    response = client.get(f"{API}/subjects/alice/profile")

    assert response.status_code == 200
    assert sorted((f["key"], f["value"]) for f in response.json()["facts"]) == [
        ("city", "Lyon"),
        ("name", "Alicia"),
    ]


def test_removing_a_fact_closes_it_and_keeps_its_history(client, fact):
    response = client.delete(f"{API}/subjects/alice/profile/name")

    assert response.status_code == 200
    fact.refresh_from_db()
    assert fact.valid_to is not None
    assert not ProfileFact.objects.filter(valid_to=None).exists()
    assert client.delete(f"{API}/subjects/alice/profile/name").status_code == 404


def test_removing_a_fact_of_a_mode_leaves_the_plain_one(client, fact, subject, actor):
    fact_set(subject=subject, key="name", value="Ali", mode="companion", actor=actor)

    response = client.delete(f"{API}/subjects/alice/profile/name", QUERY_STRING="mode=companion")

    assert response.status_code == 200 and response.json()["mode"] == "companion"
    assert list(ProfileFact.objects.filter(valid_to=None).values_list("value", flat=True)) == ["Alice"]


def test_a_facts_history_lists_every_version_oldest_first(client, fact, subject, actor):
    fact_set(subject=subject, key="name", value="Alicia", actor=actor)

    response = client.get(f"{API}/subjects/alice/profile/name/history")

    assert response.status_code == 200
    versions = response.json()["versions"]
    assert [(v["value"], v["active"]) for v in versions] == [("Alice", False), ("Alicia", True)]
    assert versions[0]["superseded_by"] == versions[1]["id"]


def test_a_fact_key_with_spaces_and_colons_works_in_the_url(client):
    post(client, "/subjects/alice/profile", {"key": "home city: current", "value": "Lyon"})

    response = client.get(f"{API}/subjects/alice/profile/home%20city%3A%20current/history")

    assert response.status_code == 200
    assert response.json()["key"] == "home city: current"


# --- notes ------------------------------------------------------------------------------------
def test_storing_a_note_writes_it_its_first_version_and_its_source(client, app, conversation, actor):
    message, _ = message_add(conversation=conversation, role="user", text="my cat is Miso", actor=actor)
    body = {
        "content": "Alice's cat is called Miso",
        "tags": ["Pets"],
        "message": message.pk,
        "occurred_at": "2025-01-02T03:04:05Z",
    }

    response = post(client, "/subjects/alice/notes", body)

    assert response.status_code == 201 and response.json()["merged"] is False
    note = Note.objects.get(pk=response.json()["id"])
    assert note.subject.app == app
    assert (note.content, note.tags, note.conversation_id, note.source_message_id) == (
        "Alice's cat is called Miso",
        ["pets"],
        conversation.pk,
        message.pk,
    )
    assert note.occurred_at == datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    assert list(NoteVersion.objects.filter(note=note).values_list("version", flat=True)) == [1]
    assert NoteSource.objects.get(note=note).message_id == message.pk


def test_a_note_takes_its_scope_and_working_dir_from_the_conversation(client, subject, actor):
    conversation, _ = conversation_get_or_create(
        subject=subject, scope="work", working_dir="/src", actor=actor
    )

    response = post(
        client, "/subjects/alice/notes", {"content": "CI runs on Fridays", "conversation": conversation.pk}
    )

    note = Note.objects.get(pk=response.json()["id"])
    assert (note.scope, note.working_dir) == ("work", "/src")


def test_storing_a_near_duplicate_merges_it_and_writes_no_new_note(client, note):
    response = post(
        client, "/subjects/alice/notes", {"content": "alice's cat is called Miso!", "tags": ["pets"]}
    )

    assert response.status_code == 200
    assert response.json()["merged"] is True and response.json()["id"] == note.pk
    assert Note.objects.count() == 1


@pytest.mark.parametrize("field", ["scope", "working_dir"])
def test_storing_a_note_with_scope_in_the_body_is_refused(client, subject, field):
    response = post(client, "/subjects/alice/notes", {"content": "x", field: "work"})

    assert response.status_code == 400
    assert response.json()["error"]["field"] == field
    assert not Note.objects.exists()


def test_a_note_longer_than_4000_characters_is_refused(client, subject):
    response = post(client, "/subjects/alice/notes", {"content": "x" * 4001})

    assert response.status_code == 400
    assert response.json()["error"]["field"] == "content"
    assert "4000" in response.json()["error"]["message"]
    assert not Note.objects.exists()


def test_a_note_with_more_than_16_tags_is_refused(client, subject):
    response = post(client, "/subjects/alice/notes", {"content": "x", "tags": [f"t{i}" for i in range(17)]})

    assert response.status_code == 400
    assert response.json()["error"]["field"] == "tags"
    assert not Note.objects.exists()


def test_recalling_notes_finds_matches_and_counts_each_recall(client, memories):
    response = client.get(f"{API}/subjects/alice/notes", {"query": "sushi", "k": 5})

    assert response.status_code == 200
    found = [n["id"] for n in response.json()["notes"]]
    assert found == [memories[1].pk]
    assert response.json()["notes"][0]["score"] >= 0
    recalled = Note.objects.get(pk=memories[1].pk)
    assert recalled.recall_count == 1 and recalled.last_recalled_at is not None
    assert not Note.objects.exclude(pk=memories[1].pk).filter(recall_count__gt=0).exists()


def test_recalling_without_a_query_lists_the_newest_notes_filtered_by_tag_and_scope(
    client, subject, actor, config
):
    work, _ = conversation_get_or_create(subject=subject, scope="work", actor=actor)
    note_store(
        subject=subject,
        content="Deploys on Tuesday",
        tags=["ops"],
        conversation=work,
        actor=actor,
        config=config,
    )
    note_store(subject=subject, content="Rollbacks need approval", tags=["ops"], actor=actor, config=config)
    note_store(
        subject=subject,
        content="Lunch is at noon",
        tags=["food"],
        conversation=work,
        actor=actor,
        config=config,
    )

    response = client.get(f"{API}/subjects/alice/notes", {"tags": "OPS", "scope": "work"})

    assert [n["content"] for n in response.json()["notes"]] == ["Deploys on Tuesday"]


def test_reading_a_note_shows_its_versions_and_sources_and_counts_a_recall(client, note, actor, config):
    response = client.get(f"{API}/subjects/alice/notes/{note.pk}")

    assert response.status_code == 200
    data = response.json()
    assert data["content"] == "Alice's cat is called Miso"
    assert [v["version"] for v in data["versions"]] == [1]
    assert data["sources"] == []
    assert data["recall_count"] == 1
    note.refresh_from_db()
    assert note.recall_count == 1 and note.last_recalled_at is not None


def test_editing_a_note_writes_a_new_version(client, note):
    response = patch(client, f"/subjects/alice/notes/{note.pk}", {"content": "Alice's cat is called Mochi"})

    assert response.status_code == 200
    note.refresh_from_db()
    assert (note.content, note.version) == ("Alice's cat is called Mochi", 2)
    assert list(NoteVersion.objects.filter(note=note).values_list("version", "content")) == [
        (1, "Alice's cat is called Miso"),
        (2, "Alice's cat is called Mochi"),
    ]
    assert [v["version"] for v in response.json()["versions"]] == [1, 2]


def test_forgetting_a_note_deletes_it_and_its_versions(client, note):
    response = client.delete(f"{API}/subjects/alice/notes/{note.pk}")

    assert response.status_code == 204
    assert not Note.objects.exists() and not NoteVersion.objects.exists()
    assert client.get(f"{API}/subjects/alice/notes/{note.pk}").status_code == 404


# --- votes ------------------------------------------------------------------------------------
def test_a_vote_on_a_note_moves_its_score_and_is_recorded(client, note, api_key):
    response = post(client, "/subjects/alice/votes", {"item": f"n:{note.pk}", "signal": "useful"})

    assert response.status_code == 201
    data = response.json()
    assert (data["item"], data["signal"], data["delta"], data["score"]) == (
        f"n:{note.pk}",
        "useful",
        0.5,
        0.5,
    )
    note.refresh_from_db()
    assert note.vote_score == 0.5
    event = VoteEvent.objects.get(pk=data["id"])
    assert (event.item_kind, event.item_id, event.signal, event.actor) == (
        "note",
        note.pk,
        "useful",
        f"api_key:{api_key_prefix(api_key)}",
    )


def test_a_vote_on_a_fact_moves_its_score(client, fact):
    response = post(client, "/subjects/alice/votes", {"item": f"f:{fact.pk}", "signal": "down"})

    assert response.status_code == 201
    fact.refresh_from_db()
    assert fact.vote_score == -1.0


def test_a_score_stops_at_the_vote_limit(client, note):
    for _ in range(7):
        response = post(client, "/subjects/alice/votes", {"item": f"n:{note.pk}", "signal": "up"})

    assert response.json()["score"] == 5.0
    note.refresh_from_db()
    assert note.vote_score == 5.0
    assert VoteEvent.objects.count() == 7


def test_a_vote_on_a_missing_note_is_404_naming_the_item(client, subject):
    response = post(client, "/subjects/alice/votes", {"item": "n:99999", "signal": "up"})

    assert response.status_code == 404
    assert response.json()["error"]["field"] == "item"
    assert not VoteEvent.objects.exists()


# --- every write is audited ---------------------------------------------------------------------
WRITES = {
    "open a conversation": (
        "post",
        "/conversations",
        {"subject": "alice", "external_id": "new"},
        "conversation.created",
    ),
    "post a message": ("post", "/conversations/{conversation}/messages", {"text": "hi"}, "message.added"),
    "post a batch": (
        "post",
        "/conversations/{conversation}/messages",
        {"messages": [{"text": "hi"}]},
        "message.added",
    ),
    "post a response": (
        "post",
        "/conversations/{conversation}/responses",
        {"text": "hello"},
        "message.added",
    ),
    "set a fact": ("post", "/subjects/alice/profile", {"key": "city", "value": "Lyon"}, "fact.set"),
    "confirm a fact": (
        "post",
        "/subjects/alice/profile",
        {"key": "name", "value": "Alice"},
        "belief.revised",  # the person's REINFORCE (memory.services.beliefs.fact_set_by_person)
    ),
    "remove a fact": ("delete", "/subjects/alice/profile/name", None, "fact.removed"),
    "store a note": ("post", "/subjects/alice/notes", {"content": "Alice plays the cello"}, "note.stored"),
    "merge a note": (
        "post",
        "/subjects/alice/notes",
        {"content": "alice's cat is called miso", "tags": ["pets"]},
        "note.merged",
    ),
    "edit a note": ("patch", "/subjects/alice/notes/{note}", {"tags": ["cats"]}, "note.edited"),
    "forget a note": ("delete", "/subjects/alice/notes/{note}", None, "note.forgotten"),
    "cast a vote": ("post", "/subjects/alice/votes", {"item": "n:{note}", "signal": "up"}, "vote.cast"),
}


@pytest.mark.parametrize("name", WRITES)
def test_every_write_records_one_audit_event_naming_the_key(
    client, app, api_key, subject, conversation, note, fact, name
):
    method, path, body, action = WRITES[name]
    path = path.format(conversation=conversation.pk, note=note.pk)
    if body and "item" in body:
        body = {**body, "item": body["item"].format(note=note.pk)}
    before = set(AuditEvent.objects.values_list("pk", flat=True))

    response = getattr(client, method)(API + path, body, format="json")

    assert response.status_code < 300, response.content
    event = AuditEvent.objects.exclude(pk__in=before).get()
    assert event.action == action
    assert (event.actor_kind, event.actor_id) == ("api_key", api_key_prefix(api_key))
    assert (event.app_id, event.subject_id) == (app.pk, subject.pk)


# --- bad input: a 400 that names the field, and nothing written ------------------------------------
BAD_INPUT = [
    ("post", "/context", {"subject": "alice"}, "message"),
    ("post", "/context", {"subject": "alice", "message": "hi", "k": 0}, "k"),
    ("post", "/context", {"subject": "a/b", "message": "hi"}, "subject"),
    ("post", "/context", {"subject": "alice", "message": "hi", "conversaton": 1}, "conversaton"),
    ("get", "/conversations", None, "subject"),
    ("get", "/conversations?subject=alice&limit=0", None, "limit"),
    ("post", "/conversations", {"external_id": "x"}, "subject"),
    ("post", "/conversations", {"subject": "alice", "mode": "m" * 51}, "mode"),
    ("get", "/conversations/{conversation}/messages?limit=0", None, "limit"),
    ("post", "/conversations/{conversation}/messages", {"text": ""}, "text"),
    ("post", "/conversations/{conversation}/messages", {"text": "hi", "role": "robot"}, "role"),
    ("post", "/conversations/{conversation}/messages", {"messages": []}, "messages"),
    ("post", "/conversations/{conversation}/responses", {"text": "   "}, "text"),
    ("post", "/conversations/{conversation}/responses", {"text": "ok", "occurred_at": "soon"}, "occurred_at"),
    ("post", "/subjects/alice/profile", {"value": "Lyon"}, "key"),
    ("post", "/subjects/alice/profile", {"key": "bad/key", "value": "Lyon"}, "key"),
    ("post", "/subjects/alice/profile", {"key": "city", "value": "  "}, "value"),
    ("post", "/subjects/alice/profile", {"key": "city", "value": "Lyon", "pinned": False}, "keywords"),
    (
        "post",
        "/subjects/alice/profile",
        {"key": "city", "value": "x", "keywords": [f"k{i}" for i in range(17)]},
        "keywords",
    ),
    ("post", "/subjects/alice/profile", {"key": "city", "value": "x", "confidence": 2}, "confidence"),
    ("get", "/subjects/alice/notes?k=0", None, "k"),
    ("post", "/subjects/alice/notes", {"tags": ["x"]}, "content"),
    ("post", "/subjects/alice/notes", {"content": "x", "tags": ["ok", "no spaces!"]}, "tags.1"),
    ("post", "/subjects/alice/notes", {"content": "x", "tags": ["t" * 51]}, "tags.0"),
    ("post", "/subjects/alice/notes", {"content": "x", "occurred_at": "tomorrow"}, "occurred_at"),
    ("patch", "/subjects/alice/notes/{note}", {}, "content"),
    ("patch", "/subjects/alice/notes/{note}", {"content": "x" * 4001}, "content"),
    ("patch", "/subjects/alice/notes/{note}", {"tags": [f"t{i}" for i in range(17)]}, "tags"),
    ("post", "/subjects/alice/votes", {"item": "note 3", "signal": "up"}, "item"),
    ("post", "/subjects/alice/votes", {"item": "n:{note}", "signal": "love"}, "signal"),
]


@pytest.mark.parametrize("method,path,body,field", BAD_INPUT, ids=lambda v: v if isinstance(v, str) else None)
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(
    client, subject, conversation, note, method, path, body, field
):
    path = path.format(conversation=conversation.pk, note=note.pk)
    if body and "item" in body:
        body = {**body, "item": body["item"].format(note=note.pk)}
    counts = [
        m.objects.count()
        for m in (
            Subject,
            Conversation,
            Message,
            Note,
            NoteVersion,
            ProfileFact,
            VoteEvent,
            RetrievalEvent,
            AuditEvent,
        )
    ]

    response = (
        getattr(client, method)(API + path, body, format="json")
        if body is not None
        else (getattr(client, method)(API + path))
    )

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("invalid", field)
    assert field in error["fields"] and error["message"]
    assert counts == [
        m.objects.count()
        for m in (
            Subject,
            Conversation,
            Message,
            Note,
            NoteVersion,
            ProfileFact,
            VoteEvent,
            RetrievalEvent,
            AuditEvent,
        )
    ]


def test_a_body_that_is_not_json_is_a_400(client, subject):
    response = client.post(f"{API}/subjects/alice/notes", "{not json", content_type="application/json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


# --- the OpenAPI schema and its docs page ----------------------------------------------------------
def test_the_openapi_schema_describes_every_sidecar_endpoint_and_the_bearer_key(db):
    response = APIClient().get("/api/schema/", {"format": "json"})

    assert response.status_code == 200
    schema = response.json()
    expected = {
        "/api/v1/" + str(p.pattern).replace("<int:", "{").replace("<str:", "{").replace(">", "}")
        for p in api_urls.urlpatterns
    }
    assert expected <= set(schema["paths"])
    assert schema["components"]["securitySchemes"]["ApiKey"] == {"type": "http", "scheme": "bearer"}
    assert "ContextInputRequest" in schema["components"]["schemas"]


def test_the_openapi_schema_builds_without_warnings(db, tmp_path):  # db: the category enum is read
    call_command("spectacular", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))

    assert "/api/v1/context" in (tmp_path / "schema.yaml").read_text()


def test_the_docs_page_renders_with_local_assets_and_no_cdn(db):
    response = APIClient().get("/api/docs/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "SwaggerUIBundle" in html
    for cdn in ("cdn.", "jsdelivr", "unpkg", "cdnjs", "//fonts."):
        assert cdn not in html
    assets = [p for p in html.replace('"', " ").split() if p.startswith("/static/")]
    assert any(a.endswith("swagger-ui-bundle.js") for a in assets)
    for asset in assets:
        assert finders.find(asset.removeprefix("/static/")), asset


def test_timestamps_come_back_in_utc_iso_format(client, conversation):
    response = post(client, f"/conversations/{conversation.pk}/messages", {"text": "hi"})

    occurred = datetime.datetime.fromisoformat(response.json()["occurred_at"])
    assert response.json()["occurred_at"].endswith("Z") and occurred.utcoffset() == datetime.timedelta(0)
    assert abs(occurred - timezone.now()) < datetime.timedelta(minutes=1)


def test_a_body_that_is_not_an_object_is_refused_naming_the_body(client, subject):
    response = client.post("/api/v1/subjects/alice/notes", [1, 2], format="json")

    assert response.status_code == 400
    assert response.json()["error"]["field"] == "body"


def test_an_unknown_api_path_answers_json_404(client):
    response = client.get("/api/v1/subjects/alice/notes/not-a-number")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_the_openapi_schema_describes_each_context_block_with_what_it_left_out(client):
    schema = client.get("/api/schema/", {"format": "json"}).json()

    block = schema["components"]["schemas"]["ContextBlockOut"]
    context = schema["paths"]["/api/v1/context"]["post"]["responses"]["200"]["content"]["application/json"]
    assert block["properties"]["omitted"]["type"] == "integer" and "omitted" in block["required"]
    assert context["schema"] == {"$ref": "#/components/schemas/ContextOut"}
