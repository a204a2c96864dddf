"""Applying a belief revision (memory/beliefs/__init__.py says what each action means).

`revision_apply` is the one way a belief is revised: by the revision engine (rules or
`llm.revision`), by the person (dashboard, REST) and by feedback ("stale"). It writes the new
rows through the facts and notes services' own paths (versions, never deletes), records one
BeliefRevision with before/after and the reason, and one AuditEvent (`belief.revised`).
"""

from django.db import transaction
from django.utils import timezone

from memory.beliefs import belief_snapshot
from memory.config import MemoryConfig
from memory.models import (
    BeliefRevision,
    Message,
    Note,
    NoteLink,
    NoteSource,
    Origin,
    ProfileFact,
    RevisionAction,
    Subject,
)
from memory.modes import mode_get
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
from memory.services.facts import fact_active, fact_set
from memory.services.notes import note_store
from memory.services.scrub import scrub
from memory.services.versions import version_write
from memoryweb.counters import counter_add
from memoryweb.errors import InvalidInput
from memoryweb.live import notify

DECIDERS = ("rules", "llm", "person", "feedback")
MAX_REASON_CHARS = 500


def _clamp(value: float) -> float:
    return max(0.0, min(1.0, value))


def _message_mode(message: Message | None) -> str:
    if message is None:
        return ""
    return message.conversation.mode or ""


def _message_scope(message: Message | None) -> str:
    if message is None:
        return ""
    return message.conversation.scope or ""


def _split_sides(field: str, *, belief, claim: dict, message) -> tuple[str, str]:
    """The two sides of a split by `field` ("mode" or "scope"): where the old value was
    learned (the claim's `old_<field>`, else the belief's own qualifier, else its source
    message's conversation) and where the new evidence was said (the claim's `<field>`, else
    the message's conversation). A named mode must be a known one (InvalidInput naming `mode`)."""
    where = _message_mode if field == "mode" else _message_scope
    old_q = claim.get(f"old_{field}")
    if old_q is None:
        old_q = getattr(belief, field) or where(belief.source_message)
    new_q = claim.get(field) or where(message)
    if field == "mode":
        for q in (old_q, new_q):
            if q:
                mode_get(q)
    return old_q, new_q


def _fact_fields(fact: ProfileFact, **changes) -> dict:
    fields = {
        "subject": fact.subject,
        "key": fact.key,
        "value": fact.value,
        "pinned": fact.pinned,
        "keywords": list(fact.keywords),
        "mode": fact.mode,
        "scope": fact.scope,
        "confidence": fact.confidence,
        "category": fact.category,
        "source_message": fact.source_message,
    }
    fields.update(changes)
    return fields


def _new_version(*, belief: ProfileFact, actor: Actor, origin: str, valid_from, **changes) -> ProfileFact:
    """The belief's key under (maybe) other qualifiers, as a new version of whatever is active
    there; the active version of those qualifiers is closed at `valid_from`."""
    fields = _fact_fields(belief, **changes)
    active = fact_active(belief.subject, fields["key"], fields["mode"], fields["scope"])
    return version_write(
        kind="fact", item=active, changes={**fields, "valid_from": valid_from}, origin=origin, actor=actor
    )


def _claim_value(claim: dict) -> str:
    value = claim.get("value")
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("this revision needs the new value", field="value")
    return scrub(value.strip(), where="fact")


