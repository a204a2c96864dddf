"""Jobs: the background runs that concern this memory, a button to consolidate it now, and (for
staff) the installation's diagnose report.

"Consolidate now" calls `consolidation.services.consolidate_now` in the request, as the API's
ConsolidateApi does: it takes the subject's lease, so a run already in progress is reported, not
doubled. The list's container (`#jobs-list`) reloads itself from `jobs_list` on the `mw:jobs`
event, so a live update can refresh it with `htmx.trigger(document.body, "mw:jobs")`.
"""

import logging

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path
from django.views.decorators.http import require_GET, require_POST

from consolidation.models import JobStatus
from memory.errors import FeatureDisabled
from memory.selectors import job_runs_recent
from memory.services.counters import counter_values

from .base import dashboard_actor, is_htmx, render_fragment, render_page, subject_config, subject_view

logger = logging.getLogger(__name__)

RECENT_RUNS = 30
STATUS_BADGE = {
    JobStatus.RUNNING: "badge-primary",
    JobStatus.DONE: "badge-ok",
    JobStatus.FAILED: "badge-danger",
    JobStatus.ABANDONED: "badge-warn",
}
KIND_LABEL = {
    "consolidate": "Consolidation of this memory",
    "consolidate_all": "Consolidation sweep (all memories)",
    "votes_decay": "Vote decay (all memories)",
}


def _run_row(run, *, staff: bool) -> dict:
    """One run as the list shows it. The stats of a system-wide run describe every tenant, so
    only staff see them."""
    own = run.subject_id is not None
    stats = []
    if own or staff:
        stats = [
            (key.replace("_", " "), value)
            for key, value in (run.stats or {}).items()
            if isinstance(value, int | float | str) and not isinstance(value, bool)
        ]
    duration = (run.finished_at - run.started_at).total_seconds() if run.finished_at else None
    return {
        "run": run,
        "label": KIND_LABEL.get(run.kind, run.kind.replace("_", " ").capitalize()),
        "badge": STATUS_BADGE.get(run.status, ""),
        "duration": duration,
        "stats": stats,
        "error": run.error if own or staff else "",
    }


def _list_context(request: HttpRequest, subject) -> dict:
    runs = job_runs_recent(subject=subject, limit=RECENT_RUNS)
    return {"subject": subject, "rows": [_run_row(run, staff=request.user.is_staff) for run in runs]}


def _tree(value) -> dict:
    """A JSON-like value as nodes the template can walk (it cannot tell a list from a string)."""
    if isinstance(value, dict):
        return {"kind": "dict", "items": [(str(k), _tree(v)) for k, v in value.items()]}
    if isinstance(value, list | tuple):
        return {"kind": "list", "items": [_tree(v) for v in value]}
    if value is None:
        return {"kind": "none"}
    if isinstance(value, bool):
        return {"kind": "value", "text": "yes" if value else "no"}
    return {"kind": "value", "text": str(value)}


def _diagnose(subject) -> tuple[list | None, str]:
    """The diagnose report for the subject's app, or None and why not."""
    try:
        from memory.diagnose import diagnose
    except ImportError as exc:
        return None, f"diagnose is not available in this installation ({exc})"
    try:
        report = diagnose(subject.app)
    except Exception as exc:  # a broken probe must not take the jobs page down with it
        logger.exception("diagnose failed")
        return None, f"diagnose failed: {type(exc).__name__}: {exc}"
    report.pop("jobs", None)  # the runs are listed above, with more detail
    return [(str(key).replace("_", " "), _tree(value)) for key, value in report.items()], ""


@subject_view
@require_GET
def jobs(request: HttpRequest, subject) -> HttpResponse:
    context = _list_context(request, subject)
    config = subject_config(subject)
    context["consolidation"] = {
        "min_cluster": config["consolidation.minClusterSize"],
        "interval": config["consolidation.intervalHours"],
        "max_clusters": config["consolidation.maxClustersPerTick"],
    }
    if request.user.is_staff:
        report, problem = _diagnose(subject)
        context.update(diagnose=report, diagnose_problem=problem)
        if report is None:
            context["counters"] = sorted(counter_values().items())
    return render_page(request, subject, "dashboard/jobs.html", context, page="jobs")


@subject_view
@require_GET
def jobs_list(request: HttpRequest, subject) -> HttpResponse:
    """The list alone (`#jobs-list`), for live refreshes."""
    if not is_htmx(request):
        return redirect("dashboard:jobs", subject_id=subject.pk)
    return render_fragment(request, "dashboard/partials/jobs_list.html", _list_context(request, subject))


def _outcome(run, min_cluster: int) -> tuple[str, str]:
    if run is None:
        return "info", "A consolidation of this memory is already running; its result will show in the list."
    stats = run.stats or {}
    if run.status != JobStatus.DONE:
        return "error", f"Consolidation {run.status}: {run.error or 'see the list'}"
    if not stats.get("clusters"):
        return "info", (
            f"Nothing to consolidate yet: no group of at least {min_cluster} linked notes sharing a tag. "
            "It will try again as notes arrive."
        )
    return "success", (
        f"Consolidation found {stats['clusters']} cluster{'s' if stats['clusters'] != 1 else ''}: "
        f"{stats.get('lessons', 0)} lesson(s) and {stats.get('procedures', 0)} procedure(s) written, "
        f"{stats.get('notes_archived', 0)} note(s) archived into them."
    )


@subject_view
@require_POST
def jobs_consolidate(request: HttpRequest, subject) -> HttpResponse:
    """Run a consolidation tick for the subject now (its lease keeps it from running twice)."""
    from consolidation.services import consolidate_now

    min_cluster = subject_config(subject)["consolidation.minClusterSize"]
    try:
        run = consolidate_now(subject, dashboard_actor(request))
    except FeatureDisabled as exc:  # nothing ran: the App switches it off
        level, text = "warning", f"Not run: {exc.message}."
    except Exception as exc:  # the run is recorded as failed (leases.run_under_lease); say so
        logger.exception("consolidation of subject %s failed", subject.pk)
        level, text = "error", f"Consolidation failed: {type(exc).__name__}: {exc}"
    else:
        level, text = _outcome(run, min_cluster)
    getattr(messages, level)(request, text)
    if not is_htmx(request):
        return redirect("dashboard:jobs", subject_id=subject.pk)
    return render_fragment(request, "dashboard/partials/jobs_list.html", _list_context(request, subject))


S = "s/<int:subject_id>/"

urlpatterns = [
    path(S + "jobs/", jobs, name="jobs"),
    path(S + "jobs/list/", jobs_list, name="jobs_list"),
    path(S + "jobs/consolidate/", jobs_consolidate, name="jobs_consolidate"),
]
