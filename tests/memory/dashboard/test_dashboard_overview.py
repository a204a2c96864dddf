"""The overview page: counts per kind, activity per day, pending consent, last consolidation."""

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from memory.models import (
    ConsentCategory,
    JobRun,
    Lesson,
    NoteLink,
    PendingMemory,
    Procedure,
    RetrievalEvent,
)
from tests.dashboard_helpers import hx
from tests.factories import FactFactory, NoteFactory

pytestmark = pytest.mark.django_db


def _url(subject, name="dashboard:overview"):
    return reverse(name, args=[subject.pk])


def _days_ago(n: int):
    return timezone.now() - timedelta(days=n)


def _retrieval(subject, *, when, from_cache=False):
    return RetrievalEvent.objects.create(
        subject=subject, query="q", latency_ms=1.0, created_at=when, from_cache=from_cache
    )


def _job(subject, *, status="done", started=None, stats=None, kind="consolidate"):
    started = started or timezone.now()
    return JobRun.objects.create(
        kind=kind,
        key=f"{kind}:subject:{subject.pk if subject else 'all'}:{started.timestamp()}",
        subject=subject,
        status=status,
        lease_owner="host:1:x",
        lease_seconds=60,
        lease_expires_at=started + timedelta(minutes=1),
        started_at=started,
        finished_at=started + timedelta(seconds=3) if status != "running" else None,
        stats=stats or {},
    )


@pytest.fixture
def busy_subject(owned_subject, stranger_subject):
    """alice with a bit of everything; bob with other rows that must not be counted."""
    s = owned_subject
    old = FactFactory(subject=s, key="city", value="Paris", valid_to=timezone.now())
    FactFactory(subject=s, key="city", value="Lisbon")
    FactFactory(subject=s, key="name", value="Alice")
    old.superseded_by = s.facts.get(value="Lisbon")
    old.save()
    a = NoteFactory(subject=s, content="Alice runs on Sundays")
    b = NoteFactory(subject=s, content="Alice trains for a half marathon", created_at=_days_ago(3))
    lesson = Lesson.objects.create(subject=s, text="Alice trains every week.")
    NoteFactory(subject=s, content="Alice ran 10k", archived_at=timezone.now(), consolidated_into=lesson)
    Procedure.objects.create(subject=s, title="Weekly run", steps=["Warm up", "Run"], lesson=lesson)
    NoteLink.objects.create(src=a, dst=b, kind="related")
    PendingMemory.objects.create(
        subject=s,
        kind="fact",
        payload={"key": "condition", "value": "asthma"},
        category=ConsentCategory.objects.get(slug="health"),
        content_hash="h1",
    )
    _retrieval(s, when=timezone.now())
    _retrieval(s, when=timezone.now())
    _retrieval(s, when=_days_ago(2))
    # bob's rows
    NoteFactory(subject=stranger_subject, content="Bob likes chess")
    _retrieval(stranger_subject, when=timezone.now())
    return s


def test_counts_each_kind_of_the_subjects_memory_only(busy_subject, owner_client):
    response = owner_client.get(_url(busy_subject))
    assert response.status_code == 200
    counts = response.context["stats"]["counts"]
    assert counts == {
        "facts": 2,
        "notes": 2,
        "archived_notes": 1,
        "lessons": 1,
        "procedures": 1,
        "links": 1,
        "pending": 1,
        "retrievals": 3,
    }
    html = response.content.decode()
    assert '<div class="stat-value">2</div><div class="stat-label">facts</div>' in html
    assert "pending consent" in html


def test_memories_added_per_day_are_charted_by_kind(busy_subject, owner_client):
    response = owner_client.get(_url(busy_subject))
    chart = response.context["chart_added"]
    assert len(chart["labels"]) == 30
    assert chart["labels"][-1] == timezone.localdate().isoformat()
    notes = next(d for d in chart["datasets"] if d["label"] == "Notes")["data"]
    assert notes[-1] == 2  # today: the live one and the archived one
    assert notes[-4] == 1  # three days ago
    assert sum(notes) == 3
    facts = next(d for d in chart["datasets"] if d["label"] == "Fact versions")["data"]
    assert facts[-1] == 3
    # the same numbers reach the page as JSON for Chart.js, and Chart.js itself is loaded
    html = response.content.decode()
    assert json.dumps(chart["labels"][-1]) in html
    assert 'id="chart-added"' in html and 'data-source="chart-added"' in html
    assert "vendor/chartjs-4.6.1/chart.umd.min.js" in html


