"""Consolidation: the clusters of a subject's linked notes become lessons and procedures.

One run per subject, under the lease `consolidate:subject:<id>`:

1. candidates: the subject's notes that are neither archived nor consolidated;
2. clusters: the NoteLink graph restricted to them (consolidation/clusters.py), at most
   `consolidation.maxClustersPerTick`, skipping clusters the distiller already declined;
3. each cluster is distilled (LLM or heuristic, consolidation/distill/) outside any transaction,
   then written in its own transaction: the lesson, its procedure, and the notes archived into
   it (memory.services.distillation). A run killed mid-way leaves whole clusters only;
4. the lease is heartbeated between clusters; a run whose lease was taken over stops.

A re-run never duplicates a lesson: consolidated notes are no longer candidates, and the write
claims the notes with a conditional UPDATE, so a cluster written by someone else in the
meantime is skipped. No note is ever deleted here.
"""

import dataclasses
import json
import time
from collections import Counter
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q, TextField
from django.db.models.functions import Cast

from consolidation.clusters import Cluster, adjacency, find_clusters
from consolidation.distill import Distillation, SourceNote, distill
from consolidation.models import DeclinedCluster
from memory.config import MemoryConfig, get_config
from memory.leases import (
    DEFAULT_TTL,
    LeaseLost,
    lease_heartbeat,
    lease_owner_id,
    lease_queue,
    lease_skip,
    leases_expire,
    run_under_lease,
)
from memory.models import App, JobRun, JobStatus, Note, NoteLink, Subject
from memory.services.audit import Actor, audit_record
from memory.services.distillation import lesson_distilled_store
from memoryweb.errors import FeatureDisabled
from memoryweb.live import notify
from memoryweb.outbox import enqueue
from memoryweb.profiles import DEFAULT_PROFILE, profile_active

MAX_LESSON_TAGS = 16


def consolidation_key(subject: Subject) -> str:
    return f"consolidate:subject:{subject.pk}"


def _candidates(subject: Subject):
    return Note.objects.filter(
        subject=subject, archived_at__isnull=True, parked_at__isnull=True, consolidated_into__isnull=True
    )


def _tag_list(text: str | None) -> list[str]:
    value = json.loads(text) if text else []
    return [tag for tag in value if isinstance(tag, str)] if isinstance(value, list) else []


def clusters_find(subject: Subject, *, config: MemoryConfig) -> tuple[list[Cluster], dict]:
    """The clusters to distil on this tick, best first, and what was seen on the way.

    Reads, except that it forgets declined clusters whose members changed. With no links
    (links off) there are no edges, so there are no clusters."""
    candidates = _candidates(subject)
    linked = Exists(NoteLink.objects.filter(src=OuterRef("pk"))) | Exists(
        NoteLink.objects.filter(dst=OuterRef("pk"))
    )
    # A note without links is a cluster of one: only linked candidates are read. Tags are read
    # as text and parsed once per distinct value (most notes share a handful of tag sets).
    rows = (
        candidates.filter(linked).annotate(tags_text=Cast("tags", TextField())).values_list("id", "tags_text")
    )
    parsed: dict[str, list[str]] = {}
    tags: dict[int, list[str]] = {}
    for note_id, text in rows:
        if text not in parsed:
            parsed[text] = _tag_list(text)
        tags[note_id] = parsed[text]
    edges = NoteLink.objects.filter(src__subject=subject).values_list("src_id", "dst_id")
    graph = adjacency(tags, edges.iterator(chunk_size=5000))
    found = find_clusters(
        graph,
        tags,
        min_size=config["consolidation.minClusterSize"],
        max_size=config["consolidation.maxClusterSize"],
        require_shared_tag=config["consolidation.requireSharedTag"],
    )
    declined = set(DeclinedCluster.objects.filter(subject=subject).values_list("signature", flat=True))
    current = {cluster.signature for cluster in found}
    stale = declined - current
    if stale:  # their members changed: the table holds only clusters that still exist
        DeclinedCluster.objects.filter(subject=subject, signature__in=stale).delete()
    eligible = [cluster for cluster in found if cluster.signature not in declined]
    stats = {
        "candidates": candidates.count(),
        "linked_candidates": len(tags),
        "links": sum(len(neighbours) for neighbours in graph.values()) // 2,
        "clusters_found": len(found),
        "clusters_declined_before": len(found) - len(eligible),
    }
    return eligible[: config["consolidation.maxClustersPerTick"]], stats


