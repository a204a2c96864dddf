"""The session-summary run of one subject: phase 1 over the conversations that are due, then
phase 2 over every project scope they touched, under the subject's lease.

Which conversations are due (`conversations_due`): those with messages past their extraction's
watermark (or with none), whose last message happened (`occurred_at`) at least
`memories.minRolloutIdleHours` ago (a conversation still receiving messages is never
extracted) and at most `memories.maxRolloutAgeDays` ago — event time, so a finished
conversation a chat app imports with its own times is idle at once; the newest `memories.maxRolloutsPerStartup` of them per run,
the rest left for the next one. `force` (rebuild) ignores the watermarks and re-extracts every
conversation inside the two windows.

Phase 2 composes each touched scope (and the subject as a whole, scope "") from all of its
extractions and writes MEMORY.md, memory_summary.md and the skills in one transaction, pruning
the scope's skills the composition no longer has (their history stays). A run killed before
that transaction leaves the previous versions as they were; its lease stops heartbeating and
the sweeper (consolidation.services.reclaim) queues the run again, which redoes phase 2 for
every scope whose documents are older than its newest extraction.
"""

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from chat.summaries import compose, extract
from chat.summaries.blocks import Composition, Extraction
from chat.summaries.mental_models import mental_models_refresh
from memory.categories import classify_category
from memory.config import MemoryConfig, get_config
from memory.documents import MEMORY_MD, SUMMARY_MD, document_get, project_of, skill_path
from memory.leases import LeaseLost, lease_heartbeat, lease_owner_id, lease_queue, run_under_lease
from memory.models import (
    Conversation,
    DocumentKind,
    Evidence,
    EvidenceStatus,
    JobRun,
    MemoryDocument,
    Message,
    Note,
    Policy,
    Role,
    SessionExtraction,
    Subject,
)
from memory.services.audit import Actor, audit_record
from memory.services.consent import consent_policy
from memory.services.documents import document_prune, document_write, session_extraction_write
from memoryweb.errors import FeatureDisabled
from memoryweb.live import notify
from memoryweb.outbox import enqueue
from memoryweb.profiles import DEFAULT_PROFILE

logger = logging.getLogger(__name__)

KIND = "summaries"


def summaries_key(subject: Subject) -> str:
    return f"summaries:subject:{subject.pk}"


def summaries_enabled(config: MemoryConfig) -> bool:
    return config["backend"] == "local"


def summaries_check_enabled(config: MemoryConfig) -> None:
    if not summaries_enabled(config):
        raise FeatureDisabled(
            'session summaries are off for this app: set memory.backend to "local"', field="memory.backend"
        )


def conversations_due(*, subject: Subject, config: MemoryConfig, now=None, force: bool = False) -> dict:
    """{"due": [conversations, newest first], "active": n, "old": n, "deferred": n, "current": n}."""
    now = now or timezone.now()
    idle_before = now - timedelta(hours=config["memories.minRolloutIdleHours"])
    oldest = now - timedelta(days=config["memories.maxRolloutAgeDays"])
    rows = (
        Conversation.objects.filter(subject=subject)
        .annotate(last_id=Max("messages__id"), last_at=Max("messages__occurred_at"))
        .filter(last_id__isnull=False)
        .select_related("extraction")
        .order_by("-last_at", "-pk")
    )
    counts = {"active": 0, "old": 0, "deferred": 0, "current": 0}
    due: list[Conversation] = []
    for conversation in rows:
        if conversation.last_at > idle_before:
            counts["active"] += 1
            continue
        if conversation.last_at < oldest:
            counts["old"] += 1
            continue
        extraction = getattr(conversation, "extraction", None)
        if not force and extraction is not None and extraction.watermark_message_id >= conversation.last_id:
            counts["current"] += 1
            continue
        if len(due) >= config["memories.maxRolloutsPerStartup"]:
            counts["deferred"] += 1
            continue
        due.append(conversation)
    return {"due": due, **counts}


def _consented(messages: list[Message], subject: Subject) -> list[Message]:
    """The messages the person lets memory keep: a turn whose evidence unit is pending, denied
    or forgotten is left out, and so is one never reflected on whose consent category
    (memory.categories) is not `allow` — a summary must not keep what the consent
    gate holds back (health `ask` by default, say)."""
    status = dict(
        Evidence.objects.filter(message__in=[m.pk for m in messages]).values_list("message_id", "status")
    )
    policies: dict[str, str] = {}
    kept = []
    for message in messages:
        if message.pk in status:
            if status[message.pk] == EvidenceStatus.VISIBLE:
                kept.append(message)
            continue
        category = classify_category(message.text)
        if category not in policies:
            policies[category] = consent_policy(subject=subject, category=category)
        if policies[category] == Policy.ALLOW:
            kept.append(message)
    return kept


