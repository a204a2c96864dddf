"""Edits and deletions of lessons and procedures (consolidation writes them; people curate them).

Procedures are advice text: their steps are stored and shown, never executed. Every change is
announced to open dashboard pages (`memory.changed`) after commit.
"""

from django.db import transaction

from memory.models import Lesson, Origin, Procedure
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
from memory.services.scrub import scrub
from memory.services.versions import version_write
from memoryweb.errors import InvalidInput
from memoryweb.live import notify

MAX_LESSON_CHARS = 1000
MAX_STEP_CHARS = 500


def _clean_text(value, field: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field} must be a non-empty string", field=field)
    value = scrub(value.strip(), where=field)
    if len(value) > limit:
        raise InvalidInput(f"{field} must be at most {limit} characters", field=field)
    return value


def _clean_steps(steps) -> list[str]:
    if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
        raise InvalidInput("steps must be a list of strings", field="steps")
    cleaned = [_clean_text(s, "steps", MAX_STEP_CHARS) for s in steps if s.strip()]
    if not 2 <= len(cleaned) <= 8:
        raise InvalidInput("a procedure has 2 to 8 steps", field="steps")
    return cleaned


@transaction.atomic
def lesson_edit(*, lesson: Lesson, text: str, actor: Actor, origin: str = Origin.API) -> Lesson:
    """Write a new version of the lesson's text; earlier versions stay readable."""
    text = _clean_text(text, "text", MAX_LESSON_CHARS)
    if text == lesson.text:
        return lesson
    return version_write(kind="lesson", item=lesson, changes={"text": text}, origin=origin, actor=actor)


@transaction.atomic
def procedure_edit(
    *, procedure: Procedure, title: str | None = None, steps=None, actor: Actor, origin: str = Origin.API
) -> Procedure:
    """Write a new version of the procedure's title and steps; earlier versions stay readable."""
    new_title = _clean_text(title, "title", 200) if title is not None else procedure.title
    new_steps = _clean_steps(steps) if steps is not None else procedure.steps
    if new_title == procedure.title and new_steps == procedure.steps:
        return procedure
    changes = {"title": new_title, "steps": new_steps}
    return version_write(kind="procedure", item=procedure, changes=changes, origin=origin, actor=actor)


@transaction.atomic
def lesson_delete(*, lesson: Lesson, actor: Actor) -> None:
    """Delete a lesson. Its archived parent notes stay (readable by id, never silently lost)."""
    lesson_id, subject = lesson.pk, lesson.subject
    lesson.delete()
    audit_record(
        actor=actor, action="lesson.deleted", subject=subject, object_kind="lesson", object_id=lesson_id
    )
    memory_changed(subject_id=subject.pk)
    notify(subject.pk, "memory.changed", {"kind": "lesson", "id": lesson_id})


@transaction.atomic
def procedure_delete(*, procedure: Procedure, actor: Actor) -> None:
    procedure_id, subject = procedure.pk, procedure.subject
    procedure.delete()
    audit_record(
        actor=actor,
        action="procedure.deleted",
        subject=subject,
        object_kind="procedure",
        object_id=procedure_id,
    )
    memory_changed(subject_id=subject.pk)
    notify(subject.pk, "memory.changed", {"kind": "procedure", "id": procedure_id})
