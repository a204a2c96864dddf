"""The one way an edit becomes a new version: the version is written, audited and announced.

Notes, lessons and procedures keep their current text on the row and every version in a
versions table. A profile fact has no versions table: each version is a row of its own, and
the new one closes the active one (`valid_to`, `superseded_by`).
"""

from typing import Any

from django.utils import timezone

from memory.models import (
    Lesson,
    LessonVersion,
    Note,
    NoteVersion,
    Procedure,
    ProcedureVersion,
    ProfileFact,
)
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
from memoryweb.live import notify

# kind → (its model, its versions table, the fields a version holds besides tags)
# the row models, their versions tables and the versioned fields (Any: each has its own fields)
VERSION_TABLES: dict[str, tuple[Any, Any, tuple[str, ...]]] = {
    "note": (Note, NoteVersion, ("content",)),
    "lesson": (Lesson, LessonVersion, ("text",)),
    "procedure": (Procedure, ProcedureVersion, ("title", "steps")),
}


def version_write(*, kind: str, item, changes: dict, origin: str, actor: Actor):
    """Write `changes` (field → value) as the item's next version; returns the current row.

    For a note, lesson or procedure the row takes the changes with version + 1 and a new
    `updated_at`, its versions table gets a copy (with the row's tags and this edit's origin),
    and the audit log `<kind>.edited` with the version number. For a profile fact `item` is
    the active version (or None for the first); `changes` are the new row's fields (with
    `valid_from`, default now), the active one is closed at that time and points at the new
    one (a `valid_from` before the active one began puts the new row into the history
    instead), and the audit log says `fact.set` with the key and the version it supersedes. Either way open dashboard pages get `memory.changed`
    after commit. Callers run it inside their transaction, and only when something changed,
    so it is not safe to repeat: each call is a version.
    """
    if kind == "fact":
        return _fact_version_write(active=item, changes=changes, origin=origin, actor=actor)
    model, version_model, fields = VERSION_TABLES[kind]
    assert isinstance(item, model), f"a {kind} edit of {item!r}"
    for field, value in changes.items():
        setattr(item, field, value)
    item.version += 1
    item.updated_at = timezone.now()
    item.save(update_fields=[*changes, "version", "updated_at"])
    copied = {field: getattr(item, field) for field in (*fields, "tags")}
    version_model.objects.create(**{kind: item}, version=item.version, origin=origin, **copied)
    _announce(kind=kind, item=item, actor=actor, action=f"{kind}.edited", data={"version": item.version})
    return item


def _fact_version_write(*, active: ProfileFact | None, changes: dict, origin: str, actor: Actor):
    now = timezone.now()
    valid_from = changes.pop("valid_from", None) or now
    if active is not None and valid_from < active.valid_from:
        return _fact_version_insert(
            active=active, changes=changes, valid_from=valid_from, origin=origin, actor=actor
        )
    if active is not None:
        # closed before the new row: one active version per key is a database constraint
        active.valid_to = valid_from
        active.save(update_fields=["valid_to"])
    # a parked fact stays parked through a new value: only unparking brings it back
    parked_at = active.parked_at if active is not None else None
    fact = ProfileFact.objects.create(
        **changes, origin=origin, valid_from=valid_from, parked_at=parked_at, created_at=now
    )
    if active is not None:
        active.superseded_by = fact
        active.save(update_fields=["superseded_by"])
    data = {"key": fact.key, "supersedes": active.pk if active else None}
    _announce(kind="fact", item=fact, actor=actor, action="fact.set", data=data)
    return fact


def _fact_version_insert(*, active: ProfileFact, changes: dict, valid_from, origin: str, actor: Actor):
    """A version that began before the active one (learned late): it goes into the history
    between the version that held at `valid_from` and the next one, which supersedes it; the
    active version stays active."""
    history = ProfileFact.objects.filter(
        subject=active.subject, key=active.key, mode=active.mode, scope=active.scope
    )
    following = history.filter(valid_from__gt=valid_from).order_by("valid_from", "id").first()
    assert following is not None  # the active version, at least
    before = history.filter(valid_from__lte=valid_from).order_by("-valid_from", "-id").first()
    fact = ProfileFact.objects.create(
        **changes,
        origin=origin,
        valid_from=valid_from,
        valid_to=following.valid_from,
        superseded_by=following,
        created_at=timezone.now(),
    )
    if before is not None and (before.valid_to is None or before.valid_to > valid_from):
        before.valid_to = valid_from
        before.superseded_by = fact
        before.save(update_fields=["valid_to", "superseded_by"])
    data = {"key": fact.key, "supersedes": before.pk if before else None, "superseded_by": following.pk}
    _announce(kind="fact", item=fact, actor=actor, action="fact.set", data=data)
    return fact


def _announce(*, kind: str, item, actor: Actor, action: str, data: dict) -> None:
    audit_record(
        actor=actor, action=action, subject=item.subject, object_kind=kind, object_id=item.pk, data=data
    )
    memory_changed(subject_id=item.subject_id)
    notify(item.subject_id, "memory.changed", {"kind": kind, "id": item.pk})