def _fact_revise(
    *, belief: ProfileFact, action: str, claim: dict, message, config: MemoryConfig, actor: Actor, origin: str
) -> tuple[list[int], str]:
    """Apply `action` to the fact; returns the ids of the rows written or changed and the
    action actually taken (WEAKEN under `archiveBelow` becomes ARCHIVE)."""
    when = claim.get("valid_from") or (message.occurred_at if message is not None else timezone.now())
    when = max(when, belief.valid_from)
    if action == RevisionAction.REINFORCE:
        belief.confirmations += 1
        belief.confidence = _clamp(belief.confidence + config["beliefs.revision.reinforceStep"])
        belief.save(update_fields=["confirmations", "confidence"])
        return [belief.pk], action
    if action == RevisionAction.WEAKEN:
        belief.confidence = _clamp(belief.confidence - config["beliefs.revision.weakenStep"])
        if belief.confidence < config["beliefs.revision.archiveBelow"] and belief.valid_to is None:
            belief.valid_to = when
            belief.save(update_fields=["confidence", "valid_to"])
            return [belief.pk], RevisionAction.ARCHIVE
        belief.save(update_fields=["confidence"])
        return [belief.pk], action
    if action == RevisionAction.ARCHIVE:
        if belief.valid_to is None:
            belief.valid_to = when
            belief.save(update_fields=["valid_to"])
        return [belief.pk], action
    if action == RevisionAction.MARK_EXCEPTION:
        text = scrub(str(claim.get("text") or claim.get("value") or "").strip()[:300], where="fact")
        if not text:
            raise InvalidInput("an exception needs the text of what is excepted", field="text")
        belief.exceptions = [
            *belief.exceptions,
            {"text": text, "message_id": message.pk if message else None, "at": when.isoformat()},
        ]
        belief.save(update_fields=["exceptions"])
        return [belief.pk], action
    value = _claim_value(claim)
    confidence = _clamp(float(claim.get("confidence", 1.0)))
    source = message if message is not None else None
    # a person's explicit set also says how the new version is placed (pinned, keywords)
    placing = {name: claim[name] for name in ("pinned", "keywords", "category") if name in claim}

    def claimed(**qualifiers) -> ProfileFact:
        """The claim's value as the new version of the belief's key (under `qualifiers`)."""
        return _new_version(
            belief=belief,
            actor=actor,
            origin=origin,
            valid_from=when,
            value=value,
            confidence=confidence,
            source_message=source,
            exceptions=[],
            **placing,
            **qualifiers,
        )

    if action in (RevisionAction.SUPERSEDE, RevisionAction.SPLIT_BY_TIME):
        if belief.valid_to is not None:
            raise InvalidInput("only the active version can be superseded", field="belief")
        new = claimed()
        if action == RevisionAction.SUPERSEDE:
            # a correction: the old value was wrong, not merely over
            ProfileFact.objects.filter(pk=belief.pk).update(confidence=0.0)
        return [new.pk], action
    if action in (RevisionAction.SPLIT_BY_MODE, RevisionAction.SPLIT_BY_SCOPE):
        field = "mode" if action == RevisionAction.SPLIT_BY_MODE else "scope"
        old_q, new_q = _split_sides(field, belief=belief, claim=claim, message=message)
        if not new_q:
            raise InvalidInput(f"a split by {field} needs the new evidence's {field}", field=field)
        if new_q == old_q:
            raise InvalidInput(f"both sides of the split are in {field} {new_q!r}", field=field)
        written = []
        if old_q and old_q != getattr(belief, field) and belief.valid_to is None:
            # the old value, re-qualified to where it was learned; the unqualified version closes
            moved = _new_version(belief=belief, actor=actor, origin=origin, valid_from=when, **{field: old_q})
            if belief.valid_to is None:
                belief.refresh_from_db(fields=["valid_to"])
            if belief.valid_to is None:
                belief.valid_to = when
                belief.save(update_fields=["valid_to"])
            written.append(moved.pk)
        new = claimed(**{field: new_q})
        written.append(new.pk)
        return written, action
    raise InvalidInput(f"action must be one of {', '.join(RevisionAction.values)}", field="action")


