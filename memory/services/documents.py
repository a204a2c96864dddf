"""Writes of the session-summary artefacts: SessionExtraction rows (phase 1) and versioned
MemoryDocuments (phase 2, mental models), and pinning a conversation's summary version.

Every text is redacted here, before any row is written (memory/redaction.py), whoever wrote
it: the heuristic path, a model, an operator. A write whose text equals the current version
adds no version.
"""

import hashlib

from django.db import transaction
from django.utils import timezone

from memory.documents import document_summary_for, kind_of_path, project_of
from memory.models import (
    ContextDelivery,
    Conversation,
    DocumentKind,
    JobRun,
    MemoryDocument,
    MemoryDocumentVersion,
    SessionExtraction,
    Subject,
)
from memory.redaction import redact
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
from memoryweb.live import notify


def _clean(text: str) -> str:
    return redact(text or "").text


@transaction.atomic
def session_extraction_write(
    *,
    conversation: Conversation,
    watermark_message_id: int,
    message_count: int,
    last_message_at,
    title: str,
    synopsis: str,
    raw_memory: str,
    method: str,
    input_tokens: int = 0,
    output_tokens: int = 0,
    run: JobRun | None = None,
) -> SessionExtraction:
    """Create or replace the conversation's extraction (one per conversation)."""
    now = timezone.now()
    fields = {
        "subject_id": conversation.subject_id,
        "scope": conversation.scope,
        "working_dir": conversation.working_dir,
        "watermark_message_id": watermark_message_id,
        "message_count": message_count,
        "last_message_at": last_message_at,
        "title": _clean(title)[:200],
        "synopsis": _clean(synopsis),
        "raw_memory": _clean(raw_memory),
        "method": method[:200],
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "run": run,
        "updated_at": now,
    }
    extraction, _ = SessionExtraction.objects.update_or_create(
        conversation=conversation, defaults=fields, create_defaults={**fields, "created_at": now}
    )
    return extraction


@transaction.atomic
def document_write(
    *,
    subject: Subject,
    path: str,
    content: str,
    actor: Actor,
    scope: str = "",
    name: str = "",
    description: str | None = None,
    auto_refresh: bool | None = None,
    builtin: bool | None = None,
    method: str = "",
    input_tokens: int = 0,
    output_tokens: int = 0,
    run: JobRun | None = None,
) -> tuple[MemoryDocument, MemoryDocumentVersion | None]:
    """Write `content` as the document's next version (created on first write; a pruned one
    comes back). Returns the document and the new version, or None when the content is the
    current one already. `description`, `auto_refresh`, `builtin`: None leaves them as they are."""
    kind = kind_of_path(path)
    if kind is None:
        raise ValueError(f"{path!r} is not a memory document path")
    content = _clean(content)
    now = timezone.now()
    document, created = MemoryDocument.objects.select_for_update().get_or_create(
        subject=subject,
        scope=scope,
        path=path,
        defaults={"kind": kind, "name": name, "created_at": now, "updated_at": now},
    )
    changed_fields = []
    if description is not None and document.description != _clean(description):
        document.description = _clean(description)
        changed_fields.append("description")
    for field, value in (("auto_refresh", auto_refresh), ("builtin", builtin)):
        if value is not None and getattr(document, field) != value:
            setattr(document, field, value)
            changed_fields.append(field)
    if document.pruned_at is not None:
        document.pruned_at = None
        changed_fields.append("pruned_at")
    digest = hashlib.sha256(content.encode()).hexdigest()
    version = None
    if document.current is None or document.current.digest != digest:
        number = (document.current.number if document.current else 0) + 1
        last = document.versions.order_by("-number").values_list("number", flat=True).first()
        number = max(number, (last or 0) + 1)
        version = MemoryDocumentVersion.objects.create(
            document=document,
            number=number,
            content=content,
            digest=digest,
            method=method[:200],
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            run=run,
            created_at=now,
        )
        document.current = version
        changed_fields.append("current")
    if changed_fields:
        document.updated_at = now
        document.save(update_fields=[*changed_fields, "updated_at"])
        audit_record(
            actor=actor,
            action="document.write" if version else "document.update",
            subject=subject,
            object_kind="document",
            object_id=document.pk,
            data={"url": document.url, "version": document.current.number if document.current else 0},
        )
        memory_changed(subject_id=subject.pk)
        notify(subject.pk, "documents.changed", {"document": document.pk})
    return document, version


