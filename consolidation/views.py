"""The dashboard's "consolidate now" button (on the jobs page, memory/dashboard/views/jobs.py).

It queues a run and answers at once; the list shows the run queued, and its end arrives as the
`job.finished` live event, which refreshes the list with the run's outcome.
"""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path
from django.views.decorators.http import require_POST

from consolidation.services import consolidation_request
from memory.dashboard.views.base import dashboard_actor, is_htmx, render_fragment, subject_view
from memory.dashboard.views.jobs import jobs_list_context
from memoryweb.errors import FeatureDisabled


@subject_view
@require_POST
def jobs_consolidate(request: HttpRequest, subject) -> HttpResponse:
    """Queue a consolidation tick for the subject (its lease keeps it from running twice)."""
    try:
        run = consolidation_request(subject=subject, actor=dashboard_actor(request))
    except FeatureDisabled as exc:  # nothing queued: the App switches it off
        messages.warning(request, f"Not run: {exc.message}.")
    else:
        messages.info(
            request, f"Consolidation queued (job run {run.pk}); the list shows its outcome when it ends."
        )
    if not is_htmx(request):
        return redirect("dashboard:jobs", subject_id=subject.pk)
    return render_fragment(request, "dashboard/partials/jobs_list.html", jobs_list_context(request, subject))


urlpatterns = [
    path("s/<int:subject_id>/jobs/consolidate/", jobs_consolidate, name="jobs_consolidate"),
]