def _source_notes(subject: Subject, cluster: Cluster) -> list[SourceNote]:
    rows = _candidates(subject).filter(pk__in=cluster.note_ids)
    return [
        SourceNote(id=n.pk, content=n.content, tags=list(n.tags), when=n.occurred_at or n.created_at)
        for n in rows.only("id", "content", "tags", "occurred_at", "created_at")
    ]


def _lesson_tags(notes: list[SourceNote], tag: str) -> list[str]:
    """The cluster's tag first, then every tag at least half of the notes carry."""
    counts = Counter(t for note in notes for t in dict.fromkeys(note.tags))
    common = sorted(
        (t for t, c in counts.items() if 2 * c >= len(notes) and t != tag), key=lambda t: (-counts[t], t)
    )
    return ([tag] if tag else []) + common[: MAX_LESSON_TAGS - 1]


def _decline(subject: Subject, cluster: Cluster, distiller: str) -> None:
    try:
        with transaction.atomic():
            DeclinedCluster.objects.create(
                subject=subject, signature=cluster.signature, size=len(cluster.note_ids), distiller=distiller
            )
    except IntegrityError:
        pass  # declined by a concurrent run already


def _store(subject: Subject, cluster: Cluster, notes: list[SourceNote], result: Distillation, actor: Actor):
    """Write the lesson in place of the notes it rests on; None when the cluster changed.
    `result.procedure` is None already when procedures are switched off."""
    rests_on = set(result.source_ids)
    sources = [note for note in notes if note.id in rests_on]
    lesson = lesson_distilled_store(
        subject=subject,
        note_ids=[note.id for note in sources],
        text=result.lesson or "",
        tags=_lesson_tags(sources, cluster.tag),
        procedure=(result.procedure.title, result.procedure.steps) if result.procedure else None,
        distiller=result.distiller,
        actor=actor,
    )
    return lesson, len(sources)


