"""Writes of the interaction contract (memory/person/contract): what reflection observes in a
turn, the person's own setting of a dimension, and a reset. Each is audited, bumps the
subject's memory generation when the rendered `### contract` could change, and tells open
dashboard pages (ids only)."""

from django.db import transaction
from django.utils import timezone

from memory.config import MemoryConfig
from memory.models import InteractionContract, Message, Role
from memory.modes import mode_get, mode_of
from memory.person.contract import DIMENSIONS, contract_observe_message, person_dimension, render
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
from memory.services.scrub import scrub
from memoryweb.errors import InvalidInput
from memoryweb.live import notify

MAX_REASON_CHARS = 300
UNCAPPED = 10_000


def _shown(dimensions: dict, config: MemoryConfig) -> str:
    return render(dimensions, min_confidence=config["contract.minConfidence"], cap=UNCAPPED)[0]


def _previous_answer(message: Message) -> str:
    previous = (
        Message.objects.filter(conversation_id=message.conversation_id, role=Role.ASSISTANT)
        .filter(occurred_at__lte=message.occurred_at)
        .exclude(pk=message.pk)
        .order_by("-occurred_at", "-id")
        .values_list("text", flat=True)
        .first()
    )
    return previous or ""


@transaction.atomic
def contract_observe(*, messages: list, subject, actor: Actor, config: MemoryConfig) -> dict:
    """Learn the contract of each message's conversation mode from a reflected turn's
    `messages` (user and assistant, oldest first); returns stats for the reflection run
    ({} when there was nothing to learn from). A message already in a dimension's evidence
    is not counted twice; a dimension the person set is left as they set it."""
    if not config["contract.enabled"]:
        return {}
    ordered = sorted(messages, key=lambda m: (m.occurred_at, m.pk))
    if not any(m.role == Role.USER for m in ordered):
        return {}
    by_mode: dict[str, list[tuple[Message, str]]] = {}
    previous: dict[int, str] = {}
    modes: dict[int, str] = {}
    for message in ordered:
        if message.role == Role.ASSISTANT:
            previous[message.conversation_id] = message.text
        elif message.role == Role.USER:
            if message.conversation_id not in previous:
                previous[message.conversation_id] = _previous_answer(message)
            if message.conversation_id not in modes:
                modes[message.conversation_id] = mode_of(message.conversation).name
            mode = modes[message.conversation_id]
            by_mode.setdefault(mode, []).append((message, previous[message.conversation_id]))
    total = {"messages": 0, "signals": 0, "corrections": 0}
    for mode, turns in by_mode.items():
        contract, _ = InteractionContract.objects.select_for_update().get_or_create(
            subject=subject, mode=mode
        )
        before = contract.dimensions or {}
        dimensions = dict(before)
        counted = 0
        signals = 0
        for message, answer in turns:
            if any(
                message.pk in (d.get("evidence") or []) for d in dimensions.values() if isinstance(d, dict)
            ):
                continue
            dimensions, observation = contract_observe_message(
                dimensions,
                text=message.text,
                previous=answer,
                message_id=message.pk,
                at=message.occurred_at.isoformat(),
            )
            counted += 1
            signals += len(observation.signals)
            total["corrections"] += int(observation.correction)
        if not counted:
            continue
        for state in dimensions.values():
            if isinstance(state, dict) and state.get("reason"):
                state["reason"] = scrub(state["reason"], where="contract.reason")
        contract.dimensions = dimensions
        contract.observations += counted
        contract.updated_at = timezone.now()
        contract.save(update_fields=["dimensions", "observations", "updated_at"])
        total["messages"] += counted
        total["signals"] += signals
        audit_record(
            actor=actor,
            action="contract.observed",
            subject=subject,
            object_kind="contract",
            object_id=contract.pk,
            data={"mode": mode, "messages": counted, "signals": signals},
        )
        if _shown(before, config) != _shown(dimensions, config):
            memory_changed(subject_id=subject.pk)
            notify(subject.pk, "memory.changed", {"kind": "contract", "id": contract.pk})
    return {**total, "modes": sorted(by_mode)} if total["messages"] else {}


