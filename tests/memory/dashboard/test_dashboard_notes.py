"""The notes page (search as you type, filters, vote, forget) and the note detail page
(provenance, links both ways, recall stats, lesson, edit as a new version)."""

import pytest
from django.urls import reverse
from django.utils import timezone

from memory.config import get_config
from memory.models import (
    AuditEvent,
    Lesson,
    Note,
    NoteLink,
    NoteSource,
    NoteVersion,
    RetrievalEvent,
    VoteEvent,
)
from memory.services import Actor, vote_cast
from tests.dashboard_helpers import hx
from tests.factories import ConversationFactory, MessageFactory, NoteFactory

pytestmark = pytest.mark.django_db


def _notes_url(subject):
    return reverse("dashboard:notes", args=[subject.pk])


def _url(name, note):
    return reverse(name, args=[note.subject_id, note.pk])


def _ids(response):
    return [note.pk for note, _ in response.context["results"]]


@pytest.fixture
def notes(owned_subject, stranger_subject):
    s = owned_subject
    lesson = Lesson.objects.create(subject=s, text="Alice keeps a weekly running routine.")
    made = {
        "marathon": NoteFactory(
            subject=s, content="Alice trains for the Lisbon half marathon", tags=["running"]
        ),
        "sunday": NoteFactory(
            subject=s, content="Alice runs along the river on Sundays", tags=["running", "routine"]
        ),
        "doctor": NoteFactory(
            subject=s,
            content="Alice sees her doctor about her knee",
            tags=["health"],
            category="health",
            scope="work",
        ),
        "archived": NoteFactory(
            subject=s,
            content="Alice ran a 10k race in March",
            tags=["running"],
            archived_at=timezone.now(),
            consolidated_into=lesson,
        ),
    }
    NoteFactory(subject=stranger_subject, content="Bob trains for a marathon too", tags=["running"])
    return made


def test_search_as_you_type_answers_the_matching_notes_as_a_fragment(notes, owned_subject, owner_client):
    response = hx(owner_client, "GET", _notes_url(owned_subject), {"q": "marathon"})
    assert response.status_code == 200
    assert _ids(response) == [notes["marathon"].pk]  # not Bob's, not the archived one
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="note-results"')
    assert "<html" not in html


def test_the_search_box_searches_on_input_after_a_pause(owned_subject, owner_client):
    html = owner_client.get(_notes_url(owned_subject)).content.decode()
    assert 'hx-trigger="input changed delay:300ms, search"' in html
    assert 'hx-target="#note-results"' in html and 'hx-push-url="true"' in html


def test_without_a_query_notes_are_listed_newest_first(notes, owned_subject, owner_client):
    response = owner_client.get(_notes_url(owned_subject))
    assert response.status_code == 200
    assert set(_ids(response)) == {notes["marathon"].pk, notes["sunday"].pk, notes["doctor"].pk}
    assert response.context["total"] == 3


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"tags": "routine"}, ["sunday"]),
        ({"tags": "running, routine"}, ["sunday"]),
        ({"scope": "work"}, ["doctor"]),
        ({"category": "health"}, ["doctor"]),
        ({"category": "none"}, ["marathon", "sunday"]),
        ({"archived": "archived"}, ["archived"]),
        ({"archived": "all", "tags": "running"}, ["marathon", "sunday", "archived"]),
        ({"q": "river race", "archived": "all"}, ["sunday", "archived"]),
        ({"q": "alice", "category": "health"}, ["doctor"]),
    ],
)
def test_filters(params, expected, notes, owned_subject, owner_client):
    response = hx(owner_client, "GET", _notes_url(owned_subject), params)
    assert response.status_code == 200
    assert set(_ids(response)) == {notes[name].pk for name in expected}


@pytest.mark.parametrize(
    "params, field",
    [
        ({"archived": "deleted"}, "archived"),
        ({"tags": 'a"b'}, "tags"),
        ({"page": "x"}, "page"),
        ({"category": "nope"}, "category"),
    ],
)
def test_bad_filters_answer_400_naming_the_field(params, field, notes, owned_subject, owner_client):
    response = hx(owner_client, "GET", _notes_url(owned_subject), params)
    assert response.status_code == 400
    assert f'data-field="{field}"' in response.content.decode()


def test_no_match_and_no_notes_say_what_to_do(
    notes, owned_subject, stranger_subject, stranger_client, owner_client
):
    html = hx(owner_client, "GET", _notes_url(owned_subject), {"q": "chess"}).content.decode()
    assert "No note matches." in html and "Clear search and filters" in html
    Note.objects.filter(subject=owned_subject).delete()
    html = owner_client.get(_notes_url(owned_subject)).content.decode()
    assert "No notes yet." in html


