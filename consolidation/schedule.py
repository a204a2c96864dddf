"""Every periodic job, defined in one place and installed into django-celery-beat.

Installing is idempotent: a missing entry is created; an existing one is left as the operator
may have edited it in the admin (interval, enabled). Each entry expires just under its period,
so a backlog never runs a stale tick on top of a fresh one.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from memory.config import get_config


@dataclass(frozen=True)
class PeriodicJob:
    name: str
    task: str
    every: timedelta

    @property
    def expires_seconds(self) -> int:
        return max(int(self.every.total_seconds() * 0.9), 1)


def _consolidation_every() -> timedelta:

    return timedelta(hours=get_config()["consolidation.intervalHours"])


SCHEDULE = [
    PeriodicJob("memory: eviction sweep", "memory.notes_evict_sweep", timedelta(hours=1)),
    PeriodicJob("memory: prune retrieval events", "memory.retrieval_events_prune", timedelta(days=1)),
    PeriodicJob("memory: expire pending consent", "memory.pending_expire", timedelta(hours=6)),
    # the global consolidation.intervalHours when the schedule is installed; edit it in the admin after
    PeriodicJob("consolidation: consolidate", "consolidation.consolidate_all", _consolidation_every()),
    PeriodicJob("consolidation: decay votes", "consolidation.votes_decay", timedelta(hours=6)),
    # the sweepers: runs whose worker stopped heartbeating are redone (memory/leases.py)
    PeriodicJob("consolidation: reclaim dead job runs", "consolidation.runs_reclaim", timedelta(seconds=30)),
    PeriodicJob("chat: reclaim dead reflections", "chat.reflections_reclaim", timedelta(seconds=30)),
    # a user's last turn with no reply after it still becomes evidence (MEMORYWEB_IDLE_TURN_MINUTES)
    PeriodicJob("chat: reflect idle turns", "chat.idle_turns_reflect", timedelta(minutes=5)),
    # session summaries (memory.backend "local"): conversations quiet for memories.minRolloutIdleHours
    PeriodicJob("chat: session summaries", "chat.summaries_all", timedelta(hours=1)),
    # tasks the broker refused are retried by every worker's dispatcher loop too (memoryweb/outbox.py)
    PeriodicJob("memoryweb: deliver the task outbox", "memoryweb.outbox_dispatch", timedelta(minutes=1)),
]


@transaction.atomic
def schedule_install() -> list[str]:
    """Create the beat entries that do not exist yet; return the names created."""
    created = []
    for job in SCHEDULE:
        if PeriodicTask.objects.filter(name=job.name).exists():
            continue
        interval, _ = IntervalSchedule.objects.get_or_create(
            every=int(job.every.total_seconds()), period=IntervalSchedule.SECONDS
        )
        PeriodicTask.objects.create(
            name=job.name, task=job.task, interval=interval, expire_seconds=job.expires_seconds
        )
        created.append(job.name)
    return created
