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

__all__ = [
    "clusters_find",
    "consolidate_all",
    "consolidate_now",
    "consolidation_enabled",
    "consolidation_key",
    "consolidation_request",
    "consolidation_run",
    "subjects_with_candidates",
    "votes_decay",
]
