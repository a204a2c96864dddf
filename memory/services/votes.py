"""Votes and feedback signals (docs/feedback.md).

Every signal moves the item's `vote_score` (SIGNAL_WEIGHTS, clamped at ±voting.maxVotePerItem)
and is kept as a VoteEvent with the mode it was given in. On a belief (a fact or a note) the
feedback signals also feed confidence and revision:

- "stale" (with `feedback.staleWeakens`) → a WEAKEN revision of the active belief through
  `revision_apply` (decided_by "feedback"): less confidence by `beliefs.revision.weakenStep`,
  archived once under `beliefs.revision.archiveBelow`. A lesson or procedure (no revision, no
  confidence), an already superseded fact or an archived note: the vote_score only.
- "used" / "useful" → the belief's confidence + `feedback.usefulConfidence` (clamped at 1).
- "intrusive" is recorded with its mode; the applicability judge reads those events and lowers
  the item in builds of that mode (`feedback.intrusivePenalty`, memory/ranking/applicability/).
"""

from django.db import transaction
from django.db.models import Sum

from memory.config import MemoryConfig
from memory.models import (
    SIGNAL_WEIGHTS,
    ItemKind,
    Lesson,
    Note,
    Procedure,
    ProfileFact,
    RevisionAction,
    Signal,
    Subject,
    VoteEvent,
)
from memory.modes import mode_get
from memory.services.audit import Actor, audit_record
from memory.services.beliefs import revision_apply
from memory.services.context_cache import memory_changed
from memoryweb.errors import FeatureDisabled, InvalidInput, NotFound

VOTABLE: dict[str, type[Note] | type[ProfileFact] | type[Lesson] | type[Procedure]] = {
    ItemKind.NOTE: Note,
    ItemKind.FACT: ProfileFact,
    ItemKind.LESSON: Lesson,
    ItemKind.PROCEDURE: Procedure,
}
CONFIDENCE_SIGNALS = (Signal.USED, Signal.USEFUL)
# the signals of a person's own vote (the dashboard's ▲ and ▼): one vote per person and item
PERSON_SIGNALS = (Signal.UP, Signal.DOWN)


def _active(belief: ProfileFact | Note) -> bool:
    if isinstance(belief, ProfileFact):
        return belief.valid_to is None
    return belief.archived_at is None


def _stale_reason(mode: str) -> str:
    where = f" in mode {mode}" if mode else ""
    return f'feedback: marked "stale"{where}'


@transaction.atomic
def vote_cast(
    *,
    subject: Subject,
    item_kind: str,
    item_id: int,
    signal: str,
    actor: Actor,
    config: MemoryConfig,
    mode: str = "",
    person: bool = False,
) -> tuple[VoteEvent, float]:
    """Record a vote or feedback signal and move the item's score, clamped at ±voting.maxVotePerItem.
    Returns the event and the item's new score. `mode`: the assistant mode the signal was given
    in ("" = none; an unknown one is InvalidInput naming `mode`, nothing written).

    Every signal is its own VoteEvent (the history of votes is the point), so this is not
    idempotent: a client retrying a vote casts it twice. With `voting.enabled` false the vote
    is refused (FeatureDisabled) and nothing is written. On a fact or a note, "stale" WEAKENs
    the belief and "used"/"useful" add confidence (module docstring).

    With `person` (the dashboard), the vote is the actor's one vote on the item, not a signal
    that adds up: "up" or "down" only; the same signal again withdraws it, the other one changes
    it. The event's delta is what moves the score from the actor's vote so far to the new one
    (-1, 0 or 1; `person_vote` reads it back).
    """
    if not config["voting.enabled"]:
        raise FeatureDisabled(
            "voting is switched off for this app (memory.voting.enabled is false)",
            field="memory.voting.enabled",
        )
    if item_kind not in VOTABLE:
        raise InvalidInput(f"item kind must be one of {', '.join(VOTABLE)}", field="item")
    allowed = PERSON_SIGNALS if person else Signal.values
    if signal not in allowed:
        raise InvalidInput(f"signal must be one of {', '.join(allowed)}", field="signal")
    mode = mode or ""
    if mode:
        mode_get(mode, field="mode")
    model = VOTABLE[item_kind]
    queryset = model.objects.filter(pk=item_id, subject=subject)
    if transaction.get_connection().features.has_select_for_update:
        queryset = queryset.select_for_update()
    item = queryset.first()
    if item is None:
        raise NotFound(f"no {item_kind} {item_id} for this subject", field="item")
    delta = SIGNAL_WEIGHTS[Signal(signal)]
    if person:
        so_far = _person_total(item_kind=item_kind, item_id=item.pk, actor=actor)
        wanted = 0.0 if _sign(so_far) == _sign(delta) else delta
        delta = wanted - so_far
    limit = config["voting.maxVotePerItem"]
    item.vote_score = max(-limit, min(limit, item.vote_score + delta))
    fields = ["vote_score"]
    belief = item if isinstance(item, (ProfileFact, Note)) else None
    if belief is not None and signal in CONFIDENCE_SIGNALS:
        belief.confidence = max(0.0, min(1.0, belief.confidence + config["feedback.usefulConfidence"]))
        fields.append("confidence")
    item.save(update_fields=fields)
    event = VoteEvent.objects.create(
        subject=subject,
        item_kind=item_kind,
        item_id=item.pk,
        signal=signal,
        delta=delta,
        mode=mode,
        actor=str(actor),
    )
    data: dict = {"signal": signal, "score": item.vote_score, "mode": mode}
    if person:
        data["vote"] = person_vote(item_kind=item_kind, item_id=item.pk, actor=actor)
    if belief is not None and "confidence" in fields:
        data["confidence"] = belief.confidence
    if belief is not None and signal == Signal.STALE and config["feedback.staleWeakens"] and _active(belief):
        revision = revision_apply(
            subject=subject,
            belief=belief,
            action=RevisionAction.WEAKEN,
            reason=_stale_reason(mode),
            signals=[f"vote:{event.pk}", "stale"],
            decided_by="feedback",
            actor=actor,
            config=config,
        )
        data["revision"] = revision.pk
    audit_record(
        actor=actor,
        action="vote.cast",
        subject=subject,
        object_kind=item_kind,
        object_id=item.pk,
        data=data,
    )
    memory_changed(subject_id=subject.pk)
    return event, item.vote_score


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)


def _person_total(*, item_kind: str, item_id: int, actor: Actor) -> float:
    votes = VoteEvent.objects.filter(
        item_kind=item_kind, item_id=item_id, actor=str(actor), signal__in=PERSON_SIGNALS
    )
    return votes.aggregate(total=Sum("delta"))["total"] or 0.0


def person_vote(*, item_kind: str, item_id: int, actor: Actor) -> int:
    """The actor's own vote on the item: 1 (up), -1 (down) or 0 (none, or withdrawn). Votes
    cast twice before votes were one per person count once."""
    return _sign(_person_total(item_kind=item_kind, item_id=item_id, actor=actor))
