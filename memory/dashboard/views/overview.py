"""Overview: counts per kind, activity charts, pending consent, last consolidation."""

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from memory.dashboard.views.base import render_fragment, render_page, subject_config, subject_view
from memory.dashboard.views.jobs import run_details, run_summary
from memory.selectors import subject_overview

CHART_DAYS = 30


@subject_view
@require_GET
def overview(request: HttpRequest, subject) -> HttpResponse:
    stats = subject_overview(subject=subject, days=CHART_DAYS)
    days, added, recalls = stats["days"], stats["added"], stats["recalls"]
    chart_added = {
        "labels": days,
        "datasets": [
            {"label": "Notes", "data": added["notes"]},
            {"label": "Fact versions", "data": added["facts"]},
            {"label": "Lessons", "data": added["lessons"]},
            {"label": "Procedures", "data": added["procedures"]},
        ],
    }
    chart_recalls = {
        "labels": days,
        "datasets": [
            {"label": "Context builds", "data": recalls["context_builds"]},
            {"label": "Cache hits", "data": recalls["cache_hits"]},
        ],
    }
    added_rows = list(
        zip(days, added["notes"], added["facts"], added["lessons"], added["procedures"], strict=True)
    )
    recall_rows = list(zip(days, recalls["context_builds"], recalls["cache_hits"], strict=True))
    context = {
        **_consolidation_context(request, subject, stats),
        "stats": stats,
        "chart_days": CHART_DAYS,
        "chart_added": chart_added,
        "chart_recalls": chart_recalls,
        # newest first in the tables, only days with activity
        "added_rows": [row for row in reversed(added_rows) if any(row[1:])],
        "recall_rows": [row for row in reversed(recall_rows) if any(row[1:])],
    }
    return render_page(
        request,
        subject,
        "dashboard/overview.html",
        context,
        page="overview",
    )


@subject_view
@require_GET
def overview_counts(request: HttpRequest, subject) -> HttpResponse:
    """The counts cards alone, for a refresh after a live update."""
    stats = subject_overview(subject=subject, days=1)
    return render_fragment(
        request, "dashboard/partials/overview_counts.html", {"subject": subject, "stats": stats}
    )


def _consolidation_context(request: HttpRequest, subject, stats: dict) -> dict:
    """The last consolidation in a sentence, and its raw counters (a sweep's cover every
    tenant, so only staff see those)."""
    run = stats["last_consolidation"]
    if run is None:
        return {}
    min_cluster = subject_config(subject)["consolidation.minClusterSize"]
    own = run.subject_id is not None
    return {
        "run_summary": run_summary(run, min_cluster) if own else "",
        "run_details": run_details(run) if own or request.user.is_staff else [],
    }


@subject_view
@require_GET
def overview_pending(request: HttpRequest, subject) -> HttpResponse:
    """The "Waiting for your decision" card alone, for a refresh on `mw:pending`."""
    stats = subject_overview(subject=subject, days=1)
    return render_fragment(
        request, "dashboard/partials/overview_pending.html", {"subject": subject, "stats": stats}
    )


@subject_view
@require_GET
def overview_consolidation(request: HttpRequest, subject) -> HttpResponse:
    """The "Last consolidation" card alone, for a refresh on `mw:jobs`."""
    stats = subject_overview(subject=subject, days=1)
    context = {"subject": subject, "stats": stats, **_consolidation_context(request, subject, stats)}
    return render_fragment(request, "dashboard/partials/overview_consolidation.html", context)
