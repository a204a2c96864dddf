from django.db import transaction

from memory.config import MemoryConfig
from memory.models import (
    SIGNAL_WEIGHTS,
    ItemKind,
    Lesson,
    Note,
    Procedure,
    ProfileFact,
    Signal,
    Subject,
    VoteEvent,
)
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
from memoryweb.errors import FeatureDisabled, InvalidInput, NotFound

VOTABLE: dict[str, type[Note] | type[ProfileFact] | type[Lesson] | type[Procedure]] = {
    ItemKind.NOTE: Note,
    ItemKind.FACT: ProfileFact,
    ItemKind.LESSON: Lesson,
    ItemKind.PROCEDURE: Procedure,
}


@transaction.atomic
def vote_cast(
    *, subject: Subject, item_kind: str, item_id: int, signal: str, actor: Actor, config: MemoryConfig
) -> tuple[VoteEvent, float]:
    """Record a vote or feedback signal and move the item's score, clamped at ±voting.maxVotePerItem.
    Returns the event and the item's new score.

    Every signal is its own VoteEvent (the history of votes is the point), so this is not
    idempotent: a client retrying a vote casts it twice. With `voting.enabled` false the vote
    is refused (FeatureDisabled) and nothing is written.
    """
    if not config["voting.enabled"]:
        raise FeatureDisabled(
            "voting is switched off for this app (memory.voting.enabled is false)",
            field="memory.voting.enabled",
        )
    if item_kind not in VOTABLE:
        raise InvalidInput(f"item kind must be one of {', '.join(VOTABLE)}", field="item")
    if signal not in Signal.values:
        raise InvalidInput(f"signal must be one of {', '.join(Signal.values)}", field="signal")
    model = VOTABLE[item_kind]
    queryset = model.objects.filter(pk=item_id, subject=subject)
    if transaction.get_connection().features.has_select_for_update:
        queryset = queryset.select_for_update()
    item = queryset.first()
    if item is None:
        raise NotFound(f"no {item_kind} {item_id} for this subject", field="item")
    delta = SIGNAL_WEIGHTS[Signal(signal)]
    limit = config["voting.maxVotePerItem"]
    item.vote_score = max(-limit, min(limit, item.vote_score + delta))
    item.save(update_fields=["vote_score"])
    event = VoteEvent.objects.create(
        subject=subject, item_kind=item_kind, item_id=item.pk, signal=signal, delta=delta, actor=str(actor)
    )
    audit_record(
        actor=actor,
        action="vote.cast",
        subject=subject,
        object_kind=item_kind,
        object_id=item.pk,
        data={"signal": signal, "score": item.vote_score},
    )
    memory_changed(subject_id=subject.pk)
    return event, item.vote_score
