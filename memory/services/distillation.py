"""Writes of distilled knowledge: a lesson (and its procedure) in place of the notes it came from,
and the decay of vote scores. Called by the consolidation app's services."""

from django.db import transaction
from django.db.models import Case, F, FloatField, Value, When
from django.db.models.functions import Abs
from django.db.models.lookups import LessThan
from django.utils import timezone

from memory.models import (
    Lesson,
    LessonVersion,
    Note,
    Origin,
    Procedure,
    ProcedureVersion,
    ProfileFact,
    Subject,
)
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed

# a score this close to zero after a decay is set to zero, so decayed rows drop out of the
# next UPDATE instead of shrinking forever
DECAY_FLOOR = 0.001


class ClusterChanged(Exception):
    """A note of the cluster was archived, consolidated or deleted since it was read."""


def lesson_distilled_store(
    *,
    subject: Subject,
    note_ids: list[int],
    text: str,
    tags: list[str],
    procedure: tuple[str, list[str]] | None,
    distiller: str,
    actor: Actor,
) -> Lesson | None:
    """Write the lesson (and procedure) distilled from `note_ids` and archive those notes into
    it, all in one transaction. Returns the lesson, or None — writing nothing — when any of the
    notes is no longer a live, unconsolidated note of the subject.

    Safe to repeat: the notes are claimed by a conditional UPDATE that matches only notes not
    yet consolidated, so a second attempt (a retried task, a second worker) writes nothing.
    """
    ids = sorted(set(note_ids))
    if not ids:
        return None
    try:
        with transaction.atomic():
            now = timezone.now()
            lesson = Lesson.objects.create(
                subject=subject,
                text=text,
                tags=tags,
                origin=Origin.TASK,
                distiller=distiller,
                created_at=now,
                updated_at=now,
            )
            claimed = Note.objects.filter(
                pk__in=ids, subject=subject, archived_at__isnull=True, consolidated_into__isnull=True
            ).update(archived_at=now, consolidated_into=lesson)
            if claimed != len(ids):
                raise ClusterChanged
            LessonVersion.objects.create(
                lesson=lesson, version=1, text=text, tags=tags, origin=Origin.TASK, created_at=now
            )
            procedure_id = None
            if procedure is not None:
                title, steps = procedure
                row = Procedure.objects.create(
                    subject=subject,
                    lesson=lesson,
                    title=title,
                    steps=steps,
                    tags=tags,
                    origin=Origin.TASK,
                    distiller=distiller,
                    created_at=now,
                    updated_at=now,
                )
                ProcedureVersion.objects.create(
                    procedure=row, version=1, title=title, steps=steps, tags=tags, origin=Origin.TASK
                )
                procedure_id = row.pk
            audit_record(
                actor=actor,
                action="lesson.distilled",
                subject=subject,
                object_kind="lesson",
                object_id=lesson.pk,
                data={"notes": ids, "procedure": procedure_id, "distiller": distiller},
            )
            memory_changed(subject_id=subject.pk)
    except ClusterChanged:
        return None
    return lesson


def vote_scores_decay(*, factor: float, app_ids: list[int] | None = None) -> dict[str, int]:
    """Multiply every non-zero vote_score of notes, facts, lessons and procedures (of the
    subjects of `app_ids`, or of all) by `factor`: one UPDATE per table, in one transaction.
    Returns the rows changed per table. Each call decays once more: callers guard repeats."""
    if not 0 <= factor <= 1:
        raise ValueError(f"a decay factor is between 0 and 1, got {factor}")
    decayed = F("vote_score") * factor
    new_score = Case(
        When(LessThan(Abs(decayed), DECAY_FLOOR), then=Value(0.0)),
        default=decayed,
        output_field=FloatField(),
    )
    changed = {}
    touched: set[int] = set()
    with transaction.atomic():
        for name, model in (
            ("notes", Note),
            ("facts", ProfileFact),
            ("lessons", Lesson),
            ("procedures", Procedure),
        ):
            rows = model._default_manager.exclude(vote_score=0)
            if app_ids is not None:
                rows = rows.filter(subject__app_id__in=app_ids)
            touched.update(rows.values_list("subject_id", flat=True).distinct())
            changed[name] = rows.update(vote_score=new_score)
        memory_changed(subject_ids=sorted(touched))
    return changed
