"""Dashboard: the Modes page (every known mode, what it does, its policy) and the context
preview's mode selector."""

from django.urls import reverse

from tests.dashboard_helpers import hx
from tests.factories import ConversationFactory, FactFactory, NoteFactory
from tests.modes_support import mode_manifest, write_manifest
from tests.support import database_rows

MODES = reverse("dashboard:modes")


def preview_url(subject):
    return reverse("dashboard:preview", args=[subject.pk])


def test_the_modes_page_lists_every_mode_with_its_summary_and_policy(owned_subject, owner_client):
    response = owner_client.get(MODES)

    assert response.status_code == 200
    body = response.content.decode()
    names = [row["mode"].name for row in response.context["rows"]]
    assert names[0] == "general_qa" and len(names) == 7
    assert 'id="mode-coding_debug"' in body and "Coding and debugging" in body
    assert "Never reaches other projects&#x27; memories" in body  # coding_debug's summary
    coding = next(r for r in response.context["rows"] if r["mode"].name == "coding_debug")
    assert coding["policy"]["scopes"] == ["own scope", "unscoped"]
    assert ("procedures", 500) in coding["policy"]["sections"]
    assert "Section caps (tokens)" in body and "Privacy ceiling" in body


def test_the_modes_page_shows_a_custom_mode_as_custom(owned_subject, owner_client, modes_dir):
    write_manifest(modes_dir, mode_manifest())

    response = owner_client.get(MODES)

    body = response.content.decode()
    assert 'id="mode-ops_review"' in body
    ops = next(r for r in response.context["rows"] if r["mode"].name == "ops_review")
    assert ops["mode"].builtin is False
    assert "health, relationships (when approved)" in body
    assert ("procedures", 0) in ops["policy"]["sections"]


def test_the_modes_page_shows_no_subject_data_and_writes_nothing(owned_subject, stranger_client):
    FactFactory(subject=owned_subject, key="name", value="Alicia Secretname")
    before = database_rows()

    response = stranger_client.get(MODES)

    assert response.status_code == 200
    assert b"Secretname" not in response.content
    assert response.context["subject"] is None
    assert database_rows() == before


def test_the_modes_page_is_linked_from_the_nav(owned_subject, owner_client):
    response = owner_client.get(reverse("dashboard:overview", args=[owned_subject.pk]))

    assert f'href="{MODES}"'.encode() in response.content


def test_the_preview_builds_in_the_chosen_mode(owned_subject, owner_client):
    NoteFactory(subject=owned_subject, content="Alice deploys the api with make deploy")

    response = owner_client.get(
        preview_url(owned_subject), {"message": "how do I deploy", "mode": "coding_debug"}
    )

    assert response.status_code == 200
    assert response.context["result"]["mode"] == "coding_debug"
    procedures = next(b for b in response.context["blocks"] if b["name"] == "procedures")
    assert procedures["cap"] == 500  # coding_debug's cap, not the app's
    assert b"Built in mode" in response.content


def test_the_preview_without_a_mode_takes_the_conversations(owned_subject, owner_client):
    conversation = ConversationFactory(subject=owned_subject, mode="brainstorm")

    response = owner_client.get(
        preview_url(owned_subject), {"message": "ideas", "conversation": conversation.pk}
    )

    assert response.context["result"]["mode"] == "brainstorm"


def test_the_preview_offers_only_known_modes(owned_subject, owner_client, modes_dir):
    write_manifest(modes_dir, mode_manifest())

    response = owner_client.get(preview_url(owned_subject))

    offered = [value for value, _ in response.context["form"].fields["mode"].choices]
    assert offered[0] == "" and set(offered[1:]) >= {"general_qa", "coding_debug", "ops_review"}
    assert b'<option value="ops_review">' in response.content


def test_an_unknown_mode_in_the_preview_is_a_clear_error(owned_subject, owner_client):
    response = hx(owner_client, "GET", preview_url(owned_subject), {"message": "hello", "mode": "karaoke"})

    assert response.status_code == 400
    assert b"There is no mode karaoke" in response.content
    assert b'data-field="mode"' in response.content


def test_an_apps_unknown_default_mode_is_a_clear_error_in_the_preview(owned_subject, owner_client):
    app = owned_subject.app
    app.config = {"memory": {"modes": {"default": "karaoke"}}}
    app.save()

    response = owner_client.get(preview_url(owned_subject), {"message": "hello"})

    assert response.status_code == 400
    assert b"karaoke" in response.content
