"""Evidence: every user and assistant turn as a memory of its own (memory.models.Evidence).

Reflection records one unit per message it reads (`evidence_record`), whatever extraction
found, so a fact said once is retrievable as the turn itself. The unit holds the message's
text and its speaker's name (blank unless the app sent one), which the boundary
(memory/boundary.py) and `message_add` already redacted; both are scrubbed once more here, as
every stored text is. A named unit reads "Name: text" to ranking, the embedding and the
context (`Evidence.content`), and its name is in the full-text index beside the text.
Consent applies as to any memory: the message's category under the subject's policy makes
the unit visible (allow), pending until the person approves it in the consent queue (ask: a
PendingMemory of kind evidence), or denied (deny: a row without its name and text, never
retrievable). A forgotten unit keeps a row without them too, so a second reflection of its
message does not write it again.
"""

import hashlib

from django.db import connection, transaction
from django.db.models import Count, F
from django.utils import timezone

from memory.config import MemoryConfig, get_config
from memory.models import (
    App,
    Evidence,
    EvidenceStatus,
    ItemKind,
    Message,
    Policy,
    Role,
    SessionExtraction,
    Subject,
)
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
from memory.services.embeddings import embeddings_delete, embeddings_enabled
from memory.services.eviction import eviction_order
from memory.services.scrub import scrub
from memoryweb.live import notify
from memoryweb.outbox import enqueue


def _pending_hash(evidence: Evidence) -> str:
    # per unit, not per text: the same words said twice are two turns, each asked about once
    return hashlib.sha256(f"evidence:{evidence.pk}".encode()).hexdigest()


@transaction.atomic
def evidence_record(
    *, message: Message, category: str, actor: Actor, config: MemoryConfig
) -> Evidence | None:
    """Write the evidence unit of a user or assistant `message` under the consent policy of
    `category` ("" → allow); returns it (None for system messages, empty text, or with
    `evidence.enabled` off). Safe to repeat: a message has at most one unit, and a second call
    returns it unchanged (a forgotten or denied unit stays so)."""
    # consent routes approved evidence back here (evidence_reveal), hence the import here
    from memory.services.consent import consent_policy, pending_queue

    if not config["evidence.enabled"] or message.role == Role.SYSTEM:
        return None
    existing = Evidence.objects.filter(message_id=message.pk).first()
    if existing is not None:
        return existing
    text = scrub(message.text.strip(), where="evidence")
    if not text:
        return None
    name = scrub(message.name, where="evidence")
    conversation = message.conversation
    subject = conversation.subject
    policy = consent_policy(subject=subject, category=category)
    statuses = {Policy.ALLOW.value: EvidenceStatus.VISIBLE, Policy.ASK.value: EvidenceStatus.PENDING}
    status = statuses.get(policy, EvidenceStatus.DENIED)
    now = timezone.now()
    evidence = Evidence.objects.create(
        subject=subject,
        conversation=conversation,
        message=message,
        role=message.role,
        name="" if status == EvidenceStatus.DENIED else name,
        text="" if status == EvidenceStatus.DENIED else text,
        scope=conversation.scope,
        occurred_at=message.occurred_at,
        category=category,
        status=status,
        created_at=now,
        updated_at=now,
    )
    if status == EvidenceStatus.PENDING:
        pending_queue(
            subject=subject,
            kind=ItemKind.EVIDENCE,
            payload={"evidence_id": evidence.pk, "content": evidence.content, "role": message.role},
            category=category,
            content_hash=_pending_hash(evidence),
            source_message=message,
            actor=actor,
        )
    elif status == EvidenceStatus.DENIED:
        audit_record(
            actor=actor,
            action="evidence.denied",
            subject=subject,
            object_kind="evidence",
            object_id=evidence.pk,
            data={"category": category},
        )
    if status != EvidenceStatus.DENIED and embeddings_enabled(config):
        enqueue("memory.evidence_embed", evidence.pk)
    evidence_evict_overflow(subject=subject, config=config, actor=actor)
    return evidence


def evidence_reveal(*, evidence_id: int) -> Evidence | None:
    """Make a pending unit visible (its consent question was approved); returns it, or None
    when it is gone or no longer pending (forgotten meanwhile)."""
    updated = Evidence.objects.filter(pk=evidence_id, status=EvidenceStatus.PENDING).update(
        status=EvidenceStatus.VISIBLE, updated_at=timezone.now()
    )
    evidence = Evidence.objects.filter(pk=evidence_id).first()
    if updated and evidence is not None:
        _extraction_redo(conversation_ids=[evidence.conversation_id])
        memory_changed(subject_id=evidence.subject_id)
        notify(evidence.subject_id, "memory.changed", {"kind": "evidence", "id": evidence.pk})
    return evidence