def _consolidate(run: JobRun, subject: Subject, config: MemoryConfig, actor: Actor, owner: str) -> dict:
    started = time.perf_counter()
    clusters, stats = clusters_find(subject, config=config)
    stats["find_ms"] = round((time.perf_counter() - started) * 1000, 1)
    stats.update(
        clusters=len(clusters),
        lessons=0,
        procedures=0,
        notes_archived=0,
        declined=0,
        changed=0,  # a member was archived, consolidated or forgotten since the graph was read
        llm_fallbacks=0,
        lesson_ids=[],
        distillers={},
    )
    distill_s = 0.0
    for cluster in clusters:
        notes = _source_notes(subject, cluster)
        if len(notes) == len(cluster.note_ids):
            t0 = time.perf_counter()
            result = distill(notes, tag=cluster.tag, config=config)
            distill_s += time.perf_counter() - t0
            if not config["procedures.enabled"]:
                result = dataclasses.replace(result, procedure=None)
            stats["llm_fallbacks"] += result.fallback
            stats["distillers"][result.distiller] = stats["distillers"].get(result.distiller, 0) + 1
            if result.declined:
                _decline(subject, cluster, result.distiller)
                stats["declined"] += 1
            else:
                lesson, archived = _store(subject, cluster, notes, result, actor)
                if lesson is not None:
                    stats["lessons"] += 1
                    stats["procedures"] += result.procedure is not None
                    stats["notes_archived"] += archived
                    stats["lesson_ids"].append(lesson.pk)
                else:
                    stats["changed"] += 1
        else:
            stats["changed"] += 1
        if not lease_heartbeat(run, owner):
            raise LeaseLost(run.key)
    stats["distill_ms"] = round(distill_s * 1000, 1)
    stats["total_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return stats


SWITCHES = (
    ("consolidation.enabled", "consolidation is"),
    ("lessons.enabled", "lessons (what consolidation distils) are"),
)


def consolidation_enabled(config: MemoryConfig) -> bool:
    """Consolidation runs only with itself and lessons switched on (a procedure is written
    with its lesson, so procedures alone give it nothing to write)."""
    return all(config[key] for key, _ in SWITCHES)


def consolidation_check_enabled(config: MemoryConfig) -> None:
    """Raise FeatureDisabled naming the first switch that turns consolidation off."""
    for key, what in SWITCHES:
        if not config[key]:
            raise FeatureDisabled(
                f"{what} switched off for this app (memory.{key} is false)", field=f"memory.{key}"
            )


def consolidation_run(
    *,
    subject: Subject,
    config: MemoryConfig,
    actor: Actor,
    owner: str,
    ttl: timedelta = DEFAULT_TTL,
    queued: JobRun | None = None,
) -> JobRun | None:
    """Consolidate the subject's clusters under its lease; returns the finished JobRun (its
    `stats` say what was found and written), or None when another worker holds the lease.
    With `queued` (a requested run), that row is the one claimed; it ends skipped when another
    run of the subject is in progress.

    Writes lessons, procedures, their first versions and audit events, archives the notes they
    came from, and records declined clusters. Safe to repeat and to kill: see the module doc.
    Raises FeatureDisabled, before taking the lease or writing anything, when the App switches
    consolidation or lessons off (`consolidation_enabled`); a queued run then ends skipped.
    """
    try:
        consolidation_check_enabled(config)
    except FeatureDisabled as exc:
        if queued is not None:
            lease_skip(queued, reason=exc.message)
        raise
    return run_under_lease(
        consolidation_key(subject),
        owner,
        lambda run: _consolidate(run, subject, config, actor, owner),
        kind="consolidate",
        subject=subject,
        ttl=ttl,
        queued=queued,
    )


def consolidate_now(*, subject: Subject, actor: Actor, job_run_id: int | None = None) -> JobRun | None:
    """One consolidation tick for the subject, in this process (the task behind "consolidate
    now", and the CLI). With `job_run_id`, the queued run `consolidation_request` wrote is the
    one claimed. None when a run for the subject is already in progress, or the queued run was
    taken by an earlier delivery of the same task (safe to repeat)."""
    queued = None
    if job_run_id is not None:
        queued = JobRun.objects.filter(pk=job_run_id, subject=subject).first()
        if queued is None or queued.status != JobStatus.QUEUED:
            return None
    with profile_active(queued.profile if queued is not None else DEFAULT_PROFILE):
        return consolidation_run(
            subject=subject,
            config=get_config(subject.app),
            actor=actor,
            owner=lease_owner_id(),
            queued=queued,
        )


def consolidation_request(*, subject: Subject, actor: Actor, profile: str = DEFAULT_PROFILE) -> JobRun:
    """Ask for a consolidation tick of the subject: writes a queued JobRun and an audit event,
    and starts the task after commit; returns the run at once (the API, the dashboard and the
    admin report its id; the run's end is announced as `job.finished`). Each call is one
    request; two requests while one runs end with the second skipped. Raises FeatureDisabled,
    writing nothing, when the App switches consolidation off."""
    consolidation_check_enabled(get_config(subject.app))
    run = lease_queue(consolidation_key(subject), kind="consolidate", subject=subject, profile=profile)
    audit_record(
        actor=actor,
        action="subject.consolidation_requested",
        subject=subject,
        object_kind="job_run",
        object_id=run.pk,
    )
    notify(subject.pk, "job.queued", {"id": run.pk, "kind": run.kind})
    enqueue("consolidation.consolidate_subject", subject.pk, run.pk)
    return run


def subjects_with_candidates():
    """Subjects with at least one linked note that is neither archived nor consolidated."""
    linked = NoteLink.objects.filter(
        Q(src__archived_at__isnull=True) & Q(src__consolidated_into__isnull=True)
    ).values("src__subject_id")
    return Subject.objects.filter(pk__in=linked).select_related("app").order_by("pk")


def consolidate_all(*, owner: str | None = None) -> JobRun | None:
    """Start one consolidation task per subject with candidates whose App has consolidation
    switched on (on commit), under the lease
    `consolidate:all`; also mark runs whose workers died as abandoned. Returns the sweep's
    JobRun (how many subjects it started), or None when another sweep holds the lease.

    Each subject runs in its own task, with its own time limits and its own lease, so a slow
    subject delays no other and a subject still running from the last tick is skipped, not run
    twice. Safe to repeat for the same reason."""

    def sweep(run: JobRun) -> dict:
        rows = subjects_with_candidates().values_list("pk", "app_id")
        switched_on: dict[int, bool] = {}
        for app in App.objects.filter(pk__in={app_id for _, app_id in rows}):
            switched_on[app.pk] = consolidation_enabled(get_config(app))
        subject_ids = [pk for pk, app_id in rows if switched_on.get(app_id)]
        for subject_id in subject_ids:
            enqueue("consolidation.consolidate_subject", subject_id)
        return {"abandoned": leases_expire(), "subjects_started": len(subject_ids)}

    return run_under_lease("consolidate:all", owner or lease_owner_id(), sweep, kind="consolidate_all")
