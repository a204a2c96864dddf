"""Dashboard: lessons and procedures — list, search, vote, edit (a new version), delete."""

from django.urls import reverse

from memory.models import (
    AuditEvent,
    Lesson,
    LessonVersion,
    Note,
    Procedure,
    ProcedureVersion,
    VoteEvent,
)
from tests.dashboard_helpers import hx
from tests.factories import NoteFactory


def make_lesson(subject, text="Deploy on Fridays only with a rollback plan.", tags=("deploy",)) -> Lesson:
    lesson = Lesson.objects.create(subject=subject, text=text, tags=list(tags), distiller="heuristic")
    LessonVersion.objects.create(lesson=lesson, version=1, text=text, tags=list(tags))
    return lesson


def make_procedure(subject, title="Release a new version", steps=None, lesson=None) -> Procedure:
    steps = steps or ["Run the tests", "Tag the release", "Deploy to staging"]
    procedure = Procedure.objects.create(
        subject=subject, title=title, steps=steps, tags=["release"], lesson=lesson, distiller="heuristic"
    )
    ProcedureVersion.objects.create(procedure=procedure, version=1, title=title, steps=steps)
    return procedure


def url(name, subject, **kwargs):
    return reverse(f"dashboard:{name}", kwargs={"subject_id": subject.pk, **kwargs})


# --- list ------------------------------------------------------------------------------------


def test_the_lessons_page_lists_the_subjects_lessons_with_their_source_notes(owned_subject, owner_client):
    lesson = make_lesson(owned_subject)
    note = NoteFactory(
        subject=owned_subject, content="We rolled back the Friday deploy", consolidated_into=lesson
    )
    procedure = make_procedure(owned_subject, lesson=lesson)
    response = owner_client.get(url("lessons", owned_subject))
    body = response.content.decode()
    assert response.status_code == 200
    assert "Deploy on Fridays only with a rollback plan." in body
    assert f'id="lesson-{lesson.pk}"' in body
    assert reverse("dashboard:note_detail", args=[owned_subject.pk, note.pk]) in body
    assert f"#procedure-{procedure.pk}" in body


def test_the_lessons_page_shows_nobody_elses_lessons(owned_subject, stranger_subject, owner_client):
    make_lesson(stranger_subject, text="Bob's secret lesson about sailing.")
    response = owner_client.get(url("lessons", owned_subject))
    assert b"sailing" not in response.content
    assert b"No lessons yet." in response.content


def test_an_empty_lessons_page_says_how_lessons_are_made(owned_subject, owner_client):
    response = owner_client.get(url("procedures", owned_subject))
    assert response.status_code == 200
    assert b"No procedures yet." in response.content
    assert b"Consolidation writes them" in response.content


def test_searching_lessons_returns_only_the_matching_ones_as_a_fragment(owned_subject, owner_client):
    make_lesson(owned_subject, text="Deploy on Fridays only with a rollback plan.")
    make_lesson(owned_subject, text="Water the tomatoes in the evening.", tags=["garden"])
    response = hx(owner_client, "GET", url("lessons", owned_subject), {"q": "tomatoes"})
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="distilled-results"')
    assert "tomatoes" in body
    assert "rollback" not in body
    assert "1 match, best first" in body


def test_a_search_that_matches_nothing_says_so(owned_subject, owner_client):
    make_lesson(owned_subject)
    response = hx(owner_client, "GET", url("lessons", owned_subject), {"q": "zeppelin"})
    assert b"No lesson matches." in response.content


def test_a_bad_page_number_is_a_400_naming_the_field(owned_subject, owner_client):
    response = hx(owner_client, "GET", url("lessons", owned_subject), {"page": "0"})
    assert response.status_code == 400
    assert b'data-field="page"' in response.content


def test_lessons_are_paged(owned_subject, owner_client):
    for i in range(23):
        make_lesson(owned_subject, text=f"Lesson number {i} about things.")
    first = owner_client.get(url("lessons", owned_subject))
    second = owner_client.get(url("lessons", owned_subject), {"page": 2})
    assert len(first.context["results"]) == 20
    assert len(second.context["results"]) == 3
    assert first.context["has_next"] and not second.context["has_next"]


