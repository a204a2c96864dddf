from datetime import timedelta

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from consolidation.schedule import SCHEDULE, schedule_install
from memory.models import Note, RetrievalEvent
from memory.services import app_config_set
from memory.tasks import notes_evict_sweep_task, retrieval_events_prune_task
from tests.factories import NoteFactory


def test_the_sweep_evicts_subjects_over_a_lowered_cap(subject, actor):
    notes = [NoteFactory(subject=subject, content=f"note {i}") for i in range(4)]
    app_config_set(app=subject.app, config={"memory": {"notes": {"maxEntries": 2}}}, actor=actor)

    first = notes_evict_sweep_task()
    second = notes_evict_sweep_task()

    assert first == {"evicted": 2, "evidence_evicted": 0} and second == {"evicted": 0, "evidence_evicted": 0}
    assert sorted(Note.objects.values_list("pk", flat=True)) == [notes[2].pk, notes[3].pk]


def test_old_retrieval_events_are_pruned(subject):
    old = RetrievalEvent.objects.create(
        subject=subject, query="q", latency_ms=1, created_at=timezone.now() - timedelta(days=31)
    )
    fresh = RetrievalEvent.objects.create(subject=subject, query="q", latency_ms=1)

    assert retrieval_events_prune_task() == {"deleted": 1, "cache_expired": 0}
    assert list(RetrievalEvent.objects.values_list("pk", flat=True)) == [fresh.pk]
    assert not RetrievalEvent.objects.filter(pk=old.pk).exists()


@pytest.mark.django_db
def test_installing_the_schedule_twice_creates_each_entry_once_and_keeps_admin_edits():
    schedule_install()
    PeriodicTask.objects.filter(name=SCHEDULE[0].name).update(enabled=False)

    assert schedule_install() == []

    assert PeriodicTask.objects.filter(name__in=[j.name for j in SCHEDULE]).count() == len(SCHEDULE)
    entry = PeriodicTask.objects.get(name=SCHEDULE[0].name)
    assert entry.enabled is False
    assert 0 < entry.expire_seconds < SCHEDULE[0].every.total_seconds()
