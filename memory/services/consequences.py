"""Writes of consequence chains (memory/person/consequences.py): recorded by reflection when the
person reports how earlier advice turned out, corrected or deleted by the person (REST, the
dashboard), marked surfaced when a context build shows them.

Every write but the surfacing is audited, bumps the subject's memory generation (the chains
render in the context) and tells open dashboard pages (`memory.changed`, ids only).
"""

import logging

from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from memory.config import MemoryConfig
from memory.models import Consequence, Message, Origin, Outcome, Role
from memory.person.consequence_llm import llm_chain
from memory.person.consequences import (
    MAX_ACTION_CHARS,
    MAX_OUTCOME_CHARS,
    MAX_TENDENCY_CHARS,
    action_gist,
    is_advice,
    outcome_report,
    tendency_of,
)
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
from memory.services.scrub import scrub
from memoryweb.errors import InvalidInput
from memoryweb.live import notify

logger = logging.getLogger(__name__)


def _advice_before(message: Message) -> Message | None:
    """The assistant turn the person's `message` answers: the conversation's last one before it."""
    earlier = Q(occurred_at__lt=message.occurred_at) | Q(occurred_at=message.occurred_at, id__lt=message.pk)
    return (
        Message.objects.filter(conversation_id=message.conversation_id, role=Role.ASSISTANT)
        .filter(earlier)
        .order_by("-occurred_at", "-id")
        .first()
    )


def _text(value, field: str, limit: int, *, blank: bool = False) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string", field=field)
    value = " ".join(value.split())
    if not value and not blank:
        raise InvalidInput(f"{field} must not be blank", field=field)
    value = scrub(value, where=field)
    if len(value) > limit:
        raise InvalidInput(f"{field} must be at most {limit} characters", field=field)
    return value


def _changed(chain: Consequence, action: str, actor: Actor, data: dict | None = None) -> None:
    audit_record(
        actor=actor,
        action=action,
        subject=chain.subject,
        object_kind="consequence",
        object_id=chain.pk,
        data=data or {},
    )
    memory_changed(subject_id=chain.subject_id)
    notify(chain.subject_id, "memory.changed", {"kind": "consequence", "id": chain.pk})


@transaction.atomic
def consequence_record(
    *,
    subject,
    advice_message: Message,
    outcome_message: Message,
    action: str,
    outcome: str,
    outcome_text: str,
    tendency: str = "",
    confidence: float = 0.6,
    origin: str = Origin.REFLECTION,
    decided_by: str = "rules",
    actor: Actor,
) -> tuple[Consequence, bool]:
    """Record the chain advice → outcome → tendency for the report `outcome_message` of the
    advice turn `advice_message`; (chain, created). Safe to repeat: one chain per (advice,
    report) pair, a second call returns the first one unchanged."""
    if outcome not in Outcome.values:
        raise InvalidInput(f"outcome must be one of {', '.join(Outcome.values)}", field="outcome")
    existing = Consequence.objects.filter(
        advice_message=advice_message, outcome_message=outcome_message
    ).first()
    if existing is not None:
        return existing, False
    conversation = outcome_message.conversation
    fields = {
        "subject": subject,
        "conversation": conversation,
        "advice_message": advice_message,
        "outcome_message": outcome_message,
        "action": _text(action, "action", MAX_ACTION_CHARS),
        "outcome": outcome,
        "outcome_text": _text(outcome_text, "outcome_text", MAX_OUTCOME_CHARS),
        "tendency": _text(tendency, "tendency", MAX_TENDENCY_CHARS, blank=True),
        "mode": conversation.mode,
        "scope": conversation.scope,
        "confidence": max(0.0, min(1.0, float(confidence))),
        "origin": origin,
    }
    try:
        with transaction.atomic():
            chain = Consequence.objects.create(**fields)
    except IntegrityError:  # a concurrent reflection of the same turn recorded it
        return Consequence.objects.get(advice_message=advice_message, outcome_message=outcome_message), False
    _changed(
        chain,
        "consequence.recorded",
        actor,
        {
            "outcome": outcome,
            "advice": advice_message.pk,
            "report": outcome_message.pk,
            "decided_by": decided_by,
        },
    )
    return chain, True