def _note_revise(
    *, belief: Note, action: str, claim: dict, message, config: MemoryConfig, actor: Actor
) -> tuple[list[int], str]:
    """Apply `action` to the note. `claim["note_id"]` names the newer note that bears on it
    (SUPERSEDE, SPLIT_*, MARK_EXCEPTION link it `contradicts` → the old one)."""
    now = timezone.now()
    newer = None
    if claim.get("note_id"):
        newer = Note.objects.filter(pk=claim["note_id"], subject_id=belief.subject_id).first()
        if newer is None:
            raise InvalidInput(f"no note {claim['note_id']} for this subject", field="note_id")
    if action == RevisionAction.REINFORCE:
        belief.confidence = _clamp(belief.confidence + config["beliefs.revision.reinforceStep"])
        belief.save(update_fields=["confidence"])
        if message is not None:
            NoteSource.objects.get_or_create(
                note=belief, message=message, defaults={"conversation": message.conversation}
            )
        return [belief.pk], action
    if action == RevisionAction.WEAKEN:
        belief.confidence = _clamp(belief.confidence - config["beliefs.revision.weakenStep"])
        fields = ["confidence"]
        taken = action
        if belief.confidence < config["beliefs.revision.archiveBelow"] and belief.archived_at is None:
            belief.archived_at = now
            fields.append("archived_at")
            taken = RevisionAction.ARCHIVE
        belief.save(update_fields=fields)
        return [belief.pk], taken
    written = [belief.pk]
    if action in (RevisionAction.SUPERSEDE, RevisionAction.ARCHIVE):
        if belief.archived_at is None:
            belief.archived_at = now
            fields = ["archived_at"]
            if action == RevisionAction.SUPERSEDE:
                belief.confidence = 0.0
                fields.append("confidence")
            belief.save(update_fields=fields)
    elif action in (RevisionAction.SPLIT_BY_MODE, RevisionAction.SPLIT_BY_SCOPE):
        field = "mode" if action == RevisionAction.SPLIT_BY_MODE else "scope"
        old_q, new_q = _split_sides(field, belief=belief, claim=claim, message=message)
        if old_q and getattr(belief, field) != old_q:
            setattr(belief, field, old_q)
            belief.save(update_fields=[field])
        if newer is not None and new_q and getattr(newer, field) != new_q:
            setattr(newer, field, new_q)
            newer.save(update_fields=[field])
    elif action not in (RevisionAction.SPLIT_BY_TIME, RevisionAction.MARK_EXCEPTION):
        raise InvalidInput(f"action must be one of {', '.join(RevisionAction.values)}", field="action")
    if newer is not None:
        written.append(newer.pk)
        linked = (
            NoteLink.objects.filter(src=newer, dst=belief).exists()
            or NoteLink.objects.filter(src=belief, dst=newer).exists()
        )
        if not linked:
            NoteLink.objects.create(src=newer, dst=belief, kind="contradicts", weight=1.0, origin=Origin.TASK)
    return written, action


@transaction.atomic
def revision_apply(
    *,
    subject: Subject,
    belief: ProfileFact | Note,
    action: str,
    reason: str,
    claim: dict | None = None,
    message: Message | None = None,
    signals: list[str] | None = None,
    decided_by: str = "rules",
    actor: Actor,
    config: MemoryConfig,
    origin: str = Origin.REFLECTION,
) -> BeliefRevision:
    """Revise `belief` by `action` (RevisionAction) for the new evidence in `message` (its
    claim: for a fact `value`, `mode`, `scope`, `valid_from`, `text`, `confidence`; for a note
    `note_id` of the newer note), keep every version, and record why. InvalidInput (naming the
    field) for an action the belief cannot take; nothing is written then."""
    if action not in RevisionAction.values:
        raise InvalidInput(f"action must be one of {', '.join(RevisionAction.values)}", field="action")
    if decided_by not in DECIDERS:
        raise InvalidInput(f"decided_by must be one of {', '.join(DECIDERS)}", field="decided_by")
    if belief.subject_id != subject.pk:
        raise InvalidInput("the belief belongs to another subject", field="belief")
    reason = " ".join(scrub(str(reason or ""), where="revision").split())[:MAX_REASON_CHARS]
    if not reason:
        raise InvalidInput("a revision needs its reason", field="reason")
    claim = dict(claim or {})
    before = belief_snapshot(belief)
    if isinstance(belief, ProfileFact):
        kind = "fact"
        result_ids, taken = _fact_revise(
            belief=belief,
            action=action,
            claim=claim,
            message=message,
            config=config,
            actor=actor,
            origin=origin,
        )
        after_rows: list = list(ProfileFact.objects.filter(pk__in=result_ids))
    else:
        kind = "note"
        result_ids, taken = _note_revise(
            belief=belief, action=action, claim=claim, message=message, config=config, actor=actor
        )
        after_rows = list(Note.objects.filter(pk__in=result_ids))
    if taken != action:
        reason = f"{reason} (confidence fell under beliefs.revision.archiveBelow: archived)"
    stored_claim = {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in claim.items()}
    revision = BeliefRevision.objects.create(
        subject=subject,
        action=taken,
        belief_kind=kind,
        belief_id=belief.pk,
        result_ids=result_ids,
        message=message,
        claim=stored_claim,
        signals=list(signals or []),
        reason=reason,
        decided_by=decided_by,
        before=before,
        after={"rows": [belief_snapshot(r) for r in sorted(after_rows, key=lambda r: r.pk)]},
    )
    audit_record(
        actor=actor,
        action="belief.revised",
        subject=subject,
        object_kind=kind,
        object_id=belief.pk,
        data={"revision": revision.pk, "action": taken, "reason": reason, "decided_by": decided_by},
    )
    memory_changed(subject_id=subject.pk)
    notify(subject.pk, "memory.changed", {"kind": kind, "id": belief.pk})
    return revision