def test_recalls_per_day_count_context_builds(busy_subject, owner_client):
    chart = owner_client.get(_url(busy_subject)).context["chart_recalls"]
    builds, hits = (d["data"] for d in chart["datasets"])
    assert builds[-1] == 2 and builds[-3] == 1 and sum(builds) == 3
    assert sum(hits) == 0


def test_cache_hits_are_charted_beside_the_builds(busy_subject, stranger_subject, owner_client):
    _retrieval(busy_subject, when=timezone.now(), from_cache=True)
    _retrieval(busy_subject, when=_days_ago(1), from_cache=True)
    _retrieval(busy_subject, when=_days_ago(1), from_cache=True)
    _retrieval(stranger_subject, when=timezone.now(), from_cache=True)  # someone else's

    response = owner_client.get(_url(busy_subject))

    chart = response.context["chart_recalls"]
    assert [d["label"] for d in chart["datasets"]] == ["Context builds", "Cache hits"]
    builds, hits = (d["data"] for d in chart["datasets"])
    assert hits[-1] == 1 and hits[-2] == 2 and sum(hits) == 3
    assert builds[-1] == 2 and sum(builds) == 3  # the hits are not counted as builds
    today = chart["labels"][-1]
    assert (
        f'<tr><td>{today}</td><td class="num">2</td><td class="num">1</td></tr>' in response.content.decode()
    )


def test_days_older_than_the_window_are_left_out(owned_subject, owner_client):
    NoteFactory(subject=owned_subject, content="long ago", created_at=_days_ago(45))
    chart = owner_client.get(_url(owned_subject)).context["chart_added"]
    assert sum(chart["datasets"][0]["data"]) == 0


def test_pending_consent_is_listed_with_its_category(busy_subject, owner_client):
    html = owner_client.get(_url(busy_subject)).content.decode()
    assert "Waiting for your decision" in html
    assert "Health" in html and "asthma" in html


def test_last_consolidation_is_the_newest_run_covering_the_subject(
    busy_subject, stranger_subject, owner_client
):
    _job(busy_subject, status="done", started=_days_ago(2), stats={"clusters": 1})
    newest = _job(busy_subject, status="failed", started=_days_ago(1))
    _job(stranger_subject, status="done", started=timezone.now())  # someone else's: not shown
    response = owner_client.get(_url(busy_subject))
    assert response.context["stats"]["last_consolidation"] == newest
    assert "badge-danger" in response.content.decode()


def test_fresh_items_say_just_now_and_a_short_run_says_its_seconds(busy_subject, owner_client):
    _job(busy_subject, status="done", started=timezone.now() - timedelta(seconds=3))  # took 3 s

    html = owner_client.get(_url(busy_subject)).content.decode()

    assert "just now</time>" in html  # the pending item, queued in this test
    assert "<dt>Took</dt><dd>3.0\xa0s</dd>" in html
    assert "0\xa0minutes" not in html


def test_a_run_over_all_subjects_counts_as_a_consolidation(owned_subject, owner_client):
    run = _job(None, kind="consolidate_all", stats={"subjects": 4})
    response = owner_client.get(_url(owned_subject))
    assert response.context["stats"]["last_consolidation"] == run
    assert "(all subjects)" in response.content.decode()


def test_a_new_subject_shows_empty_states_that_say_what_happens_next(owned_subject, owner_client):
    html = owner_client.get(_url(owned_subject)).content.decode()
    assert "Nothing is waiting." in html
    assert "Not consolidated yet." in html
    assert "No recalls yet." in html
    assert "Nothing was added in these days." in html


def test_counts_fragment_is_only_the_cards(busy_subject, owner_client):
    response = hx(owner_client, "GET", _url(busy_subject, "dashboard:overview_counts"))
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div class="stats" id="overview-counts"')
    assert "<html" not in html
    assert response.context["stats"]["counts"]["notes"] == 2


def test_nav_lists_the_pages_that_exist_and_marks_the_current_one(owned_subject, owner_client):
    html = owner_client.get(_url(owned_subject)).content.decode()
    assert (
        f'href="{reverse("dashboard:overview", args=[owned_subject.pk])}" data-page="overview" aria-current="page"'
        in html
    )
    assert f'href="{reverse("dashboard:notes", args=[owned_subject.pk])}" data-page="notes">' in html
    assert f'data-subject-id="{owned_subject.pk}"' in html
    assert '"X-CSRFToken"' in html  # htmx sends the token with every request
