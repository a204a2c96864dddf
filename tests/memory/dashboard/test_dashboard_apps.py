"""The person's control over the apps using their memory (issue 16 req 1-2): the Apps page and
its Pause/Resume, the writing app on the lists and their `?app=`, and the access log — on an
item's page ("Read by") and as a page of its own."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from memory.models import (
    AuditEvent,
    ConsentCategory,
    Lesson,
    Origin,
    PendingMemory,
    RetrievalEvent,
    SubjectAppPause,
)
from memory.services import api_key_create
from tests.dashboard_helpers import logged_in
from tests.factories import ConversationFactory, FactFactory, NoteFactory

pytestmark = pytest.mark.django_db


def _read(subject, *refs, conversation=None, query="what is my cat called", when=None):
    """A context build of `subject` that chose the items `refs` ("n:1", "f:2")."""
    kinds = {"n": "note", "f": "fact", "l": "lesson", "p": "procedure", "e": "evidence"}
    event = RetrievalEvent.objects.create(
        subject=subject,
        conversation=conversation,
        query=query,
        items=[{"id": ref, "kind": kinds[ref[0]], "section": "recalled", "score": 0.5} for ref in refs],
        latency_ms=3.0,
    )
    if when is not None:
        RetrievalEvent.objects.filter(pk=event.pk).update(created_at=when)
    return event


def _api_client(subject, actor) -> APIClient:
    _, raw = api_key_create(app=subject.app, actor=actor)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


# --- the Apps page ------------------------------------------------------------------------------
def test_the_apps_page_lists_the_app_with_what_it_wrote_and_read(owned_subject, owner_client):
    note = NoteFactory(subject=owned_subject, content="Alice's cat is Miso")
    NoteFactory(subject=owned_subject, content="typed on the dashboard", origin=Origin.DASHBOARD)
    FactFactory(subject=owned_subject, key="city", value="Lisbon")
    _read(owned_subject, f"n:{note.pk}")

    response = owner_client.get(reverse("dashboard:apps", args=[owned_subject.pk]))

    assert response.status_code == 200
    [row] = response.context["rows"]
    assert row["app"] == owned_subject.app
    assert row["counts"]["notes"] == 1  # the dashboard's own note is the person's, not the app's
    assert row["counts"]["facts"] == 1
    assert row["reads"] == 1
    assert row["last_access"] is not None
    assert row["pause"] is None
    assert (
        reverse("dashboard:app_pause", args=[owned_subject.pk, owned_subject.app_id])
        in response.content.decode()
    )


def test_the_apps_page_of_an_untouched_memory_says_so(owned_subject, owner_client):
    response = owner_client.get(reverse("dashboard:apps", args=[owned_subject.pk]))

    assert response.context["rows"] == []
    assert b"No app has written to or read this memory yet" in response.content


def test_pausing_refuses_the_apps_calls_for_this_subject_and_resuming_lets_them_in(
    owned_subject, owner, owner_client, actor
):
    api = _api_client(owned_subject, actor)
    pause_url = reverse("dashboard:app_pause", args=[owned_subject.pk, owned_subject.app_id])
    resume_url = reverse("dashboard:app_resume", args=[owned_subject.pk, owned_subject.app_id])

    response = owner_client.post(pause_url)

    assert response.status_code == 302
    pause = SubjectAppPause.objects.get(subject=owned_subject, app=owned_subject.app)
    assert pause.paused_by == owner
    assert AuditEvent.objects.filter(action="subject.app_paused", subject=owned_subject).count() == 1
    refused = api.post("/api/v1/subjects/alice/notes", {"content": "Alice keeps bees"}, format="json")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "app_paused_for_subject"
    assert not owned_subject.notes.exists()
    page = owner_client.get(reverse("dashboard:apps", args=[owned_subject.pk]))
    assert b"paused" in page.content and resume_url.encode() in page.content

    owner_client.post(resume_url)

    assert not SubjectAppPause.objects.exists()
    assert AuditEvent.objects.filter(action="subject.app_resumed", subject=owned_subject).count() == 1
    assert api.get("/api/v1/subjects/alice/profile").status_code == 200


def test_pausing_twice_writes_one_pause(owned_subject, owner_client):
    url = reverse("dashboard:app_pause", args=[owned_subject.pk, owned_subject.app_id])

    owner_client.post(url)
    owner_client.post(url)

    assert SubjectAppPause.objects.count() == 1
    assert AuditEvent.objects.filter(action="subject.app_paused").count() == 1


def test_another_person_cannot_pause_the_app_of_your_memory(owned_subject, stranger_client):
    url = reverse("dashboard:app_pause", args=[owned_subject.pk, owned_subject.app_id])

    response = stranger_client.post(url)

    assert response.status_code == 404
    assert not SubjectAppPause.objects.exists()


def test_another_person_cannot_resume_an_app_you_paused(owned_subject, stranger_client):
    SubjectAppPause.objects.create(subject=owned_subject, app=owned_subject.app)

    response = stranger_client.post(
        reverse("dashboard:app_resume", args=[owned_subject.pk, owned_subject.app_id])
    )

    assert response.status_code == 404
    assert SubjectAppPause.objects.count() == 1


def test_an_app_that_is_not_this_memorys_cannot_be_paused_from_it(
    owned_subject, stranger_subject, owner_client
):
    url = reverse("dashboard:app_pause", args=[owned_subject.pk, stranger_subject.app_id])

    response = owner_client.post(url)

    assert response.status_code == 404
    assert not SubjectAppPause.objects.exists()


def test_staff_may_pause_an_app_for_any_subject(owned_subject, staff_client):
    response = staff_client.post(
        reverse("dashboard:app_pause", args=[owned_subject.pk, owned_subject.app_id])
    )

    assert response.status_code == 302
    assert SubjectAppPause.objects.filter(subject=owned_subject).exists()


def test_the_apps_pages_of_another_persons_subject_are_404(owned_subject, stranger_client):
    for name in ("dashboard:apps", "dashboard:access"):
        assert stranger_client.get(reverse(name, args=[owned_subject.pk])).status_code == 404


# --- the writing app on the lists, and ?app= ---------------------------------------------------
def test_the_notes_list_shows_the_writer_and_filters_by_app(owned_subject, owner_client):
    NoteFactory(subject=owned_subject, content="Alice's cat is Miso")
    NoteFactory(subject=owned_subject, content="typed on the dashboard", origin=Origin.DASHBOARD)
    url = reverse("dashboard:notes", args=[owned_subject.pk])
    app = owned_subject.app.name

    everything = owner_client.get(url)
    by_app = owner_client.get(url, {"app": app})
    by_other = owner_client.get(url, {"app": "someone-else"})

    assert f"by {app}".encode() in everything.content
    assert b"by you (dashboard)" in everything.content
    assert [n.content for n, _ in by_app.context["results"]] == ["Alice's cat is Miso"]
    assert by_other.context["results"] == []


def test_the_profile_filters_facts_by_app(owned_subject, owner_client):
    FactFactory(subject=owned_subject, key="city", value="Lisbon")
    FactFactory(subject=owned_subject, key="diet", value="vegetarian", origin=Origin.DASHBOARD)
    url = reverse("dashboard:profile", args=[owned_subject.pk])

    response = owner_client.get(url, {"app": owned_subject.app.name})

    assert [f.key for f in response.context["facts"]] == ["city"]
    assert f"by {owned_subject.app.name}".encode() in response.content


def test_the_lessons_list_filters_by_app(owned_subject, owner_client):
    Lesson.objects.create(subject=owned_subject, text="Deploy on Tuesdays.")  # consolidation's
    Lesson.objects.create(subject=owned_subject, text="Imported lesson.", origin=Origin.IMPORT)
    url = reverse("dashboard:lessons", args=[owned_subject.pk])

    everything = owner_client.get(url)
    by_app = owner_client.get(url, {"app": owned_subject.app.name})

    assert b"by memoryweb" in everything.content
    assert [lesson.text for lesson, _ in by_app.context["results"]] == ["Imported lesson."]


def test_the_consent_queue_shows_the_writing_app_and_filters_by_it(owned_subject, owner_client):
    PendingMemory.objects.create(
        subject=owned_subject,
        kind="note",
        payload={"content": "Alice has asthma"},
        category=ConsentCategory.objects.get(slug="health"),
        content_hash="h1",
    )
    url = reverse("dashboard:consent", args=[owned_subject.pk])

    by_app = owner_client.get(url, {"app": owned_subject.app.name})
    by_other = owner_client.get(url, {"app": "someone-else"})

    assert len(by_app.context["items"]) == 1
    assert f"by {owned_subject.app.name}".encode() in by_app.content
    assert by_other.context["items"] == []


# --- the access log -----------------------------------------------------------------------------
def test_a_notes_page_says_which_app_read_it_when_and_for_which_message(owned_subject, owner_client):
    note = NoteFactory(subject=owned_subject, content="Alice's cat is Miso")
    other = NoteFactory(subject=owned_subject, content="Alice runs")
    conversation = ConversationFactory(subject=owned_subject, external_id="chat-7")
    chose = _read(owned_subject, f"n:{note.pk}", conversation=conversation, query="what is my cat called")
    _read(owned_subject, f"n:{other.pk}", query="do I run")
    _read(owned_subject, f"n:{note.pk}1", query="a note whose id only starts the same")

    response = owner_client.get(reverse("dashboard:note_detail", args=[owned_subject.pk, note.pk]))

    assert [r["event"].pk for r in response.context["retrievals"]] == [chose.pk]
    html = response.content.decode()
    assert "Read by" in html and "what is my cat called" in html and "chat-7" in html
    assert owned_subject.app.name in html
    assert "do I run" not in html


def test_a_facts_history_says_which_context_builds_read_its_versions(owned_subject, owner_client):
    fact = FactFactory(subject=owned_subject, key="city", value="Lisbon")
    chose = _read(owned_subject, f"f:{fact.pk}", query="where do I live")

    response = owner_client.get(reverse("dashboard:fact_history", args=[owned_subject.pk, fact.pk]))

    assert [r["event"].pk for r in response.context["reads"]] == [chose.pk]
    assert b"where do I live" in response.content


def test_the_access_log_lists_the_builds_and_states_the_retention(owned_subject, owner_client):
    note = NoteFactory(subject=owned_subject)
    fact = FactFactory(subject=owned_subject)
    note_read = _read(owned_subject, f"n:{note.pk}", query="about the note")
    fact_read = _read(owned_subject, f"f:{fact.pk}", query="about the fact")
    url = reverse("dashboard:access", args=[owned_subject.pk])

    everything = owner_client.get(url)
    notes_only = owner_client.get(url, {"kind": "note"})
    other_app = owner_client.get(url, {"app": "someone-else"})

    assert [r["event"].pk for r in everything.context["rows"]] == [fact_read.pk, note_read.pk]
    assert b"Kept 30 days" in everything.content
    assert [r["event"].pk for r in notes_only.context["rows"]] == [note_read.pk]
    assert other_app.context["rows"] == []


def test_the_access_log_filters_by_dates(owned_subject, owner_client):
    now = timezone.now()
    old = _read(owned_subject, "n:1", when=now - timedelta(days=10))
    new = _read(owned_subject, "n:1", when=now)
    url = reverse("dashboard:access", args=[owned_subject.pk])
    day = (now - timedelta(days=5)).date().isoformat()

    since = owner_client.get(url, {"since": day})
    until = owner_client.get(url, {"until": day})
    backwards = owner_client.get(url, {"since": now.date().isoformat(), "until": day})

    assert [r["event"].pk for r in since.context["rows"]] == [new.pk]
    assert [r["event"].pk for r in until.context["rows"]] == [old.pk]
    assert backwards.status_code == 400


def test_the_access_log_is_paginated(owned_subject, owner_client):
    for _ in range(51):
        _read(owned_subject, "n:1")
    url = reverse("dashboard:access", args=[owned_subject.pk])

    first = owner_client.get(url)
    second = owner_client.get(url, {"page": 2})

    assert len(first.context["rows"]) == 50
    assert len(second.context["rows"]) == 1


def test_the_access_log_shows_only_this_subjects_builds(owned_subject, stranger_subject, owner_client):
    _read(stranger_subject, "n:1", query="bob's question")

    response = owner_client.get(reverse("dashboard:access", args=[owned_subject.pk]))

    assert response.context["rows"] == []
    assert b"bob's question" not in response.content


def test_a_second_subject_of_the_same_person_is_paused_on_its_own(owned_subject, owner, actor):
    from tests.factories import SubjectFactory

    work = SubjectFactory(app=owned_subject.app, external_id="alice-work", owner=owner)
    logged_in(owner).post(reverse("dashboard:app_pause", args=[work.pk, work.app_id]))
    api = _api_client(owned_subject, actor)

    assert api.get("/api/v1/subjects/alice-work/profile").status_code == 403
    assert api.get("/api/v1/subjects/alice/profile").status_code == 200


def test_the_access_log_names_the_items_it_chose(owned_subject, owner_client):
    note = NoteFactory(subject=owned_subject, content="Alice's cat is called Miso")
    fact = FactFactory(subject=owned_subject, key="home_city", value="Lisbon")
    _read(owned_subject, f"n:{note.pk}", f"f:{fact.pk}", "n:999999")  # the last one is gone since

    html = owner_client.get(reverse("dashboard:access", args=[owned_subject.pk])).content.decode()

    assert f">n:{note.pk}</a>" in html and f">f:{fact.pk}</a>" in html and ">n:999999</a>" in html
    assert '<span class="item-name" data-kind="note">Alice&#x27;s cat is called Miso</span>' in html
    assert "<strong>Home city</strong>: Lisbon" in html