@transaction.atomic
def document_prune(*, document: MemoryDocument, actor: Actor) -> bool:
    """Retire a document (a skill no later run produced): gone from lists and the context,
    its history kept. False when it was pruned already."""
    updated = MemoryDocument.objects.filter(pk=document.pk, pruned_at__isnull=True).update(
        pruned_at=timezone.now(), updated_at=timezone.now()
    )
    if updated:
        audit_record(
            actor=actor,
            action="document.prune",
            subject=document.subject,
            object_kind="document",
            object_id=document.pk,
            data={"url": document.url},
        )
        memory_changed(subject_id=document.subject_id)
        notify(document.subject_id, "documents.changed", {"document": document.pk})
    return bool(updated)


@transaction.atomic
def document_delete(*, document: MemoryDocument, actor: Actor) -> None:
    """Delete a document and its whole history (a mental model the person removes)."""
    subject, url, pk = document.subject, document.url, document.pk
    MemoryDocument.objects.filter(pk=pk).update(current=None)
    document.delete()
    audit_record(
        actor=actor,
        action="document.delete",
        subject=subject,
        object_kind="document",
        object_id=pk,
        data={"url": url},
    )
    memory_changed(subject_id=subject.pk)
    notify(subject.pk, "documents.changed", {"document": pk})


@transaction.atomic
def summaries_clear(*, subject: Subject, actor: Actor, mental_models: bool = False) -> dict:
    """Delete the subject's session-summary data: every extraction (so the next run starts
    from the first message again) and every document but the mental models (with
    `mental_models`, those too). Conversations lose their pinned summary."""
    documents = MemoryDocument.objects.filter(subject=subject)
    if not mental_models:
        documents = documents.exclude(kind=DocumentKind.MENTAL_MODEL)
    Conversation.objects.filter(subject=subject, summary_version__document__in=documents).update(
        summary_version=None
    )
    extractions = SessionExtraction.objects.filter(subject=subject).delete()[0]
    documents.update(current=None)
    removed = documents.count()
    documents.delete()
    result = {"extractions": extractions, "documents": removed}
    audit_record(
        actor=actor,
        action="summaries.clear",
        subject=subject,
        object_kind="subject",
        object_id=subject.pk,
        data=result,
    )
    memory_changed(subject_id=subject.pk)
    notify(subject.pk, "documents.changed", {})
    return result


def conversation_summary_pin(*, conversation: Conversation, version: MemoryDocumentVersion | None) -> None:
    """Make `version` the summary the conversation's stable prefix carries (None: none)."""
    Conversation.objects.filter(pk=conversation.pk).update(summary_version=version)
    conversation.summary_version = version


# the context blocks a reload sends again even when unchanged (memory/context.py names them)
RELOADED_BLOCKS = ("stable_prefix", "mental_models")


@transaction.atomic
def conversation_memory_reload(*, conversation: Conversation, actor: Actor) -> MemoryDocumentVersion | None:
    """The conversation asks for its memory again (`memory mm reload`, the REST twin): its
    stable prefix moves to the current summary of its project (None when there is none yet),
    and its next context sends the stable prefix and the mental models again even where they
    did not change. Returns the summary version now pinned."""
    document = document_summary_for(
        subject=conversation.subject, scope=project_of(conversation.scope, conversation.working_dir)
    )
    version = document.current if document is not None else None
    conversation_summary_pin(conversation=conversation, version=version)
    ContextDelivery.objects.filter(conversation=conversation, block__in=RELOADED_BLOCKS).delete()
    memory_changed(subject_id=conversation.subject_id)  # its cached context carries the old prefix
    audit_record(
        actor=actor,
        action="conversation.memory_reload",
        subject=conversation.subject,
        object_kind="conversation",
        object_id=conversation.pk,
        data={"summary_version": version.number if version else None},
    )
    return version
