"""The memory fabric through the sidecar: notes get linked, a forced tick distils them."""

from memory.models import JobRun, Lesson, Note, NoteLink, Procedure

DEPLOY_NOTES = [
    "To deploy the billing api, first run the test suite, then tag the release.",
    "Billing api deploy: first tag the release, then run make deploy from the release branch.",
    "For the billing api deploy, run make deploy and after that check the health endpoint.",
    "Billing api deploy went fine: we ran the migrations first, then restarted the workers.",
]


def test_notes_stored_through_the_sidecar_get_linked_and_consolidate_into_a_lesson_and_procedure(
    client, subject, eager_tasks, django_capture_on_commit_callbacks
):
    for text in DEPLOY_NOTES:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                "/api/v1/subjects/alice/notes",
                {"content": text, "tags": ["deploy", "billing"]},
                format="json",
            )
        assert response.status_code == 201

    assert NoteLink.objects.filter(src__subject=subject).exists()

    with django_capture_on_commit_callbacks(execute=True):
        forced = client.post("/api/v1/subjects/alice/consolidate", format="json")

    assert forced.status_code == 202 and forced.json()["status"] == "queued"
    assert JobRun.objects.get(pk=forced.json()["job_run"]).status == "done"
    lesson = Lesson.objects.get(subject=subject)
    procedure = Procedure.objects.get(subject=subject)
    assert 2 <= len(procedure.steps) <= 8
    notes = Note.objects.filter(subject=subject)
    assert all(n.archived_at is not None and n.consolidated_into_id == lesson.pk for n in notes)
    assert client.get(f"/api/v1/subjects/alice/notes/{notes[0].pk}").status_code == 200  # readable by id
    context = client.post(
        "/api/v1/context", {"subject": "alice", "message": "how do I deploy the billing api?"}, format="json"
    ).json()
    assert f"[l:{lesson.pk}]" in context["tail"] and f"[p:{procedure.pk}]" in context["tail"]
    assert not any(i["id"].startswith("n:") for i in context["items"])  # archived: out of the index
    lessons = client.get("/api/v1/subjects/alice/lessons", {"query": "deploy billing"}).json()["lessons"]
    assert [item["id"] for item in lessons] == [lesson.pk]
    assert sorted(lessons[0]["notes"]) == sorted(n.pk for n in notes)