def _conversation_inputs(conversation: Conversation) -> tuple[list[Message], list[Note]]:
    messages = list(
        Message.objects.filter(conversation=conversation, role__in=[Role.USER, Role.ASSISTANT]).order_by(
            "occurred_at", "id"
        )
    )
    notes = list(
        Note.objects.filter(
            conversation=conversation, archived_at__isnull=True, parked_at__isnull=True
        ).order_by("created_at", "id")
    )
    return messages, notes


def conversation_extract(*, conversation: Conversation, config: MemoryConfig, run: JobRun | None = None):
    """Phase 1 for one conversation: extract and write its SessionExtraction (replacing the
    last one). Returns the row, or None for a conversation with no user or assistant message."""
    messages, notes = _conversation_inputs(conversation)
    if not messages:
        return None
    kept = _consented(messages, conversation.subject)
    if kept:
        result = extract.session_extract(conversation=conversation, messages=kept, notes=notes, config=config)
    else:  # every turn held back by consent: an empty extraction, so the watermark moves on
        result = Extraction(title="", synopsis="", sections={}, method="heuristic")
    last_id = Message.objects.filter(conversation=conversation).aggregate(last=Max("id"))["last"]
    return session_extraction_write(
        conversation=conversation,
        watermark_message_id=last_id,
        message_count=len(messages),
        last_message_at=max(m.occurred_at for m in messages),
        title=result.title,
        synopsis=result.synopsis,
        raw_memory=result.raw_memory,
        method=result.method,
        input_tokens=result.input_tokens,
        output_tokens=result.output_tokens,
        run=run,
    )


def scope_extractions(*, subject: Subject, scope: str) -> list[SessionExtraction]:
    """The extractions phase 2 reads for `scope`, newest first ("" = all of the subject's)."""
    rows = SessionExtraction.objects.filter(subject=subject).order_by("-last_message_at", "-pk")
    if not scope:
        return list(rows)
    return [e for e in rows if project_of(e.scope, e.working_dir) == scope]


def scopes_stale(*, subject: Subject) -> list[str]:
    """The scopes composed before their newest extraction was written (or never). A scope's
    summary document's `updated_at` is when the scope was last composed (`_documents_write`
    stamps it even when the summary came out unchanged, or that scope would stay stale)."""
    newest: dict[str, datetime] = {}
    for extraction in SessionExtraction.objects.filter(subject=subject):
        for scope in {"", project_of(extraction.scope, extraction.working_dir)}:
            if scope not in newest or extraction.updated_at > newest[scope]:
                newest[scope] = extraction.updated_at
    stale = []
    for scope, updated_at in newest.items():
        document = document_get(subject=subject, scope=scope, path=SUMMARY_MD)
        if document is None or document.current is None or document.updated_at < updated_at:
            stale.append(scope)
    return sorted(stale)


@transaction.atomic
def _documents_write(*, subject: Subject, scope: str, composition: Composition, actor: Actor, run) -> dict:
    """Write one scope's composition: all of it or, killed half-way, none of it."""
    common = {
        "subject": subject,
        "scope": scope,
        "actor": actor,
        "method": composition.method,
        "run": run,
    }
    written = 0
    _, version = document_write(
        path=MEMORY_MD,
        content=composition.memory_md,
        input_tokens=composition.input_tokens,
        output_tokens=composition.output_tokens,
        **common,
    )
    written += version is not None
    kept = set()
    for skill in composition.skills:
        path = skill_path(skill.name)
        kept.add(path)
        _, version = document_write(
            path=path,
            content=compose.skill_markdown(skill),
            name=skill.name,
            description=skill.description,
            **common,
        )
        written += version is not None
    pruned = 0
    for document in MemoryDocument.objects.filter(
        subject=subject, scope=scope, kind=DocumentKind.SKILL, pruned_at__isnull=True
    ).exclude(path__in=kept):
        pruned += document_prune(document=document, actor=actor)
    # the summary last: a context reads the skills "as of" the summary version it carries
    # (memory/context_summary.py), so they must all be written and pruned before it
    _, version = document_write(path=SUMMARY_MD, content=composition.summary_md, **common)
    written += version is not None
    # when the scope was last composed, even into the same summary (scopes_stale reads it)
    MemoryDocument.objects.filter(subject=subject, scope=scope, path=SUMMARY_MD).update(
        updated_at=timezone.now()
    )
    return {"versions": written, "skills": len(kept), "pruned": pruned}


