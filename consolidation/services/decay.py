"""Vote decay: every vote_score shrinks by `voting.signalDecay` per tick, so old votes fade."""

from collections import defaultdict
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from memory.config import get_config
from memory.leases import lease_owner_id, run_under_lease
from memory.models import App, JobRun, JobStatus
from memory.services.audit import Actor, audit_record
from memory.services.distillation import vote_scores_decay

DECAY_KEY = "votes_decay"
# a periodic tick within this long after the last one is a repeat (a redelivered task) and is
# skipped; the schedule runs decay every 6 hours
MIN_GAP = timedelta(hours=3)


def votes_decay(
    *, actor: Actor, app: App | None = None, force: bool = False, owner: str | None = None
) -> JobRun | None:
    """Multiply the vote scores of notes, facts, lessons and procedures by each app's
    `voting.signalDecay` (of `app` only, when given; apps with `voting.enabled` false are left as
    they are): one UPDATE per table and factor, in one
    transaction, under the lease `votes_decay`. Returns the JobRun, or None when it did not run:
    another decay holds the lease, or — for all apps, unless `force` — one for all apps started
    less than MIN_GAP ago (so a periodic task delivered twice decays once)."""
    recent = JobRun.objects.filter(
        key=DECAY_KEY, status=JobStatus.DONE, started_at__gte=timezone.now() - MIN_GAP, stats__scope="all"
    )
    if not force and app is None and recent.exists():
        return None

    def decay(run: JobRun) -> dict:
        groups: dict[float, list[int]] = defaultdict(list)
        apps = [app] if app is not None else list(App.objects.all())
        off = []
        for each in apps:
            config = get_config(each)
            if config["voting.enabled"]:
                groups[config["voting.signalDecay"]].append(each.pk)
            else:  # its scores neither count nor fade (memory.voting.enabled)
                off.append(each.pk)
        changed: dict[str, int] = defaultdict(int)
        with transaction.atomic():
            for factor, app_ids in groups.items():
                for table, count in vote_scores_decay(factor=factor, app_ids=app_ids).items():
                    changed[table] += count
        stats = {"scope": f"app:{app.pk}" if app else "all", "factors": sorted(groups), **changed}
        if off:
            stats["voting_off_apps"] = off
        audit_record(actor=actor, action="votes.decayed", app=app, data=stats)
        return stats

    return run_under_lease(DECAY_KEY, owner or lease_owner_id(), decay, kind="votes_decay")
