"""Dashboard: the jobs page — recent runs, consolidate now, diagnose for staff."""

from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from consolidation.services import consolidation_key
from memory.leases import lease_acquire
from memory.models import JobRun, JobStatus, Lesson, Note, NoteLink
from memoryweb.counters import counter_add
from tests.dashboard_helpers import hx
from tests.factories import NoteFactory

DEPLOY = [
    "The deploy of the billing app failed because the migrations ran after the new code went live.",
    "Always run the migrations before switching traffic when deploying the billing app.",
    "Deploy steps that worked: first I backed up the database, then ran the migrations on staging, "
    "after that switched the traffic and finally watched the error rate for ten minutes.",
    "The staging deploy of the billing app went fine after running the migrations first.",
]


def linked_cluster(subject, contents=DEPLOY, tag="deploy"):
    notes = [NoteFactory(subject=subject, content=text, tags=[tag]) for text in contents]
    for a, b in zip(notes, notes[1:], strict=False):
        NoteLink.objects.create(src=a, dst=b, kind="related")
    return notes


def finished_run(subject=None, kind="consolidate", status=JobStatus.DONE, stats=None, error=""):
    now = timezone.now()
    return JobRun.objects.create(
        kind=kind,
        key=f"{kind}:{subject.pk if subject else 'all'}:{now.timestamp()}",
        subject=subject,
        status=status,
        lease_owner="test",
        lease_seconds=60,
        lease_expires_at=now + timedelta(minutes=1),
        stats=stats or {},
        error=error,
        started_at=now - timedelta(seconds=2),
        finished_at=now,
    )


def url(name, subject):
    return reverse(f"dashboard:{name}", args=[subject.pk])


def consolidate_now(client, subject, capture):
    """Press the button; the task the request queued runs when the request's commit is done."""
    with capture(execute=True):
        return hx(client, "POST", url("jobs_consolidate", subject))


def test_consolidate_now_answers_at_once_with_the_queued_run(owned_subject, owner_client):
    linked_cluster(owned_subject)
    response = hx(owner_client, "POST", url("jobs_consolidate", owned_subject))
    run = JobRun.objects.get(subject=owned_subject)
    body = response.content.decode()
    assert response.status_code == 200
    assert run.status == JobStatus.QUEUED
    assert not Lesson.objects.exists()  # nothing ran inside the request
    assert body.lstrip().startswith('<div id="jobs-list"')
    assert f'id="job-{run.pk}"' in body
    assert f"Consolidation queued (job run {run.pk})" in body  # the toast


def test_consolidate_now_distils_the_cluster_and_lists_the_run(
    owned_subject, owner_client, eager_tasks, django_capture_on_commit_callbacks
):
    notes = linked_cluster(owned_subject)
    consolidate_now(owner_client, owned_subject, django_capture_on_commit_callbacks)
    run = JobRun.objects.get(subject=owned_subject)
    assert run.status == JobStatus.DONE and run.stats["lessons"] == 1
    assert Lesson.objects.filter(subject=owned_subject).count() == 1
    assert Note.objects.filter(pk__in=[n.pk for n in notes], archived_at__isnull=False).count() == len(notes)
    listed = hx(owner_client, "GET", url("jobs_list", owned_subject)).content.decode()
    assert f'id="job-{run.pk}"' in listed
    assert "Merged 4 notes into 1 lesson and 1 procedure" in listed
    assert "<details" in listed and "Llm fallbacks" in listed  # the raw counters, folded


def test_consolidate_now_with_nothing_to_do_says_why(
    owned_subject, owner_client, eager_tasks, django_capture_on_commit_callbacks
):
    NoteFactory(subject=owned_subject, content="A lonely note")
    consolidate_now(owner_client, owned_subject, django_capture_on_commit_callbacks)
    listed = hx(owner_client, "GET", url("jobs_list", owned_subject))
    assert b"Nothing to consolidate yet: no group of at least 3 linked notes" in listed.content
    assert JobRun.objects.get(subject=owned_subject).stats["clusters"] == 0


def test_consolidate_now_while_a_run_holds_the_lease_is_not_started_twice(
    owned_subject, owner_client, eager_tasks, django_capture_on_commit_callbacks
):
    linked_cluster(owned_subject)
    held = lease_acquire(
        consolidation_key(owned_subject), "other-worker", kind="consolidate", subject=owned_subject
    )
    consolidate_now(owner_client, owned_subject, django_capture_on_commit_callbacks)
    asked = JobRun.objects.exclude(pk=held.pk).get()
    assert asked.status == JobStatus.SKIPPED and f"job run {held.pk}" in asked.error
    assert JobRun.objects.get(pk=held.pk).status == JobStatus.RUNNING
    assert not Lesson.objects.exists()
    listed = hx(owner_client, "GET", url("jobs_list", owned_subject)).content.decode()
    assert "was in progress" in listed