def _clean_values(values: dict) -> dict[str, str]:
    if not isinstance(values, dict) or not values:
        raise InvalidInput(f"give at least one of {', '.join(DIMENSIONS)}", field="depth")
    cleaned = {}
    for name, value in values.items():
        if name not in DIMENSIONS:
            raise InvalidInput(f"unknown dimension {name!r}; known: {', '.join(DIMENSIONS)}", field=name)
        if value not in DIMENSIONS[name]:
            raise InvalidInput(f"{name} must be one of {', '.join(DIMENSIONS[name])}", field=name)
        cleaned[name] = value
    return cleaned


@transaction.atomic
def contract_set(
    *, subject, mode: str, values: dict, actor: Actor, config: MemoryConfig, reason: str = ""
) -> InteractionContract:
    """The person's correction of one or more dimensions in `mode`: each becomes source
    "person" with confidence 1, and observation leaves it alone until `contract_reset`.
    InvalidInput naming the field for an unknown mode, dimension or value. Setting the same
    values again changes nothing but the time."""
    mode_name = mode_get(mode, field="mode").name
    cleaned = _clean_values(values)
    if not isinstance(reason, str) or len(reason) > MAX_REASON_CHARS:
        raise InvalidInput(
            f"reason must be a string of at most {MAX_REASON_CHARS} characters", field="reason"
        )
    reason = scrub(reason.strip(), where="contract.reason")
    contract, _ = InteractionContract.objects.select_for_update().get_or_create(
        subject=subject, mode=mode_name
    )
    before = dict(contract.dimensions or {})
    at = timezone.now()
    dimensions = dict(before)
    for name, value in cleaned.items():
        dimensions[name] = person_dimension(name, value, reason=reason, at=at.isoformat())
    contract.dimensions = dimensions
    contract.updated_at = at
    contract.save(update_fields=["dimensions", "updated_at"])
    audit_record(
        actor=actor,
        action="contract.set",
        subject=subject,
        object_kind="contract",
        object_id=contract.pk,
        data={
            "mode": mode_name,
            "values": cleaned,
            "before": {n: (before.get(n) or {}).get("value") for n in cleaned},
        },
    )
    if _shown(before, config) != _shown(dimensions, config):
        memory_changed(subject_id=subject.pk)
    notify(subject.pk, "memory.changed", {"kind": "contract", "id": contract.pk})
    return contract


@transaction.atomic
def contract_reset(*, subject, actor: Actor, mode: str | None = None, dimension: str | None = None) -> int:
    """Forget what was learned and set: every mode's contract (`mode` None), one mode's, or one
    dimension of one mode's. Observation starts again from nothing. Returns how many
    dimensions were dropped; safe to repeat (the second time drops none)."""
    if dimension is not None and dimension not in DIMENSIONS:
        raise InvalidInput(f"dimension must be one of {', '.join(DIMENSIONS)}", field="dimension")
    if dimension is not None and mode is None:
        raise InvalidInput("name the mode whose dimension to reset", field="mode")
    rows = InteractionContract.objects.select_for_update().filter(subject=subject)
    if mode is not None:
        rows = rows.filter(mode=mode)
    dropped = 0
    ids = []
    for contract in rows:
        ids.append(contract.pk)
        if dimension is None:
            dropped += len(contract.dimensions or {})
            contract.delete()
            continue
        dimensions = dict(contract.dimensions or {})
        if dimensions.pop(dimension, None) is not None:
            dropped += 1
            contract.dimensions = dimensions
            contract.updated_at = timezone.now()
            contract.save(update_fields=["dimensions", "updated_at"])
    if ids:
        audit_record(
            actor=actor,
            action="contract.reset",
            subject=subject,
            object_kind="contract",
            object_id=",".join(str(i) for i in ids),
            data={"mode": mode, "dimension": dimension, "dropped": dropped},
        )
    if dropped:
        memory_changed(subject_id=subject.pk)
        for contract_id in ids:
            notify(subject.pk, "memory.changed", {"kind": "contract", "id": contract_id})
    return dropped