def test_pages_of_results(owned_subject, owner_client):
    for i in range(30):
        NoteFactory(subject=owned_subject, content=f"note number {i}")
    first = owner_client.get(_notes_url(owned_subject))
    assert len(first.context["results"]) == 25 and first.context["has_next"]
    second = hx(owner_client, "GET", _notes_url(owned_subject), {"page": 2})
    assert len(second.context["results"]) == 5 and not second.context["has_next"]
    assert set(_ids(first)).isdisjoint(_ids(second))


def test_vote_up_moves_the_score_and_records_who_voted(notes, owner, owner_client):
    note = notes["marathon"]
    response = hx(owner_client, "POST", _url("dashboard:note_vote", note), {"signal": "up"})
    assert response.status_code == 200
    note.refresh_from_db()
    assert note.vote_score == 1.0
    vote = VoteEvent.objects.get(item_kind="note", item_id=note.pk)
    assert (vote.signal, vote.actor) == ("up", f"user:{owner.username}")
    html = response.content.decode()
    assert html.lstrip().startswith(f'<div class="vote" id="vote-{note.pk}">') and "1.00" in html


def test_vote_down(notes, owner_client):
    note = notes["sunday"]
    hx(owner_client, "POST", _url("dashboard:note_vote", note), {"signal": "down"})
    note.refresh_from_db()
    assert note.vote_score == -1.0


def _pressed(html: str) -> dict[str, bool]:
    """Which vote buttons the fragment shows pressed."""
    return {
        signal: f'value="{signal}" class="btn btn-small btn-icon" aria-pressed="true"' in html
        for signal in ("up", "down")
    }


def test_a_persons_vote_is_one_vote_they_change_or_withdraw(notes, owner_client):
    note = notes["marathon"]
    url = _url("dashboard:note_vote", note)

    def vote(signal):
        html = hx(owner_client, "POST", url, {"signal": signal}).content.decode()
        note.refresh_from_db()
        return note.vote_score, _pressed(html)

    assert vote("up") == (1.0, {"up": True, "down": False})
    assert vote("up") == (0.0, {"up": False, "down": False})  # the same button again withdraws it
    assert vote("up") == (1.0, {"up": True, "down": False})
    assert vote("down") == (-1.0, {"up": False, "down": True})  # the other one changes it
    assert vote("down") == (0.0, {"up": False, "down": False})


def test_the_page_shows_which_vote_is_yours_and_an_apps_signals_still_add_up(
    notes, owned_subject, owner_client
):
    note = notes["marathon"]
    hx(owner_client, "POST", _url("dashboard:note_vote", note), {"signal": "down"})
    for _ in range(2):  # an app's signals are signals: each one counts
        vote_cast(
            subject=owned_subject,
            item_kind="note",
            item_id=note.pk,
            signal="up",
            actor=Actor.system("app"),
            config=get_config(owned_subject.app),
        )
    note.refresh_from_db()
    assert note.vote_score == 1.0
    detail = owner_client.get(reverse("dashboard:note_detail", args=[owned_subject.pk, note.pk]))
    assert _pressed(detail.content.decode()) == {"up": False, "down": True}


def test_a_bad_vote_signal_is_400_and_nothing_is_recorded(notes, owner_client):
    note = notes["marathon"]
    response = hx(owner_client, "POST", _url("dashboard:note_vote", note), {"signal": "useful!"})
    assert response.status_code == 400
    assert 'data-field="signal"' in response.content.decode()
    assert not VoteEvent.objects.exists()


def test_vote_without_javascript_goes_back_where_it_came_from(notes, owned_subject, owner_client):
    note = notes["marathon"]
    back = _notes_url(owned_subject) + "?q=marathon"
    response = owner_client.post(_url("dashboard:note_vote", note), {"signal": "up", "next": back})
    assert response.status_code == 302 and response["Location"] == back
    evil = owner_client.post(
        _url("dashboard:note_vote", note), {"signal": "up", "next": "https://evil.example/"}
    )
    assert evil["Location"] == _url("dashboard:note_detail", note)


def test_forget_from_the_list_removes_the_note_and_its_row(notes, owner_client):
    note = notes["doctor"]
    response = hx(owner_client, "POST", _url("dashboard:note_forget", note))
    assert response.status_code == 200
    assert not Note.objects.filter(pk=note.pk).exists()
    assert not NoteVersion.objects.filter(note_id=note.pk).exists()
    assert AuditEvent.objects.filter(action="note.forgotten", object_id=str(note.pk)).exists()
    assert f"Forgot note {note.pk}" in response.content.decode()


