"""Dashboard: the context preview — what the model would get, recorded nowhere."""

from django.urls import reverse

from memory.models import ContextDelivery, Note, RetrievalEvent
from tests.dashboard_helpers import hx
from tests.factories import ConversationFactory, FactFactory, MessageFactory, NoteFactory


def url(subject):
    return reverse("dashboard:preview", args=[subject.pk])


def test_the_preview_shows_both_halves_with_items_scores_and_tokens(owned_subject, owner_client):
    FactFactory(subject=owned_subject, key="name", value="Alice")
    note = NoteFactory(subject=owned_subject, content="Alice is training for the Lisbon half marathon")
    response = owner_client.get(url(owned_subject), {"message": "How is my marathon training going?"})
    body = response.content.decode()
    assert response.status_code == 200
    result = response.context["result"]
    assert result["stable_prefix"].startswith("## Memory")
    assert "### profile\n- name: Alice" in result["tail"]
    assert f"[n:{note.pk} ·" in result["tail"]
    chosen = {item["id"]: item for item in result["items"]}
    assert chosen[f"n:{note.pk}"]["section"] == "recalled"
    assert chosen[f"n:{note.pk}"]["reason"].startswith("matched")
    assert "### recalled" in body and "Stable prefix" in body
    assert reverse("dashboard:note_detail", args=[owned_subject.pk, note.pk]) in body
    recalled = next(b for b in response.context["blocks"] if b["name"] == "recalled")
    assert recalled["tokens"] > 0 and recalled["cap"] == 400
    assert f"{recalled['tokens']} / 400 tokens" in body
    # each item's applicability breakdown, as the selection scored it
    breakdown = chosen[f"n:{note.pk}"]["applicability"]
    assert f"applicability {breakdown['applicability']:.3f} · judged by heuristic" in body
    assert "<dt>task fit</dt>" in body and "<dt>contradiction penalty</dt>" in body


def test_a_preview_records_nothing(owned_subject, owner_client):
    note = NoteFactory(subject=owned_subject, content="Alice is training for the Lisbon half marathon")
    conversation = ConversationFactory(subject=owned_subject)
    owner_client.get(url(owned_subject), {"message": "marathon training", "conversation": conversation.pk})
    note.refresh_from_db()
    assert RetrievalEvent.objects.count() == 0
    assert note.recall_count == 0 and note.last_recalled_at is None
    assert not ContextDelivery.objects.exists()


def test_the_preview_is_a_fragment_for_htmx(owned_subject, owner_client):
    response = hx(owner_client, "GET", url(owned_subject), {"message": "hello there"})
    assert response.status_code == 200
    assert response.content.lstrip().startswith(b'<div id="preview-result"')
    assert b"<html" not in response.content


def test_k_changes_how_many_notes_are_recalled_in_full(owned_subject, owner_client):
    for i in range(4):
        NoteFactory(subject=owned_subject, content=f"Alice likes hiking trail number {i}")
    response = owner_client.get(url(owned_subject), {"message": "hiking trails", "k": 1})
    sections = [item["section"] for item in response.context["result"]["items"]]
    assert sections.count("recalled") == 1
    assert sections.count("memory-index") == 3


def test_a_conversation_expands_a_short_follow_up_from_its_history(owned_subject, owner_client):
    conversation = ConversationFactory(subject=owned_subject)
    MessageFactory(conversation=conversation, text="I want to plan the Lisbon marathon")
    response = owner_client.get(url(owned_subject), {"message": "and that?", "conversation": conversation.pk})
    result = response.context["result"]
    assert "lisbon" in result["rewritten_query"].lower()
    assert b"Searched as" in response.content


def test_an_empty_message_is_a_400_naming_the_field(owned_subject, owner_client):
    response = hx(owner_client, "GET", url(owned_subject), {"message": "   "})
    assert response.status_code == 400
    assert b'data-field="message"' in response.content


def test_a_bad_k_is_a_400_naming_the_field(owned_subject, owner_client):
    response = hx(owner_client, "GET", url(owned_subject), {"message": "hi", "k": "0"})
    assert response.status_code == 400
    assert b'data-field="k"' in response.content


def test_another_subjects_conversation_is_refused(owned_subject, stranger_subject, owner_client):
    theirs = ConversationFactory(subject=stranger_subject)
    response = hx(owner_client, "GET", url(owned_subject), {"message": "hi", "conversation": theirs.pk})
    assert response.status_code == 400
    assert b'data-field="conversation"' in response.content
    assert b"no such conversation in this memory" in response.content


def test_the_preview_never_shows_another_subjects_notes(owned_subject, stranger_subject, owner_client):
    NoteFactory(subject=stranger_subject, content="Bob is training for the Lisbon marathon")
    response = owner_client.get(url(owned_subject), {"message": "Lisbon marathon"})
    assert response.context["result"]["items"] == []
    assert b"Bob" not in response.content
    assert b"No note matches the words of the message." in response.content


def test_the_empty_page_says_what_to_do(owned_subject, owner_client):
    response = owner_client.get(url(owned_subject))
    assert response.status_code == 200
    assert b"Type a message above." in response.content


def test_memory_turned_off_says_so(owned_subject, owner_client):
    owned_subject.app.config = {"memory": {"notes": {"enabled": False}}}
    owned_subject.app.save(update_fields=["config"])
    response = owner_client.get(url(owned_subject), {"message": "anything"})
    assert b"Memory is turned off for this app." in response.content


def test_another_persons_preview_is_a_404(owned_subject, stranger_client):
    NoteFactory(subject=owned_subject, content="Alice's secret marathon")
    response = stranger_client.get(url(owned_subject), {"message": "marathon"})
    assert response.status_code == 404
    assert Note.objects.get().recall_count == 0


def test_the_preview_says_each_items_layer_and_what_a_mirror_unit_stands_for(owned_subject, owner_client):
    from memory.models import Evidence

    FactFactory(subject=owned_subject, key="name", value="Alice")
    conversation = ConversationFactory(subject=owned_subject)
    message = MessageFactory(conversation=conversation, text="the place by the river with the green door")
    unit = Evidence.objects.create(
        subject=owned_subject,
        conversation=conversation,
        message=message,
        role="user",
        text=message.text,
        occurred_at=message.occurred_at,
    )
    note = NoteFactory(
        subject=owned_subject, content="Alice's favourite bakery is by the river", source_message=message
    )
    Note.objects.filter(pk=note.pk).update(confidence=0.3)

    response = owner_client.get(url(owned_subject), {"message": "which bakery does Alice like?"})

    body = response.content.decode()
    chosen = {item["id"]: item for item in response.context["result"]["items"]}
    assert chosen[f"n:{note.pk}"]["layer"] == "belief" and 'data-layer="belief"' in body
    assert chosen[f"e:{unit.pk}"]["layer"] == "evidence" and 'data-layer="evidence"' in body
    assert chosen[f"e:{unit.pk}"]["mirror_of"] == f"n:{note.pk}"
    assert f"evidence for n:{note.pk}</span>" in body
