"""Dashboard: a vote carries the page's mode (docs/feedback.md), the preview shows the
intrusive penalty and links its items in the build's mode."""

from django.urls import reverse

from memory.models import Lesson, VoteEvent
from tests.dashboard_helpers import hx
from tests.factories import NoteFactory


def test_a_note_page_in_a_mode_votes_in_that_mode(owned_subject, owner_client):
    note = NoteFactory(subject=owned_subject, content="Alice trains for the Lisbon half marathon")
    detail = reverse("dashboard:note_detail", args=[owned_subject.pk, note.pk])
    vote_url = reverse("dashboard:note_vote", args=[owned_subject.pk, note.pk])

    page = owner_client.get(detail, {"mode": "companion"}).content.decode()
    assert '<input type="hidden" name="mode" value="companion">' in page
    assert 'name="mode"' not in owner_client.get(detail).content.decode()

    response = hx(owner_client, "POST", vote_url, {"signal": "down", "mode": "companion"})
    assert response.status_code == 200
    assert VoteEvent.objects.get().mode == "companion"
    # the answered widget keeps voting in that mode
    assert '<input type="hidden" name="mode" value="companion">' in response.content.decode()


def test_a_vote_in_an_unknown_mode_is_a_400_naming_mode_and_nothing_is_recorded(owned_subject, owner_client):
    note = NoteFactory(subject=owned_subject, content="Alice trains for the Lisbon half marathon")
    lesson = Lesson.objects.create(subject=owned_subject, text="Alice keeps a weekly running routine.")
    for name, pk in (("dashboard:note_vote", note.pk), ("dashboard:lesson_vote", lesson.pk)):
        response = hx(
            owner_client,
            "POST",
            reverse(name, args=[owned_subject.pk, pk]),
            {"signal": "up", "mode": "disco"},
        )
        assert response.status_code == 400
        assert 'data-field="mode"' in response.content.decode()
    assert not VoteEvent.objects.exists()
    note.refresh_from_db()
    assert note.vote_score == 0.0


def test_a_lesson_vote_records_the_mode(owned_subject, owner_client):
    lesson = Lesson.objects.create(subject=owned_subject, text="Alice keeps a weekly running routine.")
    page = owner_client.get(reverse("dashboard:lessons", args=[owned_subject.pk]), {"mode": "coding_debug"})
    assert '<input type="hidden" name="mode" value="coding_debug">' in page.content.decode()
    hx(
        owner_client,
        "POST",
        reverse("dashboard:lesson_vote", args=[owned_subject.pk, lesson.pk]),
        {"signal": "up", "mode": "coding_debug"},
    )
    assert VoteEvent.objects.get().mode == "coding_debug"


def test_the_preview_shows_the_intrusive_penalty_and_links_items_in_its_mode(owned_subject, owner_client):
    note = NoteFactory(subject=owned_subject, content="Alice is training for the Lisbon half marathon")
    response = owner_client.get(
        reverse("dashboard:preview", args=[owned_subject.pk]),
        {"message": "How is my marathon training going?", "mode": "companion"},
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert "<dt>intrusive penalty</dt>" in body
    detail = reverse("dashboard:note_detail", args=[owned_subject.pk, note.pk])
    assert f'href="{detail}?mode=companion"' in body
