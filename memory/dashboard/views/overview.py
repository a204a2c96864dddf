"""Overview: counts per kind, activity charts, pending consent, last consolidation."""

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from memory.dashboard.views.base import render_fragment, render_page, subject_view
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
