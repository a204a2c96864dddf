"""Assistant modes over REST: the list and one mode, and a mode named anywhere it is set (a
conversation, the context call's override, a fact's or a note's qualifier) must be a known one."""

import pytest

from memory.models import Conversation, Note, ProfileFact
from memory.modes import mode_of
from memory.services import note_store
from memory.services.conversations import conversation_get_or_create
from memoryweb.errors import InvalidInput
from tests.factories import ConversationFactory
from tests.modes_support import mode_manifest, write_manifest

API = "/api/v1"
BUILTIN = {
    "general_qa",
    "coding_debug",
    "research_deep_dive",
    "companion",
    "brainstorm",
    "biographical_interview",
    "personal_assistant",
}
FIELDS = {
    "name",
    "title",
    "description",
    "builtin",
    "default",
    "scopes",
    "preferredKinds",
    "privacyCeiling",
    "sections",
    "retrieval",
    "applicability",
    "renders",
    "summary",
}


def post(api_client, path, body):
    return api_client.post(API + path, body, format="json")


def _refused(response, field):
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["field"] == field
    return error


# --- GET /modes, GET /modes/<name> --------------------------------------------------------
def test_the_list_holds_every_builtin_mode_the_default_first(client):
    response = client.get(f"{API}/modes")

    assert response.status_code == 200
    modes = response.json()["modes"]
    assert {m["name"] for m in modes} == BUILTIN
    assert modes[0]["name"] == "general_qa" and modes[0]["default"] is True
    assert [m["default"] for m in modes[1:]] == [False] * 6
    assert all(set(m) == FIELDS and m["builtin"] for m in modes)


def test_the_list_puts_the_apps_own_default_first(client, app):
    app.config = {"memory": {"modes": {"default": "brainstorm"}}}
    app.save()

    modes = client.get(f"{API}/modes").json()["modes"]

    assert modes[0]["name"] == "brainstorm" and modes[0]["default"] is True
    assert next(m for m in modes if m["name"] == "general_qa")["default"] is False


def test_one_mode_is_its_manifest_with_a_summary(client):
    response = client.get(f"{API}/modes/coding_debug")

    assert response.status_code == 200
    body = response.json()
    assert set(body) == FIELDS
    assert body["scopes"] == ["same", "unscoped"]
    assert body["sections"]["memory-index"] == 300
    assert body["privacyCeiling"] == {"allow": []}
    assert "never reaches other projects' memories" in body["summary"]
    assert "no sensitive category renders, even when approved" in body["summary"]


def test_an_unknown_mode_is_404_naming_it(client):
    response = client.get(f"{API}/modes/karaoke")

    assert response.status_code == 404
    error = response.json()["error"]
    assert error["field"] == "mode" and "karaoke" in error["message"]


def test_a_custom_mode_is_listed_as_not_builtin(client, modes_dir):
    write_manifest(modes_dir, mode_manifest())

    modes = {m["name"]: m for m in client.get(f"{API}/modes").json()["modes"]}
    one = client.get(f"{API}/modes/ops_review").json()

    assert len(modes) == 8
    assert modes["ops_review"]["builtin"] is False and one["builtin"] is False
    assert one["privacyCeiling"] == {"allow": ["health", "relationships"]}
    assert (
        "health, relationships may render when approved; other sensitive categories never do"
        in one["summary"]
    )
    assert "no procedures section" in one["summary"]
    assert "reaches other projects' memories" in one["summary"]
    # a manifest that leaves out the optional `consequences` renders them (the default)
    assert "consequences" not in mode_manifest()["renders"] and one["renders"]["consequences"] is True


def test_the_builtin_modes_say_where_the_person_sections_render(client):
    modes = {m["name"]: m for m in client.get(f"{API}/modes").json()["modes"]}

    assert modes["coding_debug"]["renders"]["contract"] is True
    assert modes["coding_debug"]["renders"]["consequences"] is True
    assert modes["companion"]["renders"]["consequences"] is False
    assert modes["brainstorm"]["renders"]["contract"] is False


def test_a_custom_mode_named_like_a_builtin_replaces_it_in_the_list(client, modes_dir):
    write_manifest(modes_dir, mode_manifest(name="companion", title="Our companion"))

    modes = [m for m in client.get(f"{API}/modes").json()["modes"] if m["name"] == "companion"]

    assert len(modes) == 1
    assert (modes[0]["title"], modes[0]["builtin"]) == ("Our companion", False)


# --- conversations -----------------------------------------------------------------------
def test_opening_a_conversation_in_an_unknown_mode_is_refused_naming_mode(client):
    error = _refused(post(client, "/conversations", {"subject": "alice", "mode": "karaoke"}), "mode")

    assert "karaoke" in error["message"]
    assert not Conversation.objects.exists()


def test_opening_a_conversation_in_a_known_or_no_mode_works(client):
    known = post(client, "/conversations", {"subject": "alice", "mode": "companion"})
    plain = post(client, "/conversations", {"subject": "alice", "mode": ""})

    assert (known.status_code, plain.status_code) == (201, 201)
    assert sorted(Conversation.objects.values_list("mode", flat=True)) == ["", "companion"]