def evidence_decline(*, evidence_id: int) -> None:
    """A pending unit the person declined: its text goes, and it is never retrievable."""
    declined = Evidence.objects.filter(pk=evidence_id, status=EvidenceStatus.PENDING)
    memory_changed(subject_ids=declined.values_list("subject_id", flat=True))
    declined.update(status=EvidenceStatus.DENIED, name="", text="", updated_at=timezone.now())
    embeddings_delete(kind=ItemKind.EVIDENCE, item_ids=[evidence_id])


def _extraction_redo(*, conversation_ids) -> None:
    """A turn became visible or was forgotten: the session summary of its conversation is
    extracted again on the next run (chat/summaries/pipeline.py reads the watermark)."""
    SessionExtraction.objects.filter(conversation_id__in=conversation_ids).update(watermark_message_id=0)


def _hide(queryset) -> list[int]:
    ids = list(queryset.exclude(status=EvidenceStatus.FORGOTTEN).values_list("pk", flat=True))
    if ids:
        _extraction_redo(
            conversation_ids=set(
                Evidence.objects.filter(pk__in=ids).values_list("conversation_id", flat=True)
            )
        )
        memory_changed(
            subject_ids=set(Evidence.objects.filter(pk__in=ids).values_list("subject_id", flat=True))
        )
        Evidence.objects.filter(pk__in=ids).update(
            status=EvidenceStatus.FORGOTTEN, name="", text="", updated_at=timezone.now()
        )
        embeddings_delete(kind=ItemKind.EVIDENCE, item_ids=ids)
    return ids


@transaction.atomic
def evidence_forget(*, evidence: Evidence, actor: Actor) -> None:
    """Forget the unit: its text and vector go; a row without text stays so that reflecting on
    its message again does not bring it back. Safe to repeat. The audit keeps only its id."""
    _hide(Evidence.objects.filter(pk=evidence.pk))
    audit_record(
        actor=actor,
        action="evidence.forgotten",
        subject=evidence.subject,
        object_kind="evidence",
        object_id=evidence.pk,
    )
    notify(evidence.subject_id, "memory.changed", {"kind": "evidence", "id": evidence.pk})


def evidence_forget_for_messages(*, message_ids: list[int]) -> list[int]:
    """Forget the units of these messages (a forgotten note derived from them must not come
    back as its turn); returns the ids forgotten."""
    if not message_ids:
        return []
    return _hide(Evidence.objects.filter(message_id__in=message_ids))


def evidence_mark_recalled(*, evidence_ids: list[int]) -> None:
    """Count a recall of each unit (utility-weighted eviction reads it). Each recall counts."""
    if evidence_ids:
        Evidence.objects.filter(pk__in=evidence_ids).update(
            recall_count=F("recall_count") + 1, last_recalled_at=timezone.now()
        )


@transaction.atomic
def evidence_evict_overflow(*, subject: Subject, config: MemoryConfig, actor: Actor) -> int:
    """Delete the subject's units beyond `evidence.maxEntries` (oldest first, or least useful
    first with `eviction.utilityWeighted`, as for notes); returns how many. Safe to repeat.
    Rows without text (denied, forgotten) count too: they are rows all the same."""
    limit = config["evidence.maxEntries"]
    overflow = Evidence.objects.filter(subject=subject).count() - limit
    if overflow <= 0:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM memory_evidence WHERE subject_id = %s ORDER BY {eviction_order(config)} LIMIT %s",
            [subject.pk, overflow],
        )
        ids = [row[0] for row in cursor.fetchall()]
    embeddings_delete(kind=ItemKind.EVIDENCE, item_ids=ids)
    deleted = Evidence.objects.filter(pk__in=ids).delete()[0]
    audit_record(
        actor=actor,
        action="evidence.evicted",
        subject=subject,
        object_kind="evidence",
        data={"count": deleted, "ids": ids[:100]},
    )
    memory_changed(subject_id=subject.pk)
    return deleted


def evidence_evict_sweep(*, actor: Actor, app: App | None = None) -> int:
    """Evict overflow for every subject over its app's `evidence.maxEntries`; returns how many
    units went. Safe to repeat."""
    evicted = 0
    for each in [app] if app is not None else list(App.objects.all()):
        config = get_config(each)
        over = (
            Subject.objects.filter(app=each)
            .annotate(units=Count("evidence"))
            .filter(units__gt=config["evidence.maxEntries"])
        )
        for subject in over:
            evicted += evidence_evict_overflow(subject=subject, config=config, actor=actor)
    return evicted