def test_the_procedures_page_shows_steps_as_advice(owned_subject, owner_client):
    procedure = make_procedure(owned_subject)
    response = owner_client.get(url("procedures", owned_subject))
    body = response.content.decode()
    assert f'id="procedure-{procedure.pk}"' in body
    assert "<li>Tag the release</li>" in body
    assert "advice, never executed" in body


# --- vote ------------------------------------------------------------------------------------


def test_voting_a_lesson_up_records_the_vote_and_answers_the_new_score(owned_subject, owner_client):
    lesson = make_lesson(owned_subject)
    response = hx(
        owner_client, "POST", url("lesson_vote", owned_subject, item_id=lesson.pk), {"signal": "up"}
    )
    lesson.refresh_from_db()
    assert response.status_code == 200
    assert lesson.vote_score == 1.0
    assert b"1.00" in response.content
    event = VoteEvent.objects.get()
    assert (event.item_kind, event.item_id, event.signal) == ("lesson", lesson.pk, "up")
    assert event.actor == "user:alice-login"


def test_voting_a_procedure_down_lowers_its_score(owned_subject, owner_client):
    procedure = make_procedure(owned_subject)
    owner_client.post(url("procedure_vote", owned_subject, item_id=procedure.pk), {"signal": "down"})
    procedure.refresh_from_db()
    assert procedure.vote_score == -1.0


def test_an_unknown_vote_signal_is_a_400_and_nothing_is_recorded(owned_subject, owner_client):
    lesson = make_lesson(owned_subject)
    response = hx(
        owner_client, "POST", url("lesson_vote", owned_subject, item_id=lesson.pk), {"signal": "meh"}
    )
    assert response.status_code == 400
    assert b'data-field="signal"' in response.content
    assert not VoteEvent.objects.exists()


# --- edit ------------------------------------------------------------------------------------


def test_editing_a_lesson_writes_a_new_version_and_keeps_the_old_one(owned_subject, owner_client):
    lesson = make_lesson(owned_subject)
    response = hx(
        owner_client,
        "POST",
        url("lesson_edit", owned_subject, item_id=lesson.pk),
        {"text": "Deploy on Fridays only with a tested rollback plan."},
    )
    lesson.refresh_from_db()
    assert response.status_code == 200
    assert lesson.version == 2
    assert lesson.text == "Deploy on Fridays only with a tested rollback plan."
    versions = list(lesson.versions.order_by("version").values_list("text", "origin"))
    assert versions == [
        ("Deploy on Fridays only with a rollback plan.", "task"),
        ("Deploy on Fridays only with a tested rollback plan.", "dashboard"),
    ]
    assert b"Earlier versions (1)" in response.content
    assert AuditEvent.objects.filter(action="lesson.edited", actor_id="alice-login").count() == 1


def test_the_lesson_editor_is_a_fragment_for_htmx_and_a_page_without_it(owned_subject, owner_client):
    lesson = make_lesson(owned_subject)
    fragment = hx(owner_client, "GET", url("lesson_edit", owned_subject, item_id=lesson.pk))
    page = owner_client.get(url("lesson_edit", owned_subject, item_id=lesson.pk))
    assert fragment.content.lstrip().startswith(b'<li class="distilled-card is-editing"')
    assert b"<html" in page.content and b"Save new version" in page.content


def test_an_empty_lesson_text_is_a_400_naming_the_field_and_changes_nothing(owned_subject, owner_client):
    lesson = make_lesson(owned_subject)
    response = hx(owner_client, "POST", url("lesson_edit", owned_subject, item_id=lesson.pk), {"text": "  "})
    lesson.refresh_from_db()
    assert response.status_code == 400
    assert b'data-field="text"' in response.content
    assert lesson.version == 1 and lesson.versions.count() == 1


def test_a_lesson_edit_without_javascript_redirects_back_to_the_list(owned_subject, owner_client):
    lesson = make_lesson(owned_subject)
    response = owner_client.post(
        url("lesson_edit", owned_subject, item_id=lesson.pk), {"text": "Ship small."}
    )
    assert response.status_code == 302
    assert response["Location"] == url("lessons", owned_subject) + f"#lesson-{lesson.pk}"
    lesson.refresh_from_db()
    assert lesson.text == "Ship small."


