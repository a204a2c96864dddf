"""Parking: the person sets a note, a fact, a lesson or a procedure aside. A parked item is
kept — listed on the dashboard, exported, editable — but never enters a context, a search, a
recall or a tool's answer, and consolidation and eviction leave it alone (`parked_at`, filtered
where archived notes and closed facts are: memory.search.lexical, memory.ranking.facts,
memory.selectors). Unparking brings it back. Unlike forgetting, nothing is deleted."""

from django.db import transaction
from django.utils import timezone

from memory.models import Lesson, Note, Procedure, ProfileFact
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
from memoryweb.errors import InvalidInput
from memoryweb.live import notify

KINDS = {Note: "note", ProfileFact: "fact", Lesson: "lesson", Procedure: "procedure"}
Parkable = Note | ProfileFact | Lesson | Procedure


@transaction.atomic
def item_park(*, item: Parkable, parked: bool, actor: Actor) -> bool:
    """Park (`parked=True`) or unpark a note, an active fact, a lesson or a procedure; returns
    whether it changed. Parking what is parked (or unparking what is not) writes nothing.
    Audited as `note.parked` / `lesson.unparked` …, and announced (`memory.changed`) after commit."""
    kind = KINDS.get(type(item))
    if kind is None:
        raise InvalidInput("only notes, facts, lessons and procedures can be parked", field="item")
    if not isinstance(parked, bool):
        raise InvalidInput("parked must be true or false", field="parked")
    if isinstance(item, ProfileFact) and item.valid_to is not None:
        raise InvalidInput("only the active version of a fact can be parked", field="item")
    if (item.parked_at is not None) == parked:
        return False
    item.parked_at = timezone.now() if parked else None
    type(item).objects.filter(pk=item.pk).update(parked_at=item.parked_at)
    action = f"{kind}.{'parked' if parked else 'unparked'}"
    audit_record(actor=actor, action=action, subject=item.subject, object_kind=kind, object_id=item.pk)
    memory_changed(subject_id=item.subject_id)
    notify(item.subject_id, "memory.changed", {"kind": kind, "id": item.pk})
    return True
