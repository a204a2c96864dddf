"""What the session-summary pipeline holds and whether it can run, for one subject: the reads
behind `manage.py memory stats|diagnose` and their REST twins (chat/memory_api.py)."""

from django.db.models import Count, Sum
from django.utils import timezone

from chat.summaries.pipeline import KIND, conversations_due, summaries_enabled, summaries_key
from memory.config import get_config
from memory.models import JobRun, JobStatus, MemoryDocument, MemoryDocumentVersion, SessionExtraction, Subject
from memoryweb.llm import provider_status


def _run_row(run: JobRun | None) -> dict | None:
    if run is None:
        return None
    return {
        "id": run.pk,
        "status": run.status,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "stats": run.stats,
        "error": run.error,
    }


def _last_run(subject: Subject) -> JobRun | None:
    return (
        JobRun.objects.filter(key=summaries_key(subject), kind=KIND)
        .exclude(status__in=[JobStatus.QUEUED, JobStatus.RUNNING])
        .order_by("-started_at", "-pk")
        .first()
    )


def summaries_stats(*, subject: Subject) -> dict:
    """Counts of the subject's extractions, documents by kind, versions and tokens spent, and
    its last finished run."""
    extractions = SessionExtraction.objects.filter(subject=subject)
    spent = extractions.aggregate(input=Sum("input_tokens"), output=Sum("output_tokens"))
    documents = MemoryDocument.objects.filter(subject=subject, pruned_at__isnull=True)
    kinds = dict(documents.values_list("kind").annotate(n=Count("pk")).order_by("kind"))
    versions = MemoryDocumentVersion.objects.filter(document__subject=subject)
    written = versions.aggregate(input=Sum("input_tokens"), output=Sum("output_tokens"))
    methods = dict(extractions.values_list("method").annotate(n=Count("pk")).order_by("method"))
    return {
        "extractions": extractions.count(),
        "extraction_methods": methods,
        "documents": {kind: kinds.get(kind, 0) for kind in ("memory", "summary", "skill", "mental_model")},
        "pruned_skills": MemoryDocument.objects.filter(subject=subject, pruned_at__isnull=False).count(),
        "versions": versions.count(),
        "tokens": {
            "input": (spent["input"] or 0) + (written["input"] or 0),
            "output": (spent["output"] or 0) + (written["output"] or 0),
        },
        "last_run": _run_row(_last_run(subject)),
    }


def summaries_diagnose(*, subject: Subject) -> dict:
    """The backend switch, the summaries model and whether it can run, which conversations
    the next run would take (and why the others wait), the lease, the last run's error."""
    config = get_config(subject.app)
    model = next(row for row in provider_status(config) if row["component"] == "summaries")
    selection = conversations_due(subject=subject, config=config)
    now = timezone.now()
    holder = JobRun.objects.filter(key=summaries_key(subject), status=JobStatus.RUNNING).first()
    queued = JobRun.objects.filter(key=summaries_key(subject), status=JobStatus.QUEUED).count()
    last = _last_run(subject)
    return {
        "backend": config["backend"],
        "enabled": summaries_enabled(config),
        "model": {
            "spec": model["spec"],
            "provider": model["provider"],
            "model": model["model"],
            "api_key": model["api_key"],
            "problem": model["problem"],
            "path": "llm" if model["provider"] not in ("", "none") and not model["problem"] else "heuristic",
        },
        "conversations": {
            "due": len(selection["due"]),
            **{key: selection[key] for key in ("active", "old", "deferred", "current")},
        },
        "lease": {
            "held": holder is not None,
            "owner": holder.lease_owner if holder else "",
            "expires_at": holder.lease_expires_at.isoformat() if holder else None,
            "expired": bool(holder and holder.lease_expires_at < now),
            "queued": queued,
        },
        "last_run": _run_row(last),
        "last_error": last.error if last is not None and last.error else "",
    }
