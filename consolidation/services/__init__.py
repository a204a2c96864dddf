"""Every write of the consolidation app goes through these functions (STYLE.md: services)."""

from consolidation.services.consolidate import (
    clusters_find,
    consolidate_all,
    consolidate_now,
    consolidation_enabled,
    consolidation_key,
    consolidation_request,
    consolidation_run,
    subjects_with_candidates,
)
from consolidation.services.decay import votes_decay
from consolidation.services.lifecycle import LIFECYCLE_STEPS, lifecycle_run
from consolidation.services.reclaim import runs_reclaim

__all__ = [
    "LIFECYCLE_STEPS",
    "clusters_find",
    "consolidate_all",
    "consolidate_now",
    "consolidation_enabled",
    "consolidation_key",
    "consolidation_request",
    "consolidation_run",
    "lifecycle_run",
    "runs_reclaim",
    "subjects_with_candidates",
    "votes_decay",
]