# --- revising by new evidence (detect → decide → apply) -----------------------------------------
def _decide(conflict, claim, config: MemoryConfig, person: bool):
    """The decision for one conflict: the person's explicit set, else `llm.revision` when
    configured (its unusable answers fall back), else the rules."""
    from memory.beliefs.decide import Decision, decide_rules, decision_usable, revision_claim
    from memory.beliefs.llm import llm_decide

    if person:
        same = "same_value" in conflict.signals
        action = RevisionAction.REINFORCE if same else RevisionAction.SUPERSEDE
        reason = "the person set it again" if same else "the person set a new value"
        placed = revision_claim(action, conflict, claim)
        if action == RevisionAction.SUPERSEDE:
            placed.update(pinned=claim.pinned, keywords=list(claim.keywords), category=claim.category)
        return Decision(action, reason, list(conflict.signals), "person", placed)
    decision = llm_decide(conflict, claim, config)
    if decision is not None and decision_usable(decision, conflict, claim):
        return decision
    if decision is not None:
        counter_add("beliefs.revision.llm_fallback.unusable")
    return decide_rules(conflict, claim)


def _most_relevant(conflicts: list, claim):
    """The one belief a fact claim revises: the version of its own qualifiers, else the one
    with the same value, else the unqualified one, else the first."""

    def rank(conflict):
        belief = conflict.belief
        exact = (belief.mode, belief.scope) == (claim.where_mode, claim.where_scope) and bool(
            belief.mode or belief.scope
        )
        own = (belief.mode, belief.scope) == (claim.mode, claim.scope)
        return (
            not exact,
            not own,
            "same_value" not in conflict.signals,
            bool(belief.mode or belief.scope),
            belief.pk,
        )

    return sorted(conflicts, key=rank)[0]


def _decision_apply(decision, *, subject, belief, claim, message, actor, config, origin) -> BeliefRevision:
    """revision_apply of a decision (rules, llm or the person's), counted by the action taken."""
    revision = revision_apply(
        subject=subject,
        belief=belief,
        action=decision.action,
        reason=decision.reason,
        claim=claim,
        message=message,
        signals=decision.signals,
        decided_by=decision.decided_by,
        actor=actor,
        config=config,
        origin=origin,
    )
    counter_add(f"beliefs.revision.{revision.action.lower()}")
    return revision


def _fact_plain(*, subject, claim, message, actor, origin):
    fact, _ = fact_set(
        subject=subject,
        key=claim.key,
        value=claim.value,
        pinned=claim.pinned,
        keywords=claim.keywords,
        mode=claim.mode,
        scope=claim.scope,
        confidence=claim.confidence,
        category=claim.category,
        origin=origin,
        source_message=message,
        valid_from=claim.at if message is None else None,
        actor=actor,
    )
    return fact


def _note_plain(*, subject, claim, message, actor, config, origin, mode=""):
    note, _ = note_store(
        subject=subject,
        content=claim.content,
        tags=claim.tags,
        source_message=message,
        occurred_at=claim.at if message is None else (claim.at or message.occurred_at),
        category=claim.category,
        mode=mode or claim.mode,
        origin=origin,
        actor=actor,
        config=config,
    )
    return note


