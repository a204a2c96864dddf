"""The lifecycle run now (POST /api/v1/admin/lifecycle): the periodic jobs' steps — vote decay,
pending-consent expiry, the notes and evidence eviction sweeps — run at once, for one App or
every App, through the same services the beat tasks call."""

from datetime import timedelta

from consolidation.services.decay import votes_decay
from memory.config import get_config
from memory.models import App
from memory.services.audit import Actor
from memory.services.consent import pending_expire
from memory.services.evidence import evidence_evict_sweep
from memory.services.notes import notes_evict_sweep

LIFECYCLE_STEPS = ("decay", "expire", "evict")


def lifecycle_run(*, actor: Actor, app: App | None = None, steps: list[str] | None = None) -> dict:
    """Run `steps` (default all of LIFECYCLE_STEPS, in that order) for `app` (every App
    without): decay forced even if a periodic decay ran lately (`votes_decay(force=True)`; it
    still waits for no one: a decay holding the lease means this one is skipped), pending items
    past each App's `consent.pendingExpiryDays` expired, notes and evidence over their caps
    evicted. Returns what each step did. Safe to repeat, as each service is — except that a
    repeated decay decays again, which is what asking for it means."""
    chosen = [s for s in LIFECYCLE_STEPS if s in (steps or LIFECYCLE_STEPS)]
    result: dict = {}
    if "decay" in chosen:
        run = votes_decay(actor=actor, app=app, force=True)
        result["decay"] = {
            "skipped": run is None,
            "job_run": run.pk if run is not None else None,
            "stats": run.stats if run is not None else {},
        }
    if "expire" in chosen:
        apps = [app] if app is not None else list(App.objects.all())
        expired = 0
        for each in apps:
            days = get_config(each)["consent.pendingExpiryDays"]
            expired += pending_expire(older_than=timedelta(days=days), app=each)
        result["expire"] = {"expired": expired}
    if "evict" in chosen:
        result["evict"] = {
            "notes": notes_evict_sweep(actor=actor, app=app),
            "evidence": evidence_evict_sweep(actor=actor, app=app),
        }
    return result