def test_consolidate_now_when_the_app_switches_it_off_says_so_and_queues_nothing(owned_subject, owner_client):
    owned_subject.app.config = {"memory": {"consolidation": {"enabled": False}}}
    owned_subject.app.save()
    response = hx(owner_client, "POST", url("jobs_consolidate", owned_subject))
    assert response.status_code == 200
    assert b"Not run: consolidation is switched off for this app" in response.content
    assert not JobRun.objects.exists()


def test_consolidate_now_without_javascript_redirects_to_the_page(owned_subject, owner_client):
    response = owner_client.post(url("jobs_consolidate", owned_subject))
    assert response.status_code == 302
    assert response["Location"] == url("jobs", owned_subject)
    assert JobRun.objects.filter(subject=owned_subject).count() == 1


def test_another_persons_memory_cannot_be_consolidated(owned_subject, stranger_client):
    linked_cluster(owned_subject)
    response = hx(stranger_client, "POST", url("jobs_consolidate", owned_subject))
    assert response.status_code == 404
    assert not JobRun.objects.exists()
    assert not Lesson.objects.exists()


def test_the_page_lists_this_subjects_runs_and_the_system_wide_ones_only(
    owned_subject, stranger_subject, owner_client
):
    mine = finished_run(owned_subject, stats={"clusters": 2, "lessons": 2, "notes_archived": 7})
    sweep = finished_run(None, kind="consolidate_all", stats={"subjects_started": 42})
    theirs = finished_run(stranger_subject, stats={"clusters": 9})
    response = owner_client.get(url("jobs", owned_subject))
    body = response.content.decode()
    assert response.status_code == 200
    assert f'id="job-{mine.pk}"' in body and f'id="job-{sweep.pk}"' in body
    assert f'id="job-{theirs.pk}"' not in body
    assert "Merged 7 notes into 2 lessons" in body
    assert '<dt>Notes archived</dt><dd class="mono">7</dd>' in body  # the raw counters, folded
    assert "Subjects started" not in body  # a system-wide run's stats describe every tenant


def test_staff_see_the_stats_of_system_wide_runs(owned_subject, staff_client):
    finished_run(None, kind="consolidate_all", stats={"subjects_started": 42})
    response = staff_client.get(url("jobs", owned_subject))
    assert b'<dt>Subjects started</dt><dd class="mono">42</dd>' in response.content


def test_a_failed_run_shows_its_error(owned_subject, owner_client):
    finished_run(owned_subject, status=JobStatus.FAILED, error="LeaseLost: consolidate:subject:1")
    response = owner_client.get(url("jobs", owned_subject))
    assert b"badge-danger" in response.content
    assert b"LeaseLost: consolidate:subject:1" in response.content


def test_the_list_fragment_refreshes_alone(owned_subject, owner_client):
    run = finished_run(owned_subject)
    response = hx(owner_client, "GET", url("jobs_list", owned_subject))
    assert response.status_code == 200
    assert response.content.lstrip().startswith(b'<div id="jobs-list"')
    assert b'hx-trigger="mw:jobs from:body"' in response.content
    assert f'id="job-{run.pk}"'.encode() in response.content
    assert b"<html" not in response.content


def test_an_empty_list_says_what_to_do(owned_subject, owner_client):
    response = owner_client.get(url("jobs", owned_subject))
    assert b"No job has run yet." in response.content


def test_staff_see_the_diagnose_report(owned_subject, staff_client):
    counter_add("redaction.openai_key", 3)
    response = staff_client.get(url("jobs", owned_subject))
    body = response.content.decode()
    assert response.status_code == 200
    sections = dict(response.context["diagnose"])
    assert {"embeddings", "database", "counters"} <= set(sections)
    assert "jobs" not in sections
    assert "redaction.openai_key" in body
    assert "Diagnose" in body


def test_owners_do_not_see_the_installations_diagnose(owned_subject, owner_client):
    counter_add("redaction.openai_key", 3)
    response = owner_client.get(url("jobs", owned_subject))
    assert "diagnose" not in response.context
    assert b"redaction.openai_key" not in response.content