def test_editing_a_procedure_takes_one_step_per_line(owned_subject, owner_client):
    procedure = make_procedure(owned_subject)
    response = hx(
        owner_client,
        "POST",
        url("procedure_edit", owned_subject, item_id=procedure.pk),
        {"title": "Release", "steps": "1. Run the tests\n\n2. Tag it\n- Deploy to production\n"},
    )
    procedure.refresh_from_db()
    assert response.status_code == 200
    assert procedure.title == "Release"
    assert procedure.steps == ["Run the tests", "Tag it", "Deploy to production"]
    assert procedure.version == 2
    assert list(procedure.versions.values_list("version", flat=True).order_by("version")) == [1, 2]


def test_a_procedure_with_one_step_is_a_400_naming_steps(owned_subject, owner_client):
    procedure = make_procedure(owned_subject)
    response = hx(
        owner_client,
        "POST",
        url("procedure_edit", owned_subject, item_id=procedure.pk),
        {"title": "Release", "steps": "Just do it"},
    )
    procedure.refresh_from_db()
    assert response.status_code == 400
    assert b'data-field="steps"' in response.content
    assert b"2 to 8 steps" in response.content
    assert procedure.version == 1 and procedure.title == "Release a new version"


def test_cancel_brings_back_the_card(owned_subject, owner_client):
    procedure = make_procedure(owned_subject)
    response = hx(owner_client, "GET", url("procedure_card", owned_subject, item_id=procedure.pk))
    assert response.content.lstrip().startswith(
        f'<li class="distilled-card" id="procedure-{procedure.pk}"'.encode()
    )


# --- delete ----------------------------------------------------------------------------------


def test_deleting_a_lesson_keeps_its_archived_notes(owned_subject, owner_client):
    lesson = make_lesson(owned_subject)
    note = NoteFactory(subject=owned_subject, content="A note about deploys", consolidated_into=lesson)
    response = hx(owner_client, "POST", url("lesson_delete", owned_subject, item_id=lesson.pk))
    assert response.status_code == 200
    assert not Lesson.objects.filter(pk=lesson.pk).exists()
    assert Note.objects.filter(pk=note.pk).exists()
    assert b"Deleted lesson" in response.content  # the toast
    assert AuditEvent.objects.filter(action="lesson.deleted", object_id=str(lesson.pk)).exists()


def test_deleting_a_procedure_without_javascript_redirects_to_the_list(owned_subject, owner_client):
    procedure = make_procedure(owned_subject)
    response = owner_client.post(url("procedure_delete", owned_subject, item_id=procedure.pk))
    assert response.status_code == 302
    assert response["Location"] == url("procedures", owned_subject)
    assert not Procedure.objects.exists()


# --- ownership -------------------------------------------------------------------------------


def test_another_subjects_lesson_cannot_be_voted_edited_or_deleted(
    owned_subject, stranger_subject, owner_client
):
    lesson = make_lesson(stranger_subject)
    for name, data in [
        ("lesson_vote", {"signal": "up"}),
        ("lesson_edit", {"text": "Mine now."}),
        ("lesson_delete", {}),
    ]:
        response = hx(owner_client, "POST", url(name, owned_subject, item_id=lesson.pk), data)
        assert response.status_code == 404, name
    lesson.refresh_from_db()
    assert (lesson.text, lesson.vote_score, lesson.version) == (
        "Deploy on Fridays only with a rollback plan.",
        0,
        1,
    )


def test_staff_can_edit_any_subjects_procedure(owned_subject, staff_client):
    procedure = make_procedure(owned_subject)
    response = hx(
        staff_client,
        "POST",
        url("procedure_edit", owned_subject, item_id=procedure.pk),
        {"title": "Release carefully", "steps": "Test\nShip"},
    )
    procedure.refresh_from_db()
    assert response.status_code == 200
    assert procedure.title == "Release carefully"
    assert AuditEvent.objects.get(action="procedure.edited").actor_id == "operator"