def test_forget_from_the_detail_page_returns_to_the_list(notes, owned_subject, owner_client):
    note = notes["doctor"]
    response = owner_client.post(_url("dashboard:note_forget", note))
    assert response.status_code == 302 and response["Location"] == _notes_url(owned_subject)
    assert not Note.objects.filter(pk=note.pk).exists()


def test_edit_writes_a_new_version_and_keeps_the_old_text(notes, owner_client):
    note = notes["sunday"]
    response = hx(
        owner_client,
        "POST",
        _url("dashboard:note_edit", note),
        {"content": "Alice runs along the river on Saturdays", "tags": "running, weekend"},
    )
    assert response.status_code == 200
    note.refresh_from_db()
    assert note.version == 2 and note.content.endswith("Saturdays") and note.tags == ["running", "weekend"]
    versions = list(note.versions.order_by("version").values_list("content", flat=True))
    assert versions == ["Alice runs along the river on Sundays", "Alice runs along the river on Saturdays"]
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card" id="note-content">')
    assert "Earlier versions (1)" in html and "Saved version 2" in html


@pytest.mark.parametrize(
    "data, field",
    [
        ({"content": "   ", "tags": ""}, "content"),
        ({"content": "x" * 5000, "tags": ""}, "content"),
        ({"content": "ok", "tags": "bad tag!"}, "tags"),
    ],
)
def test_bad_edits_are_400_naming_the_field_and_write_nothing(data, field, notes, owner_client):
    note = notes["sunday"]
    response = hx(owner_client, "POST", _url("dashboard:note_edit", note), data)
    assert response.status_code == 400
    assert f'data-field="{field}"' in response.content.decode()
    note.refresh_from_db()
    assert note.version == 1 and note.versions.count() == 1


def test_edit_without_javascript_opens_the_editor_on_the_detail_page(notes, owner_client):
    note = notes["sunday"]
    response = owner_client.get(_url("dashboard:note_edit", note))
    assert (
        response.status_code == 302
        and response["Location"] == _url("dashboard:note_detail", note) + "?edit=1#edit"
    )
    page = owner_client.get(_url("dashboard:note_detail", note), {"edit": "1"}).content.decode()
    assert 'id="edit"' in page and "Save new version" in page


def test_detail_shows_provenance_links_recall_and_lesson(notes, owned_subject, owner_client):
    note = notes["marathon"]
    conversation = ConversationFactory(subject=owned_subject, external_id="chat-42", mode="coach")
    message = MessageFactory(conversation=conversation, text="I signed up for the Lisbon half marathon!")
    NoteSource.objects.create(note=note, conversation=conversation, message=message)
    NoteLink.objects.create(src=note, dst=notes["sunday"], kind="elaborates", weight=0.8)
    NoteLink.objects.create(src=notes["doctor"], dst=note, kind="causes", weight=0.4)
    RetrievalEvent.objects.create(
        subject=owned_subject,
        query="how is my marathon training going",
        latency_ms=3,
        items=[{"id": f"n:{note.pk}", "section": "recalled", "score": 0.91}],
    )
    RetrievalEvent.objects.create(
        subject=owned_subject, query="unrelated", latency_ms=3, items=[{"id": "n:999999"}]
    )
    Note.objects.filter(pk=note.pk).update(recall_count=4, last_recalled_at=timezone.now())
    archived = notes["archived"]

    response = owner_client.get(_url("dashboard:note_detail", note))
    assert response.status_code == 200
    html = response.content.decode()
    assert "I signed up for the Lisbon half marathon!" in html and "chat-42" in html and "(coach)" in html
    assert [link.dst for link in response.context["links_out"]] == [notes["sunday"]]
    assert [link.src for link in response.context["links_in"]] == [notes["doctor"]]
    assert "Elaborates →" in html and "← Causes" in html
    assert "4 times" in html
    assert [r["event"].query for r in response.context["retrievals"]] == ["how is my marathon training going"]
    assert "0.910" in html
    assert "Not consolidated." in html

    lesson_page = owner_client.get(_url("dashboard:note_detail", archived)).content.decode()
    assert "Alice keeps a weekly running routine." in lesson_page
    assert "archived with it" in lesson_page


def test_detail_of_a_note_without_sources_says_so(notes, owner_client):
    html = owner_client.get(_url("dashboard:note_detail", notes["sunday"])).content.decode()
    assert "No source message" in html and "Not linked yet." in html


def test_back_button_restore_of_a_pushed_search_gets_the_whole_page(notes, owned_subject, owner_client):
    response = hx(
        owner_client,
        "GET",
        _notes_url(owned_subject),
        {"q": "marathon"},
        **{"HX-History-Restore-Request": "true"},
    )
    html = response.content.decode()
    assert "<html" in html and 'id="note-search"' in html
    assert _ids(response) == [notes["marathon"].pk]