def test_opening_a_conversation_in_a_custom_mode_works(client, modes_dir):
    write_manifest(modes_dir, mode_manifest())

    response = post(client, "/conversations", {"subject": "alice", "mode": "ops_review"})

    assert response.status_code == 201
    assert Conversation.objects.get().mode == "ops_review"


def test_the_service_refuses_an_unknown_mode_too(subject, actor):
    with pytest.raises(InvalidInput) as error:
        conversation_get_or_create(subject=subject, external_id="c", mode="karaoke", actor=actor)

    assert error.value.field == "mode"
    assert not Conversation.objects.exists()


def test_a_stored_label_no_mode_knows_reads_as_the_default(subject):
    conversation = ConversationFactory(subject=subject, mode="coach")

    assert mode_of(conversation).name == "general_qa"


# --- the context's override --------------------------------------------------------------
def test_the_context_in_an_unknown_mode_is_refused_naming_mode(client):
    response = post(client, "/context", {"subject": "alice", "message": "hello", "mode": "karaoke"})

    error = _refused(response, "mode")
    assert "karaoke" in error["message"]


def test_the_context_in_a_known_mode_says_so(client):
    response = post(client, "/context", {"subject": "alice", "message": "hello", "mode": "brainstorm"})

    assert response.status_code == 200 and response.json()["mode"] == "brainstorm"


# --- facts -------------------------------------------------------------------------------
def test_a_fact_qualified_by_an_unknown_mode_is_refused_naming_mode(client):
    response = post(client, "/subjects/alice/profile", {"key": "city", "value": "Lyon", "mode": "karaoke"})

    _refused(response, "mode")
    assert not ProfileFact.objects.exists()


def test_a_fact_qualified_by_a_known_mode_is_stored_with_it(client):
    response = post(client, "/subjects/alice/profile", {"key": "city", "value": "Lyon", "mode": "companion"})

    assert response.status_code == 201 and response.json()["mode"] == "companion"
    assert ProfileFact.objects.get().mode == "companion"


# --- notes -------------------------------------------------------------------------------
def test_a_note_qualified_by_a_known_mode_is_stored_with_it(client):
    response = post(
        client, "/subjects/alice/notes", {"content": "Alice journals every night", "mode": "companion"}
    )

    assert response.status_code == 201
    assert response.json()["mode"] == "companion"
    assert Note.objects.get(pk=response.json()["id"]).mode == "companion"


def test_a_note_without_a_mode_is_unqualified(client):
    response = post(client, "/subjects/alice/notes", {"content": "Alice journals every night"})

    assert response.status_code == 201 and response.json()["mode"] == ""
    assert Note.objects.get().mode == ""


def test_a_note_qualified_by_an_unknown_mode_is_refused_naming_mode(client):
    response = post(
        client, "/subjects/alice/notes", {"content": "Alice journals every night", "mode": "karaoke"}
    )

    _refused(response, "mode")
    assert not Note.objects.exists()


@pytest.mark.parametrize("mode", [1, True, ["companion"]])
def test_a_note_mode_that_is_not_a_string_is_refused(client, mode):
    response = post(client, "/subjects/alice/notes", {"content": "Alice journals every night", "mode": mode})

    _refused(response, "mode")


CONTENT = "Alice keeps a gratitude journal and writes in it every night before bed"


def test_a_qualified_note_is_not_merged_into_the_same_unqualified_one(subject, actor, config):
    plain, _ = note_store(subject=subject, content=CONTENT, actor=actor, config=config)

    qualified, created = note_store(
        subject=subject, content=CONTENT, mode="companion", actor=actor, config=config
    )

    assert created and qualified.pk != plain.pk
    assert sorted(Note.objects.values_list("mode", flat=True)) == ["", "companion"]


def test_an_unqualified_note_is_not_merged_into_the_same_qualified_one(subject, actor, config):
    qualified, _ = note_store(subject=subject, content=CONTENT, mode="companion", actor=actor, config=config)

    plain, created = note_store(subject=subject, content=CONTENT, actor=actor, config=config)

    assert created and plain.pk != qualified.pk


def test_the_same_note_in_the_same_mode_is_merged(subject, actor, config):
    first, _ = note_store(subject=subject, content=CONTENT, mode="companion", actor=actor, config=config)

    again, created = note_store(
        subject=subject, content=CONTENT, mode="companion", actor=actor, config=config
    )

    assert not created and again.pk == first.pk
    assert Note.objects.count() == 1


def test_a_notes_scope_still_comes_from_its_conversation(client, subject, actor):
    conversation, _ = conversation_get_or_create(
        subject=subject, external_id="c1", mode="coding_debug", scope="api", actor=actor
    )

    response = post(
        client,
        "/subjects/alice/notes",
        {"content": "The api deploys on Tuesdays", "conversation": conversation.pk, "mode": "coding_debug"},
    )

    assert response.status_code == 201
    assert (response.json()["scope"], response.json()["mode"]) == ("api", "coding_debug")
