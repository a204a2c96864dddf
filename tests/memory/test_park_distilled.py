"""Parking a lesson or a procedure (memory/services/parking.py): kept, never in a context, a
search, a recall or a tool's answer; unparking brings it back; nothing is deleted. The same
service parks notes and facts (tests/memory/dashboard/test_dashboard_park.py)."""

import json

import pytest

from memory.context import context_build
from memory.models import AuditEvent, Lesson, Procedure
from memory.ranking import rank_distilled
from memory.search.lexical import lesson_search, procedure_search, query_terms
from memory.search.memories import memory_search
from memory.selectors import distilled_browse, distilled_recall, subject_export
from memory.services import item_park, subject_delete
from memory.services.lessons import lesson_edit, procedure_edit
from memory.services.portable import subject_import
from memoryweb.errors import InvalidInput

pytestmark = pytest.mark.django_db

MESSAGE = "How should I deploy the billing service on Friday?"


def _lesson(subject) -> Lesson:
    return Lesson.objects.create(subject=subject, text="Never deploy the billing service on a Friday.")


def _procedure(subject) -> Procedure:
    return Procedure.objects.create(
        subject=subject,
        title="Deploy the billing service",
        steps=["Run the billing tests", "Deploy billing to staging first"],
    )


KINDS = {
    "lesson": (_lesson, lesson_search, "lessons", "l"),
    "procedure": (_procedure, procedure_search, "procedures", "p"),
}


def _prompt(subject, config) -> str:
    context = context_build(subject=subject, message=MESSAGE, config=config, record=False)
    return "\n".join([context.stable_prefix.text, *(block.text for block in context.sections)])


@pytest.mark.parametrize("kind", KINDS)
def test_a_parked_item_leaves_every_search_recall_and_context_until_unparked(kind, subject, actor, config):
    make, search, name, prefix = KINDS[kind]
    item = make(subject)
    model = type(item)
    terms = query_terms(MESSAGE)
    ref = f"[{prefix}:{item.pk}]"
    assert ref in _prompt(subject, config)

    assert item_park(item=item, parked=True, actor=actor) is True

    stored = model.objects.get(pk=item.pk)  # kept, with the time it was parked
    assert stored.parked_at is not None and item.parked_at == stored.parked_at
    assert ref not in _prompt(subject, config)
    assert search(subject.pk, terms, limit=10) == []
    assert [h.id for h in search(subject.pk, terms, limit=10, include_parked=True)] == [item.pk]
    assert rank_distilled(name=name, subject_id=subject.pk, terms=terms, config=config) == []
    assert distilled_recall(model=model, search=search, subject=subject, query="billing deploy") == []
    assert distilled_recall(model=model, search=search, subject=subject) == []  # newest first, none
    assert [h.item.pk for h in memory_search(subject=subject, query="billing", config=config).hits] == []
    with_parked = memory_search(subject=subject, query="billing", config=config, include_parked=True)
    assert [(h.kind, h.item.pk) for h in with_parked.hits] == [(kind, item.pk)]
    # the dashboard's list keeps it, under "parked"
    browse = {
        show: [i.pk for i, _ in distilled_browse(model=model, search=search, subject=subject, parked=show)[0]]
        for show in ("live", "parked", "all")
    }
    assert browse == {"live": [], "parked": [item.pk], "all": [item.pk]}
    event = AuditEvent.objects.get(action=f"{kind}.parked")
    assert (event.object_kind, event.object_id, event.subject_id) == (kind, str(item.pk), subject.pk)

    assert item_park(item=item, parked=False, actor=actor) is True

    assert model.objects.get(pk=item.pk).parked_at is None
    assert ref in _prompt(subject, config)
    assert [h.id for h in search(subject.pk, terms, limit=10)] == [item.pk]
    assert [i.pk for i, _ in distilled_recall(model=model, search=search, subject=subject)] == [item.pk]
    assert AuditEvent.objects.filter(action=f"{kind}.unparked", object_id=str(item.pk)).exists()


@pytest.mark.parametrize("kind", KINDS)
def test_parking_what_is_parked_writes_nothing(kind, subject, actor):
    item = KINDS[kind][0](subject)
    item_park(item=item, parked=True, actor=actor)
    events = AuditEvent.objects.count()

    assert item_park(item=item, parked=True, actor=actor) is False
    assert AuditEvent.objects.count() == events
    assert item_park(item=_lesson(subject), parked=False, actor=actor) is False


def test_parked_must_be_a_boolean(subject, actor):
    lesson = _lesson(subject)
    with pytest.raises(InvalidInput) as error:
        item_park(item=lesson, parked="yes", actor=actor)  # type: ignore[arg-type]
    assert error.value.field == "parked"
    assert Lesson.objects.get(pk=lesson.pk).parked_at is None


def test_an_edit_keeps_a_parked_lesson_or_procedure_parked(subject, actor, config):
    lesson, procedure = _lesson(subject), _procedure(subject)
    item_park(item=lesson, parked=True, actor=actor)
    item_park(item=procedure, parked=True, actor=actor)

    lesson_edit(lesson=lesson, text="Never deploy the billing service on a Friday afternoon.", actor=actor)
    procedure_edit(procedure=procedure, title="Deploy billing", actor=actor)

    assert Lesson.objects.get(pk=lesson.pk).parked_at is not None
    assert Procedure.objects.get(pk=procedure.pk).parked_at is not None
    assert "billing" not in _prompt(subject, config).lower()


def test_the_export_carries_parked_at_and_the_import_restores_it(subject, actor, config, app):
    parked_lesson, live_lesson = _lesson(subject), Lesson.objects.create(subject=subject, text="Tea at four.")
    parked_procedure = _procedure(subject)
    item_park(item=parked_lesson, parked=True, actor=actor)
    item_park(item=parked_procedure, parked=True, actor=actor)

    document = json.loads(json.dumps(subject_export(subject=subject)))
    parked = {item["text"]: item["parked_at"] is not None for item in document["lessons"]}
    assert parked == {parked_lesson.text: True, live_lesson.text: False}
    assert [item["parked_at"] is not None for item in document["procedures"]] == [True]

    subject_delete(subject=subject, actor=actor)
    subject_import(app=app, external_id="alice", document=document, actor=actor, config=config)

    restored = {lesson.text: lesson.parked_at for lesson in Lesson.objects.all()}
    assert restored[live_lesson.text] is None
    assert restored[parked_lesson.text] == parked_lesson.parked_at is not None  # the time it was parked
    assert Procedure.objects.get().parked_at == parked_procedure.parked_at


def test_an_older_export_without_parked_at_imports_them_unparked(subject, actor, config, app):
    _lesson(subject), _procedure(subject)
    document = json.loads(json.dumps(subject_export(subject=subject)))
    for kind in ("lessons", "procedures"):
        for item in document[kind]:
            del item["parked_at"]

    subject_delete(subject=subject, actor=actor)
    subject_import(app=app, external_id="alice", document=document, actor=actor, config=config)

    assert [lesson.parked_at for lesson in Lesson.objects.all()] == [None]
    assert [procedure.parked_at for procedure in Procedure.objects.all()] == [None]