def scope_consolidate(*, subject: Subject, scope: str, config: MemoryConfig, actor: Actor, run=None) -> dict:
    """Phase 2 for one scope: compose its documents from its extractions and write them."""
    extractions = scope_extractions(subject=subject, scope=scope)
    if not extractions:
        return {"versions": 0, "skills": 0, "pruned": 0}
    composition = compose.documents_compose(
        subject=subject, scope=scope, extractions=extractions, config=config
    )
    return _documents_write(subject=subject, scope=scope, composition=composition, actor=actor, run=run)


def summaries_run(
    *,
    subject: Subject,
    actor: Actor,
    force: bool = False,
    queued: JobRun | None = None,
    owner: str | None = None,
) -> JobRun | None:
    """One run for `subject` under its lease: phase 1 over the due conversations, phase 2 over
    the scopes they touched (every scope with `force`). Returns the finished JobRun, or None
    when another run holds the lease. Raises FeatureDisabled when the App's backend is off."""
    config = get_config(subject.app)
    summaries_check_enabled(config)
    owner = owner or lease_owner_id()
    lease = timedelta(seconds=config["memories.leaseSeconds"])

    def work(run: JobRun) -> dict:
        selection = conversations_due(subject=subject, config=config, force=force)
        stats = {key: selection[key] for key in ("active", "old", "deferred", "current")}
        stats.update(extracted=0, empty=0, scopes=0, versions=0, skills=0, pruned=0, methods={})
        touched: set[str] = set()
        for conversation in selection["due"]:
            if not lease_heartbeat(run, owner, lease):
                raise LeaseLost(run.key)
            extraction = conversation_extract(conversation=conversation, config=config, run=run)
            if extraction is None:
                stats["empty"] += 1
                continue
            stats["extracted"] += 1
            stats["methods"][extraction.method] = stats["methods"].get(extraction.method, 0) + 1
            touched.update({"", project_of(extraction.scope, extraction.working_dir)})
        scopes = set(scopes_stale(subject=subject)) | touched
        if force:
            scopes |= {""} | {
                project_of(e.scope, e.working_dir) for e in SessionExtraction.objects.filter(subject=subject)
            }
        for scope in sorted(scopes):
            if not lease_heartbeat(run, owner, lease):
                raise LeaseLost(run.key)
            written = scope_consolidate(subject=subject, scope=scope, config=config, actor=actor, run=run)
            stats["scopes"] += 1
            for key in ("versions", "skills", "pruned"):
                stats[key] += written[key]
        stats["mental_models"] = mental_models_refresh(subject=subject, actor=actor, run=run)["versions"]
        return stats

    run = run_under_lease(
        summaries_key(subject), owner, work, kind=KIND, subject=subject, ttl=lease, queued=queued
    )
    if run is not None:
        notify(subject.pk, "job.finished", {"id": run.pk, "kind": KIND, "status": run.status})
    return run


def summaries_request(
    *, subject: Subject, actor: Actor, force: bool = False, profile: str = DEFAULT_PROFILE
) -> JobRun:
    """Ask for a run of the subject (`enqueue`; `force`: a rebuild): a queued JobRun, its task
    started on commit; returns the run at once. Raises FeatureDisabled, writing nothing, when
    the App's backend is off."""
    summaries_check_enabled(get_config(subject.app))
    run = lease_queue(summaries_key(subject), kind=KIND, subject=subject, profile=profile)
    if force:
        JobRun.objects.filter(pk=run.pk).update(stats={"force": True})
        run.stats = {"force": True}
    audit_record(
        actor=actor,
        action="subject.summaries_requested",
        subject=subject,
        object_kind="job_run",
        object_id=run.pk,
        data={"force": force},
    )
    notify(subject.pk, "job.queued", {"id": run.pk, "kind": KIND})
    enqueue("chat.summaries_subject", subject.pk, run.pk)
    return run


def subjects_due() -> list[Subject]:
    """Subjects of apps with the backend on that have a conversation newer than its extraction."""
    subjects = []
    candidates = (
        Subject.objects.filter(conversations__messages__isnull=False)
        .distinct()
        .select_related("app")
        .order_by("pk")
    )
    for subject in candidates:
        if subject.app.paused:
            continue
        config = get_config(subject.app)
        if summaries_enabled(config) and (
            conversations_due(subject=subject, config=config)["due"] or scopes_stale(subject=subject)
        ):
            subjects.append(subject)
    return subjects
