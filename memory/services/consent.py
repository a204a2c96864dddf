"""Consent gating: a sensitive candidate memory is stored, queued for the person, or dropped.

Extracted memories (reflection) pass through `memory_candidate_route`. A candidate without a
category is stored. In a category the subject allows it is stored with its category; with
"ask" (the default for every sensitive category) it waits as a PendingMemory until the person
approves it; with "deny" it is dropped and counted. A candidate the person rejected once is
not asked again (same normalised content).
"""

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memory.config import MemoryConfig
from memory.models import (
    App,
    ConsentCategory,
    Conversation,
    ItemKind,
    Origin,
    PendingMemory,
    PendingStatus,
    Policy,
    Subject,
    SubjectConsent,
)
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
from memory.services.evidence import evidence_decline, evidence_reveal
from memory.services.facts import fact_set
from memory.services.notes import note_store
from memoryweb.counters import counter_add
from memoryweb.errors import InvalidInput
from memoryweb.live import notify


@dataclass
class RouteOutcome:
    action: str  # stored | pending | denied | rejected_before | already_pending
    obj: object = None


def _category(slug: str) -> ConsentCategory:
    category = ConsentCategory.objects.filter(slug=slug).first()
    if category is None:
        raise InvalidInput(f"unknown consent category {slug!r}", field="category")
    return category


def consent_policy(*, subject: Subject, category: str) -> str:
    """The effective policy for `category` ("" → allow)."""
    if not category:
        return Policy.ALLOW
    own = SubjectConsent.objects.filter(subject=subject, category__slug=category).first()
    return own.policy if own else _category(category).default_policy


@transaction.atomic
def consent_policy_set(*, subject: Subject, category: str, policy: str, actor: Actor) -> SubjectConsent:
    """Set the subject's policy for a category. Safe to repeat."""
    if policy not in Policy.values:
        raise InvalidInput(f"policy must be one of {', '.join(Policy.values)}", field="policy")
    row, _ = SubjectConsent.objects.update_or_create(
        subject=subject,
        category=_category(category),
        defaults={"policy": policy, "updated_at": timezone.now()},
    )
    audit_record(
        actor=actor,
        action="consent.policy_set",
        subject=subject,
        object_kind="consent",
        object_id=category,
        data={"policy": policy},
    )
    memory_changed(subject_id=subject.pk)
    return row


def _content_hash(kind: str, payload: dict) -> str:
    if kind == ItemKind.FACT:
        text = f"{payload['key']}={payload['value']}"
    else:
        text = payload["content"]
    normalised = " ".join(text.lower().split())
    return hashlib.sha256(f"{kind}:{normalised}".encode()).hexdigest()


def _revised(*, subject, kind, payload, category, source_message, actor, config, origin):
    """The candidate as new evidence against what the subject believes (belief_revise): the
    row that holds it afterwards."""
    from memory.beliefs.detect import Claim
    from memory.services.beliefs import belief_store_revised

    occurred_at = payload.get("occurred_at")
    if kind == ItemKind.FACT:
        claim = Claim(
            kind="fact",
            key=payload["key"],
            value=payload["value"],
            pinned=payload.get("pinned", True),
            keywords=list(payload.get("keywords") or []),
            confidence=payload.get("confidence", 1.0),
            category=category,
        )
    else:
        claim = Claim(
            kind="note",
            content=payload["content"],
            tags=list(payload.get("tags") or []),
            at=parse_datetime(occurred_at) if isinstance(occurred_at, str) else occurred_at,
            category=category,
        )
    obj, _ = belief_store_revised(
        subject=subject, claim=claim, message=source_message, actor=actor, config=config, origin=origin
    )
    return obj


def _write(*, subject, kind, payload, category, source_message, actor, config, origin, revise=False):
    if kind == ItemKind.EVIDENCE:
        # the unit exists already, hidden: approving makes it visible
        return evidence_reveal(evidence_id=payload["evidence_id"])
    if revise:
        return _revised(
            subject=subject,
            kind=kind,
            payload=payload,
            category=category,
            source_message=source_message,
            actor=actor,
            config=config,
            origin=origin,
        )
    if kind == ItemKind.FACT:
        fact, _ = fact_set(
            subject=subject,
            key=payload["key"],
            value=payload["value"],
            pinned=payload.get("pinned", True),
            keywords=payload.get("keywords"),
            scope=payload.get("scope", ""),
            confidence=payload.get("confidence", 1.0),
            category=category,
            origin=origin,
            source_message=source_message,
            actor=actor,
        )
        return fact
    occurred_at = payload.get("occurred_at")
    # a note stored from a conversation (a model's tool call) keeps its scope and working_dir
    conversation = (
        Conversation.objects.filter(pk=payload["conversation"], subject=subject).first()
        if payload.get("conversation")
        else None
    )
    note, _ = note_store(
        subject=subject,
        content=payload["content"],
        tags=payload.get("tags"),
        conversation=conversation,
        source_message=source_message,
        occurred_at=parse_datetime(occurred_at) if isinstance(occurred_at, str) else occurred_at,
        category=category,
        origin=origin,
        actor=actor,
        config=config,
    )
    return note


def _jsonable(payload: dict) -> dict:
    return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in payload.items()}


