"""REST "consolidate now": queued at once (202 with the run's id), run by the worker, waited for
by flush."""

from consolidation.tasks import consolidate_subject_task
from memory.leases import lease_acquire, lease_queue
from memory.models import AuditEvent, JobRun, Lesson, Note, NoteLink
from tests.factories import AppFactory, NoteFactory, SubjectFactory

DEPLOY = [
    "The deploy of the billing app failed because the migrations ran after the new code went live.",
    "Always run the migrations before switching traffic when deploying the billing app.",
    "The staging deploy of the billing app went fine after running the migrations first.",
    "Deploying the billing app: run the migrations on staging, then switch the traffic.",
]


def linked_cluster(subject):
    notes = [NoteFactory(subject=subject, content=text, tags=["deploy"]) for text in DEPLOY]
    for a, b in zip(notes, notes[1:], strict=False):
        NoteLink.objects.create(src=a, dst=b, kind="related")
    return notes


def test_consolidate_now_answers_202_with_the_queued_run_before_anything_runs(client, subject):
    linked_cluster(subject)

    response = client.post("/api/v1/subjects/alice/consolidate", format="json")

    assert response.status_code == 202
    run = JobRun.objects.get(subject=subject)
    assert response.json() == {"job_run": run.pk, "status": "queued"}
    assert not Lesson.objects.exists()
    assert AuditEvent.objects.filter(action="subject.consolidation_requested", object_id=str(run.pk)).exists()


def test_flush_reports_a_queued_consolidation_as_pending(client, subject):
    client.post("/api/v1/subjects/alice/consolidate", format="json")  # its task never runs here

    body = client.post("/api/v1/flush", {"subject": "alice", "timeout_ms": 0}, format="json").json()

    assert (body["done"], body["pending"], body["jobs"], body["reflections"]) == (False, 1, 1, 0)


def test_the_queued_run_is_the_one_the_worker_runs_and_flush_then_is_done(
    client, subject, eager_tasks, django_capture_on_commit_callbacks
):
    notes = linked_cluster(subject)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/subjects/alice/consolidate", format="json")

    run = JobRun.objects.get()
    assert run.pk == response.json()["job_run"] and run.status == "done" and run.stats["lessons"] == 1
    assert Note.objects.filter(pk__in=[n.pk for n in notes], archived_at__isnull=False).count() == len(notes)
    body = client.post("/api/v1/flush", {"subject": "alice", "timeout_ms": 0}, format="json").json()
    assert (body["done"], body["pending"]) == (True, 0)


def test_a_request_while_another_run_holds_the_lease_ends_skipped(
    client, subject, eager_tasks, django_capture_on_commit_callbacks
):
    linked_cluster(subject)
    held = lease_acquire(
        f"consolidate:subject:{subject.pk}", "other-worker", kind="consolidate", subject=subject
    )

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/subjects/alice/consolidate", format="json")

    asked = JobRun.objects.get(pk=response.json()["job_run"])
    assert asked.status == "skipped" and f"job run {held.pk}" in asked.error
    assert not Lesson.objects.exists()


def test_a_redelivered_task_does_not_run_the_request_twice(subject):
    linked_cluster(subject)
    run = lease_queue(f"consolidate:subject:{subject.pk}", kind="consolidate", subject=subject)

    first = consolidate_subject_task(subject.pk, run.pk)
    again = consolidate_subject_task(subject.pk, run.pk)

    assert first["job_run"] == run.pk and first["status"] == "done"
    assert again == {"skipped": True}
    assert Lesson.objects.count() == 1 and JobRun.objects.count() == 1


def test_another_apps_subject_cannot_be_consolidated(client, subject):
    other = SubjectFactory(app=AppFactory(), external_id="bob")

    response = client.post("/api/v1/subjects/bob/consolidate", format="json")

    assert response.status_code == 404
    assert not JobRun.objects.filter(subject=other).exists()


def test_consolidate_now_is_refused_with_409_and_writes_nothing_when_switched_off(client, subject):
    subject.app.config = {"memory": {"consolidation": {"enabled": False}}}
    subject.app.save()

    response = client.post("/api/v1/subjects/alice/consolidate", format="json")

    assert response.status_code == 409 and response.json()["error"]["field"] == "memory.consolidation.enabled"
    assert not JobRun.objects.exists()
    assert not AuditEvent.objects.filter(action="subject.consolidation_requested").exists()


def test_a_queued_run_switched_off_before_the_worker_takes_it_ends_skipped(subject):
    linked_cluster(subject)
    run = lease_queue(f"consolidate:subject:{subject.pk}", kind="consolidate", subject=subject)
    subject.app.config = {"memory": {"consolidation": {"enabled": False}}}
    subject.app.save()

    result = consolidate_subject_task(subject.pk, run.pk)

    run.refresh_from_db()
    assert "switched off" in result["skipped"]
    assert run.status == "skipped" and "memory.consolidation.enabled is false" in run.error
    assert not Lesson.objects.exists()
