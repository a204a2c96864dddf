"""Jobs: the background runs that concern this memory and (for staff) the installation's
diagnose report. The "consolidate now" button posts to consolidation/views.py.

The list's container (`#jobs-list`) reloads itself from `jobs_list` on the `mw:jobs`
event, so a live update can refresh it with `htmx.trigger(document.body, "mw:jobs")`.
"""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path
from django.views.decorators.http import require_GET

from memory.diagnose import diagnose
from memory.models import JobStatus
from memory.selectors import job_runs_recent

from .base import is_htmx, render_fragment, render_page, subject_config, subject_view

RECENT_RUNS = 30
STATUS_BADGE = {
    JobStatus.QUEUED: "badge-primary",
    JobStatus.SKIPPED: "badge-warn",
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


def _count(number: int, one: str, many: str | None = None) -> str:
    return f"{number} {one if number == 1 else (many or one + 's')}"


def run_summary(run, min_cluster: int) -> str:
    """What a consolidation of this memory did, in sentences a person reads (the raw counters
    go in `run_details`)."""
    stats = run.stats or {}
    if run.kind not in KIND_LABEL or run.kind == "votes_decay":
        return ""
    if run.status in (JobStatus.QUEUED, JobStatus.RUNNING):
        return "Consolidation is under way; this updates when it ends."
    if run.status == JobStatus.SKIPPED:
        return "Skipped: another consolidation of this memory was already running."
    if run.status != JobStatus.DONE or run.kind != "consolidate":
        return ""
    if not stats.get("clusters"):
        return (
            f"Nothing to consolidate yet: no group of at least {min_cluster} linked notes sharing a tag. "
            "It will try again as notes arrive."
        )
    lessons, procedures = stats.get("lessons", 0), stats.get("procedures", 0)
    archived = stats.get("notes_archived", 0)
    parts = []
    if lessons:
        made = _count(lessons, "lesson")
        if procedures:
            made += f" and {_count(procedures, 'procedure')}"
        parts.append(f"Merged {_count(archived, 'note')} into {made}; those notes are now archived.")
    else:
        parts.append(
            f"Looked at {_count(stats['clusters'], 'group')} of linked notes; no lesson was written."
        )
    if stats.get("declined"):
        parts.append(f"{_count(stats['declined'], 'group')} had nothing worth a lesson and stayed as notes.")
    if stats.get("changed"):
        parts.append(f"{_count(stats['changed'], 'group')} changed while it ran and will be tried again.")
    if stats.get("llm_fallbacks"):
        parts.append(
            f"The model was unavailable for {_count(stats['llm_fallbacks'], 'group')}; the built-in rules wrote it."
        )
    return " ".join(parts)


def _detail_text(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{key}: {item}" for key, item in value.items()) or "none"
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value) or "none"
    return str(value)


def run_details(run) -> list[tuple[str, str]]:
    """The run's raw counters as (name, text) pairs, for a folded <details>."""
    return [(key.replace("_", " "), _detail_text(value)) for key, value in (run.stats or {}).items()]


def _run_row(run, *, staff: bool, min_cluster: int) -> dict:
    """One run as the list shows it. The stats of a system-wide run describe every tenant, so
    only staff see them."""
    own = run.subject_id is not None
    duration = (run.finished_at - run.started_at).total_seconds() if run.finished_at else None
    return {
        "run": run,
        "label": KIND_LABEL.get(run.kind, run.kind.replace("_", " ").capitalize()),
        "badge": STATUS_BADGE.get(run.status, ""),
        "duration": duration,
        "details": run_details(run) if own or staff else [],
        "summary": run_summary(run, min_cluster) if own else "",
        "error": run.error if own or staff else "",
    }


def jobs_list_context(request: HttpRequest, subject) -> dict:
    runs = job_runs_recent(subject=subject, limit=RECENT_RUNS)
    min_cluster = subject_config(subject)["consolidation.minClusterSize"]
    rows = [_run_row(run, staff=request.user.is_staff, min_cluster=min_cluster) for run in runs]
    return {"subject": subject, "rows": rows}


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


def _diagnose(subject) -> list:
    """The diagnose report for the subject's app, as sections the template walks."""
    report = diagnose(subject.app)
    report.pop("jobs", None)  # the runs are listed above, with more detail
    return [(str(key).replace("_", " "), _tree(value)) for key, value in report.items()]


@subject_view
@require_GET
def jobs(request: HttpRequest, subject) -> HttpResponse:
    context = jobs_list_context(request, subject)
    config = subject_config(subject)
    context["consolidation"] = {
        "min_cluster": config["consolidation.minClusterSize"],
        "interval": config["consolidation.intervalHours"],
        "max_clusters": config["consolidation.maxClustersPerTick"],
    }
    if request.user.is_staff:
        context["diagnose"] = _diagnose(subject)
    return render_page(request, subject, "dashboard/jobs.html", context, page="jobs")


@subject_view
@require_GET
def jobs_list(request: HttpRequest, subject) -> HttpResponse:
    """The list alone (`#jobs-list`), for live refreshes."""
    if not is_htmx(request):
        return redirect("dashboard:jobs", subject_id=subject.pk)
    return render_fragment(request, "dashboard/partials/jobs_list.html", jobs_list_context(request, subject))


S = "s/<int:subject_id>/"

urlpatterns = [
    path(S + "jobs/", jobs, name="jobs"),
    path(S + "jobs/list/", jobs_list, name="jobs_list"),
]