@transaction.atomic
def memory_candidate_route(
    *,
    subject: Subject,
    kind: str,
    payload: dict,
    category: str,
    source_message=None,
    actor: Actor,
    config: MemoryConfig,
    origin: str = Origin.REFLECTION,
    revise: bool = False,
) -> RouteOutcome:
    """Store, queue or drop one candidate according to the subject's consent policy.

    Safe to repeat: a candidate already waiting is not queued twice, one already rejected is
    not asked again, and storing repeats are absorbed by fact confirmation and note dedup.
    `revise`: a candidate the policy lets through is new evidence against what the subject
    believes (memory.services.beliefs.belief_revise) instead of a plain store; the consent
    decision comes first either way.
    `payload`: a fact's key, value, pinned, keywords, confidence and scope; a note's content,
    tags, occurred_at and conversation (an id: the note gets that conversation's scope and
    working_dir, now or when the person approves it).
    """
    policy = consent_policy(subject=subject, category=category)
    if policy == Policy.DENY:
        counter_add(f"consent.denied.{category}")
        return RouteOutcome("denied")
    if policy == Policy.ALLOW:
        obj = _write(
            subject=subject,
            kind=kind,
            payload=payload,
            category=category,
            source_message=source_message,
            actor=actor,
            config=config,
            origin=origin,
            revise=revise,
        )  # fact_set / note_store / revision_apply announce the change
        return RouteOutcome("stored", obj)

    return pending_queue(
        subject=subject,
        kind=kind,
        payload=payload,
        category=category,
        content_hash=_content_hash(kind, payload),
        source_message=source_message,
        actor=actor,
    )


@transaction.atomic
def pending_queue(
    *,
    subject: Subject,
    kind: str,
    payload: dict,
    category: str,
    content_hash: str,
    source_message,
    actor: Actor,
) -> RouteOutcome:
    """Queue one candidate for the person's decision, unless the same one (`content_hash`) is
    waiting already or was rejected before. Safe to repeat."""
    digest = content_hash
    earlier = (
        PendingMemory.objects.filter(subject=subject, content_hash=digest).order_by("-created_at").first()
    )
    if earlier is not None and earlier.status == PendingStatus.REJECTED:
        return RouteOutcome("rejected_before", earlier)
    if earlier is not None and earlier.status == PendingStatus.PENDING:
        return RouteOutcome("already_pending", earlier)
    try:
        with transaction.atomic():
            pending = PendingMemory.objects.create(
                subject=subject,
                kind=kind,
                payload=_jsonable(payload),
                category=_category(category),
                content_hash=digest,
                source_message=source_message,
            )
    except IntegrityError:  # queued concurrently
        return RouteOutcome(
            "already_pending",
            PendingMemory.objects.get(subject=subject, content_hash=digest, status=PendingStatus.PENDING),
        )
    audit_record(
        actor=actor,
        action="pending.created",
        subject=subject,
        object_kind="pending",
        object_id=pending.pk,
        data={"category": category, "kind": kind},
    )
    notify(subject.pk, "pending.created", {"id": pending.pk, "category": category, "kind": kind})
    return RouteOutcome("pending", pending)


def _decide(pending: PendingMemory, status: str, actor: Actor) -> bool:
    """Claim the decision with a conditional update; False when it was already decided."""
    return bool(
        PendingMemory.objects.filter(pk=pending.pk, status=PendingStatus.PENDING).update(
            status=status, decided_at=timezone.now(), decided_by=str(actor)
        )
    )


@transaction.atomic
def pending_approve(*, pending: PendingMemory, actor: Actor, config: MemoryConfig):
    """Store the pending memory with its category and mark it approved. Approving twice is refused."""
    if not _decide(pending, PendingStatus.APPROVED, actor):
        raise InvalidInput(f"this item is already {pending.status}", field="status")
    # the decision first; the write below announces the new memory itself
    notify(pending.subject_id, "pending.decided", {"id": pending.pk, "status": PendingStatus.APPROVED.value})
    obj = _write(
        subject=pending.subject,
        kind=pending.kind,
        payload=pending.payload,
        category=pending.category.slug,
        source_message=pending.source_message,
        actor=actor,
        config=config,
        origin=Origin.REFLECTION,
    )
    PendingMemory.objects.filter(pk=pending.pk).update(result_id=obj.pk if obj is not None else None)
    pending.refresh_from_db()
    audit_record(
        actor=actor,
        action="pending.approved",
        subject=pending.subject,
        object_kind="pending",
        object_id=pending.pk,
        data={"result": f"{pending.kind}:{obj.pk if obj is not None else None}"},
    )
    memory_changed(subject_id=pending.subject_id)
    return obj


@transaction.atomic
def pending_reject(*, pending: PendingMemory, actor: Actor) -> PendingMemory:
    """Mark the pending memory rejected: nothing is stored and it is not asked again."""
    if not _decide(pending, PendingStatus.REJECTED, actor):
        raise InvalidInput(f"this item is already {pending.status}", field="status")
    if pending.kind == ItemKind.EVIDENCE:
        evidence_decline(evidence_id=pending.payload["evidence_id"])
    pending.refresh_from_db()
    audit_record(
        actor=actor,
        action="pending.rejected",
        subject=pending.subject,
        object_kind="pending",
        object_id=pending.pk,
    )
    memory_changed(subject_id=pending.subject_id)
    notify(pending.subject_id, "pending.decided", {"id": pending.pk, "status": pending.status})
    return pending


def pending_expire(*, older_than: timedelta, app: App | None = None) -> int:
    """Expire items nobody decided on within `older_than` (of `app`'s subjects only, when
    given). Safe to repeat."""
    cutoff = timezone.now() - older_than
    expiring = PendingMemory.objects.filter(status=PendingStatus.PENDING, created_at__lt=cutoff)
    if app is not None:
        expiring = expiring.filter(subject__app=app)
    subject_ids = set(expiring.values_list("subject_id", flat=True))
    expired = expiring.update(
        status=PendingStatus.EXPIRED, decided_at=timezone.now(), decided_by="task:pending_expire"
    )
    memory_changed(subject_ids=sorted(subject_ids) if expired else [])
    for subject_id in sorted(subject_ids) if expired else []:
        notify(subject_id, "pending.decided", {"status": PendingStatus.EXPIRED.value})
    return expired