def consequences_observe(*, messages: list, subject, actor: Actor, config: MemoryConfig) -> dict:
    """Record a chain for each user message of a reflected turn that reports the outcome of
    the assistant's earlier advice; returns stats for the reflection run. The lexicons find
    the candidate reports; with `llm.consequences` the model confirms each one and words the
    chain, the heuristic deciding whenever it cannot. Safe to repeat (consequence_record)."""
    stats = {"recorded": 0, "llm": 0, "rejected_by_llm": 0}
    if not config["consequences.enabled"]:
        return {}
    for message in messages:
        if message.role != Role.USER:
            continue
        report = outcome_report(message.text)
        if report is None:
            continue
        advice = _advice_before(message)
        if advice is None or not is_advice(advice.text):
            continue
        judged = llm_chain(advice=advice.text, message=message.text, config=config)
        if judged is not None and not judged.report:
            stats["rejected_by_llm"] += 1
            continue
        if judged is not None:
            stats["llm"] += 1
            action, outcome, outcome_text = judged.action, judged.outcome, judged.outcome_text
            tendency, confidence, decided_by = judged.tendency, judged.confidence, "llm"
        else:
            action = action_gist(advice.text)
            outcome, outcome_text = report.outcome, report.outcome_text
            tendency = tendency_of(action=action, report=message.text, outcome=report.outcome)
            confidence, decided_by = report.confidence, "rules"
        _chain, created = consequence_record(
            subject=subject,
            advice_message=advice,
            outcome_message=message,
            action=action,
            outcome=outcome,
            outcome_text=outcome_text,
            tendency=tendency,
            confidence=confidence,
            decided_by=decided_by,
            actor=actor,
        )
        stats["recorded"] += created
    return {k: v for k, v in stats.items() if v}


@transaction.atomic
def consequence_edit(
    *,
    consequence: Consequence,
    actor: Actor,
    action: str | None = None,
    outcome: str | None = None,
    outcome_text: str | None = None,
    tendency: str | None = None,
) -> Consequence:
    """The person's correction of a chain (each field given replaces the stored one; a
    corrected chain counts as certain). Validates everything before writing anything."""
    changes: dict = {}
    if action is not None:
        changes["action"] = _text(action, "action", MAX_ACTION_CHARS)
    if outcome is not None:
        if outcome not in Outcome.values:
            raise InvalidInput(f"outcome must be one of {', '.join(Outcome.values)}", field="outcome")
        changes["outcome"] = outcome
    if outcome_text is not None:
        changes["outcome_text"] = _text(outcome_text, "outcome_text", MAX_OUTCOME_CHARS)
    if tendency is not None:
        changes["tendency"] = _text(tendency, "tendency", MAX_TENDENCY_CHARS, blank=True)
    changes = {k: v for k, v in changes.items() if getattr(consequence, k) != v}
    if not changes:
        return consequence
    before = {k: getattr(consequence, k) for k in changes}
    for name, value in changes.items():
        setattr(consequence, name, value)
    consequence.confidence = 1.0
    consequence.updated_at = timezone.now()
    consequence.save(update_fields=[*changes, "confidence", "updated_at"])
    _changed(consequence, "consequence.edited", actor, {"fields": sorted(changes), "before": before})
    return consequence


@transaction.atomic
def consequence_delete(*, consequence: Consequence, actor: Actor) -> None:
    """Delete a chain (its messages stay). Safe to repeat on the same id: the second finds nothing."""
    chain_id = consequence.pk
    Consequence.objects.filter(pk=chain_id).delete()
    consequence.pk = chain_id  # the audit and the live event name the deleted id
    _changed(consequence, "consequence.deleted", actor)


def consequences_mark_surfaced(*, consequence_ids: list[int], now=None) -> int:
    """Count one more showing of each chain a recorded context build rendered (one UPDATE;
    nothing for none). Not audited: a read's bookkeeping, like a note's recall count."""
    if not consequence_ids:
        return 0
    return Consequence.objects.filter(pk__in=consequence_ids).update(
        surfaced_count=F("surfaced_count") + 1, last_surfaced_at=now or timezone.now()
    )