def _confirmed_by(belief: ProfileFact | Note, message: Message | None) -> bool:
    """Whether `message` already stands behind the belief: it is its source, or it reinforced
    it before. The same words read twice (a rebuild, a redelivered turn) are one confirmation."""
    if message is None:
        return False
    if isinstance(belief, ProfileFact):
        if belief.source_message_id == message.pk:
            return True
    elif NoteSource.objects.filter(note=belief, message=message).exists():
        return True
    return BeliefRevision.objects.filter(
        belief_kind="fact" if isinstance(belief, ProfileFact) else "note",
        belief_id=belief.pk,
        message=message,
        action=RevisionAction.REINFORCE,
    ).exists()


def _fact_revise_by(*, subject, claim, message, actor, config, origin, person):
    from memory.beliefs.detect import conflicts_find

    if not claim.value.strip() and person:
        raise InvalidInput("value must be a non-empty string", field="value")
    conflicts = conflicts_find(subject, claim)
    if person:  # an explicit set speaks of its own qualifiers only
        conflicts = [c for c in conflicts if (c.belief.mode, c.belief.scope) == (claim.mode, claim.scope)]
    if not conflicts:
        if not claim.value.strip():
            return None, []
        return _fact_plain(subject=subject, claim=claim, message=message, actor=actor, origin=origin), []
    conflict = _most_relevant(conflicts, claim)
    belief = conflict.belief
    if claim.at is not None and claim.at < belief.valid_from and claim.value.strip():
        # said of an earlier time (a turn posted late): it goes into the history where it belongs
        return _fact_plain(subject=subject, claim=claim, message=message, actor=actor, origin=origin), []
    if (
        person
        and "same_value" in conflict.signals
        and (belief.pinned != claim.pinned or list(belief.keywords) != list(claim.keywords))
    ):
        # the same value placed differently: an edit of how it renders, not of what is believed
        return _fact_plain(subject=subject, claim=claim, message=message, actor=actor, origin=origin), []
    decision = _decide(conflict, claim, config, person)
    if decision.action == RevisionAction.REINFORCE and _confirmed_by(belief, message):
        return belief, []  # said in this message before (a rebuild re-reads it): one confirmation
    revision = _decision_apply(
        decision,
        subject=subject,
        belief=belief,
        claim=decision.claim,
        message=message,
        actor=actor,
        config=config,
        origin=origin,
    )
    rows = ProfileFact.objects.filter(pk__in=revision.result_ids).order_by("-id")
    written = next((r for r in rows if r.valid_to is None and r.key == claim.key), None)
    return written or rows.first(), [revision]


# the revisions of a note that keep the new note too. REINFORCE among them: a note that says
# an older one again in other words usually adds something (a detail, a date), and the store's
# dedup merges it into the older one when it really is the same, so nothing is lost either way
NOTE_STORES = {
    RevisionAction.REINFORCE,
    RevisionAction.SUPERSEDE,
    RevisionAction.SPLIT_BY_MODE,
    RevisionAction.SPLIT_BY_SCOPE,
    RevisionAction.SPLIT_BY_TIME,
    RevisionAction.MARK_EXCEPTION,
}


def _note_revise_by(*, subject, claim, message, actor, config, origin):
    from memory.beliefs.detect import conflicts_find

    conflicts = conflicts_find(subject, claim)
    if not conflicts:
        return _note_plain(
            subject=subject, claim=claim, message=message, actor=actor, config=config, origin=origin
        ), []
    conflict = sorted(conflicts, key=lambda c: ("contradicts_link" not in c.signals, -c.overlap))[0]
    belief = conflict.belief
    decision = _decide(conflict, claim, config, False)
    if decision.action == RevisionAction.REINFORCE and _confirmed_by(belief, message):
        return belief, []  # said in this message before (a rebuild re-reads it): one confirmation
    note = belief
    revised_claim = dict(decision.claim)
    if decision.action in NOTE_STORES:
        mode = claim.where_mode if decision.action == RevisionAction.SPLIT_BY_MODE else ""
        note = _note_plain(
            subject=subject,
            claim=claim,
            message=message,
            actor=actor,
            config=config,
            origin=origin,
            mode=mode,
        )
        if note.pk == belief.pk:  # the store merged it into the belief: it said the same again
            if decision.action != RevisionAction.REINFORCE:
                decision.action, decision.reason = RevisionAction.REINFORCE, f"said again: {decision.reason}"
        else:
            revised_claim["note_id"] = note.pk
    revision = _decision_apply(
        decision,
        subject=subject,
        belief=belief,
        claim=revised_claim,
        message=message,
        actor=actor,
        config=config,
        origin=origin,
    )
    return note, [revision]


