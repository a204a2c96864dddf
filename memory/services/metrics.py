"""The service's metrics, computed from the database and kept as a MetricSnapshot
(POST /api/v1/admin/metrics; docs/admin-api.md#metrics)."""

import math
from collections import Counter
from datetime import timedelta

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from memory.models import (
    App,
    Evidence,
    Lesson,
    MetricSnapshot,
    Note,
    PendingMemory,
    PendingStatus,
    Procedure,
    ProfileFact,
    RetrievalEvent,
    Subject,
)


def _percentile(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, math.ceil(p / 100 * len(ordered)) - 1)  # nearest rank
    return round(ordered[rank], 3)


def retrieval_summary(*, app: App | None, since) -> dict:
    """RetrievalEvents since `since`: count, p50/p95 latency, cache hit rate, tokens, and the
    items chosen per section and per kind."""
    events = RetrievalEvent.objects.filter(created_at__gte=since)
    if app is not None:
        events = events.filter(subject__app=app)
    latencies, tokens, hits = [], 0, 0
    sections: Counter = Counter()
    kinds: Counter = Counter()
    for latency, from_cache, spent, items in events.values_list(
        "latency_ms", "from_cache", "tokens", "items"
    ):
        latencies.append(latency)
        hits += bool(from_cache)
        tokens += int((spent or {}).get("total", 0))
        for item in items or []:
            sections[item.get("section", "")] += 1
            kinds[item.get("kind", "")] += 1
    count = len(latencies)
    return {
        "count": count,
        "latency_ms": {"p50": _percentile(latencies, 50), "p95": _percentile(latencies, 95)},
        "cache_hit_rate": round(hits / count, 4) if count else None,
        "tokens": {"total": tokens, "mean": round(tokens / count, 1) if count else None},
        "items_per_section": dict(sorted(sections.items())),
        "items_per_kind": dict(sorted(kinds.items())),
    }


@transaction.atomic
def metrics_compute(*, app: App | None, window_hours: int = 24) -> MetricSnapshot:
    """Count what is held (per kind), what waits (pending queue), the evidence, and summarize
    the retrievals of the last `window_hours`; keep it as a snapshot."""
    now = timezone.now()

    def scoped(queryset, path="subject__app"):
        return queryset if app is None else queryset.filter(**{path: app})

    pending = dict(
        scoped(PendingMemory.objects.all())
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    data = {
        "window_hours": window_hours,
        "counts": {
            "subjects": scoped(Subject.objects.all(), "app").count(),
            "facts": scoped(ProfileFact.objects.filter(valid_to=None)).count(),
            "notes": scoped(Note.objects.all()).count(),
            "evidence": scoped(Evidence.objects.all()).count(),
            "lessons": scoped(Lesson.objects.all()).count(),
            "procedures": scoped(Procedure.objects.all()).count(),
        },
        "evidence": dict(
            scoped(Evidence.objects.all())
            .values_list("status")
            .annotate(n=Count("id"))
            .values_list("status", "n")
        ),
        "pending": {status: pending.get(status, 0) for status in PendingStatus.values},
        "retrievals": retrieval_summary(app=app, since=now - timedelta(hours=window_hours)),
    }
    return MetricSnapshot.objects.create(app=app, computed_at=now, data=data)
