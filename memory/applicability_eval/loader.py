"""Each persona built into a subject through the services a client or reflection would use."""

from dataclasses import dataclass
from datetime import datetime

from memory.applicability_eval.labelled import (
    DENIED,
    PENDING,
    REJECTED,
    REVOKED,
    STORED,
    SUPERSEDED,
    label_statuses,
    persona_items,
)
from memory.config import MemoryConfig
from memory.models import EvidenceStatus, ItemKind, PendingMemory, Policy, ProfileFact, Subject
from memory.services import Actor, subject_get_or_create
from memory.services.consent import (
    consent_policy_set,
    memory_candidate_route,
    pending_approve,
    pending_reject,
)
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.evidence import evidence_record
from memory.services.facts import fact_set
from memory.services.notes import note_store
from memoryweb.llm.spec import COMPONENTS

NOTE_MARK = 40  # a note's text, for `must_exclude`, is its first this many characters


@dataclass
class Label:
    label: str
    kind: str  # fact | note
    text: str  # what must not show when excluded
    status: str
    item_id: str = ""  # the context item's id ("f:12", "n:40") when a row was written


@dataclass
class LoadedPersona:
    id: str
    subject: Subject
    labels: dict[str, Label]


def eval_config() -> dict:
    """The eval App's config: every model component off (the heuristic path, whatever the
    environment configures)."""
    return {"memory": {"llm": {"default": "none", **{c: "none" for c in COMPONENTS}}}}


def persona_load(persona: dict, *, app, actor: Actor, config: MemoryConfig) -> LoadedPersona:
    """One subject for `persona`: its consent policies, then every fact and note in order (the
    categorised ones through the consent gate, decided as the set says), then `consent_after`.
    ValueError when what the services did is not what `label_statuses` says it should be."""
    subject = subject_get_or_create(app=app, external_id=persona["id"])
    for category, policy in persona.get("consent", {}).items():
        consent_policy_set(subject=subject, category=category, policy=policy, actor=actor)
    conversations = {}
    for spec in persona.get("conversations", []):
        conversations[spec["id"]], _ = conversation_get_or_create(
            subject=subject,
            external_id=f"{persona['id']}:{spec['id']}",
            mode=spec.get("mode", ""),
            scope=spec.get("scope", ""),
            actor=actor,
        )
    labels: dict[str, Label] = {}
    for kind, item in persona_items(persona):
        obj, status = _item_write(
            kind, item, subject=subject, conversations=conversations, actor=actor, config=config
        )
        text = item["value"] if kind == "fact" else item["content" if kind == "note" else "text"][:NOTE_MARK]
        item_id = f"{kind[0]}:{obj.pk}" if obj is not None else ""
        labels[item["label"]] = Label(item["label"], kind, text, status, item_id)
    for category, policy in persona.get("consent_after", {}).items():
        consent_policy_set(subject=subject, category=category, policy=policy, actor=actor)
        for label in labels.values():
            item = next(i for _, i in persona_items(persona) if i["label"] == label.label)
            if item.get("category") == category and policy == Policy.DENY and label.status == STORED:
                label.status = REVOKED
    superseded = set(
        ProfileFact.objects.filter(subject=subject, valid_to__isnull=False).values_list("pk", flat=True)
    )
    for label in labels.values():
        if label.kind == "fact" and label.item_id and int(label.item_id[2:]) in superseded:
            label.status = SUPERSEDED
    expected = label_statuses(persona)
    wrong = [
        f"{lab}: {labels[lab].status}, the set says {status}"
        for lab, status in expected.items()
        if labels[lab].status != status
    ]
    if wrong:
        raise ValueError(f"persona {persona['id']}: " + "; ".join(wrong))
    return LoadedPersona(persona["id"], subject, labels)


def _item_write(kind, item, *, subject, conversations, actor, config):
    """Write one labelled item; returns (the stored row or None, its status)."""
    conversation = conversations.get(item.get("conversation", ""))
    message = None
    if kind == "evidence":
        return _turn_write(item, conversation=conversation, actor=actor, config=config)
    if conversation is not None:
        message, _ = message_add(
            conversation=conversation,
            role="user",
            text=item["content"] if kind == "note" else f"{item['key']}: {item['value']}",
            occurred_at=_when(item),
            actor=actor,
        )
    if item.get("category"):
        if kind == "fact":
            payload = {"key": item["key"], "value": item["value"], "pinned": item["pinned"]}
            if item.get("keywords"):
                payload["keywords"] = item["keywords"]
        else:
            payload = {"content": item["content"], "tags": item.get("tags", [])}
            if item.get("occurred_at"):
                payload["occurred_at"] = item["occurred_at"]
        outcome = memory_candidate_route(
            subject=subject,
            kind=ItemKind.FACT if kind == "fact" else ItemKind.NOTE,
            payload=payload,
            category=item["category"],
            source_message=message,
            actor=actor,
            config=config,
        )
        if outcome.action == "denied":
            return None, DENIED
        if outcome.action == "stored":
            return outcome.obj, STORED
        if item.get("decision") == "approved":
            return pending_approve(pending=outcome.obj, actor=actor, config=config), STORED
        if item.get("decision") == "rejected":
            pending_reject(pending=outcome.obj, actor=actor)
            return None, REJECTED
        return None, PENDING
    if kind == "fact":
        fact, _ = fact_set(
            subject=subject,
            key=item["key"],
            value=item["value"],
            pinned=item["pinned"],
            keywords=item.get("keywords"),
            mode=item.get("mode", ""),
            scope=item.get("scope", ""),
            source_message=message,
            actor=actor,
        )
        return fact, STORED
    note, _ = note_store(
        subject=subject,
        content=item["content"],
        tags=item.get("tags"),
        conversation=conversation,
        source_message=message,
        occurred_at=_when(item) if item.get("occurred_at") else None,
        mode=item.get("mode", ""),
        actor=actor,
        config=config,
    )
    return note, STORED


def _turn_write(item, *, conversation, actor, config):
    """A turn: its message, then its evidence unit under the consent policy of its category;
    a unit waiting for the person is approved or rejected as the set says."""
    message, _ = message_add(
        conversation=conversation,
        role=item.get("role", "user"),
        text=item["text"],
        occurred_at=_when(item),
        actor=actor,
    )
    unit = evidence_record(message=message, category=item.get("category", ""), actor=actor, config=config)
    if unit is None:
        raise ValueError(f"turn {item['label']}: no evidence unit (is evidence.enabled off?)")
    if unit.status == EvidenceStatus.VISIBLE:
        return unit, STORED
    if unit.status == EvidenceStatus.DENIED:
        return unit, DENIED
    pending = PendingMemory.objects.get(source_message=message, kind=ItemKind.EVIDENCE)
    if item.get("decision") == "approved":
        pending_approve(pending=pending, actor=actor, config=config)
        return unit, STORED
    if item.get("decision") == "rejected":
        pending_reject(pending=pending, actor=actor)
        return unit, REJECTED
    return unit, PENDING


def _when(item: dict) -> datetime | None:
    return datetime.fromisoformat(item["occurred_at"]) if item.get("occurred_at") else None