def belief_store_revised(
    *,
    subject: Subject,
    claim,
    message: Message | None = None,
    actor: Actor,
    config: MemoryConfig,
    decided_by: str | None = None,
    origin: str = Origin.REFLECTION,
) -> tuple[ProfileFact | Note | None, list[BeliefRevision]]:
    """`belief_revise`, also returning the row that now holds the claim (the new version, the
    belief reinforced or excepted, the note stored) — None when a retraction found nothing."""
    from memory.beliefs.detect import claim_where

    claim = claim_where(claim, message)
    person = decided_by == "person"
    if not config["beliefs.revision.enabled"] and not person:
        if claim.kind == "fact":
            if not claim.value.strip():
                return None, []
            return _fact_plain(subject=subject, claim=claim, message=message, actor=actor, origin=origin), []
        return _note_plain(
            subject=subject, claim=claim, message=message, actor=actor, config=config, origin=origin
        ), []
    with transaction.atomic():
        if claim.kind == "fact":
            return _fact_revise_by(
                subject=subject,
                claim=claim,
                message=message,
                actor=actor,
                config=config,
                origin=origin,
                person=person,
            )
        return _note_revise_by(
            subject=subject, claim=claim, message=message, actor=actor, config=config, origin=origin
        )


def belief_revise(
    *,
    subject: Subject,
    claim,
    message: Message | None = None,
    actor: Actor,
    config: MemoryConfig,
    decided_by: str | None = None,
    origin: str = Origin.REFLECTION,
) -> list[BeliefRevision]:
    """New evidence (`claim`, memory/beliefs/detect.Claim, said in `message`) against what the
    subject believes: the beliefs it bears on are found (conflicts_find), the revision chosen
    (`llm.revision` when configured, else the rules; `decided_by="person"`: an explicit set, a
    REINFORCE of the same value or a SUPERSEDE of its own qualifiers' value) and applied
    (revision_apply). No conflict: the claim is stored plainly (fact_set / note_store) and no
    revision is returned. `beliefs.revision.enabled` false: always plainly. A claim said of a
    time before the belief began goes into the history (fact_set) instead."""
    return belief_store_revised(
        subject=subject,
        claim=claim,
        message=message,
        actor=actor,
        config=config,
        decided_by=decided_by,
        origin=origin,
    )[1]


def fact_set_by_person(
    *,
    subject: Subject,
    key: str,
    value: str,
    pinned: bool = True,
    keywords=None,
    mode: str = "",
    scope: str = "",
    confidence: float = 1.0,
    actor: Actor,
    config: MemoryConfig,
) -> tuple[ProfileFact, bool]:
    """The person sets a fact (REST, dashboard): a revision decided by the person of the value
    of its own mode and scope — the same value REINFORCEs it, a new one SUPERSEDEs it; the first
    value, or the same value placed differently (pinned, keywords), is a plain fact_set.
    Returns (the active fact, whether a new version was written)."""
    from memory.beliefs.detect import Claim

    key = (key or "").strip()
    before = ProfileFact.objects.filter(
        subject=subject, key=key, mode=mode, scope=scope, valid_to=None
    ).first()
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("value must be a non-empty string", field="value")
    claim = Claim(
        kind="fact",
        key=key,
        value=value.strip(),
        mode=mode,
        scope=scope,
        pinned=pinned,
        keywords=list(keywords or []),
        confidence=confidence,
        at=timezone.now(),
    )
    if before is None or before.pinned != pinned or list(before.keywords) != claim.keywords:
        return fact_set(
            subject=subject,
            key=key,
            value=value,
            pinned=pinned,
            keywords=keywords,
            mode=mode,
            scope=scope,
            confidence=confidence,
            actor=actor,
        )
    fact, _ = belief_store_revised(
        subject=subject, claim=claim, actor=actor, config=config, decided_by="person", origin=Origin.API
    )
    assert isinstance(fact, ProfileFact)
    return fact, fact.pk != before.pk
