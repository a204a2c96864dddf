"""A subject's export (docs/export.md): the v1 schema, the import, and the round trip
export → delete → import giving back the same context."""

import json
import re

import jsonschema
import pytest

from memory.config import get_config
from memory.context import context_build
from memory.models import Evidence, Message, Note, Origin, ProfileFact, Subject
from memory.selectors import subject_export
from memory.services import subject_delete
from memory.services.portable import SCHEMA_PATH, subject_import
from memoryweb.errors import Conflict, InvalidInput, NotFound
from tests.memory.portable_world import MARKER, portable_world

QUERIES = [
    "Any restaurant tips for Lisbon?",
    "when is my flight",
    "how do I deploy the app",
    "what does my cat hate",
    "which city do I live in",
    "dinner plans tonight",
]


def rendered(subject, config) -> list[str]:
    """The context text for each query (stable prefix and sections), with item ids left out:
    an import writes new rows, so "same context" means the same text in the same order."""
    out = []
    for query in QUERIES:
        context = context_build(subject=subject, message=query, config=config, record=False)
        text = "\n\n".join([context.stable_prefix.text, *(b.text for b in context.sections)])
        out.append(re.sub(r"\b([a-z]+):\d+\b", r"\1:#", text))
    return out


@pytest.fixture
def world(subject, actor, config):
    return portable_world(subject, actor, config)


def test_the_export_is_a_v1_document_the_schema_accepts(subject, world):
    document = json.loads(json.dumps(subject_export(subject=subject)))

    jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text())).validate(document)
    assert (document["format"], document["version"]) == ("memoryweb.subject", 1)
    kinds = {key: len(document[key]) for key in ("facts", "notes", "links", "lessons", "procedures", "votes")}
    assert kinds == {"facts": 4, "notes": 5, "links": 1, "lessons": 1, "procedures": 1, "votes": 2}
    lesson = document["lessons"][0]
    assert [v["version"] for v in lesson["versions"]] == [1, 2]
    assert sorted(n["id"] for n in document["notes"] if n["consolidated_into"] == lesson["id"]) == sorted(
        n.pk for n in world.notes[3:]
    )
    assert [v["version"] for v in document["procedures"][0]["versions"]] == [1, 2]
    assert document["consent"] == {"health": "ask"}
    assert [p["status"] for p in document["pending"]] == ["pending"]
    assert {v["item_kind"] for v in document["votes"]} == {"note", "lesson"}


def test_export_delete_import_gives_the_same_context(subject, world, actor, config, app, other_app):
    before = rendered(subject, config)
    document = json.loads(json.dumps(subject_export(subject=subject)))
    assert MARKER in "".join(before)

    subject_delete(subject=subject, actor=actor)
    counts = subject_import(app=app, external_id="alice", document=document, actor=actor, config=config)

    assert counts["notes"] == 5 and counts["facts"] == 4 and counts["links"] == 1
    restored = Subject.objects.get(app=app, external_id="alice")
    assert rendered(restored, config) == before
    again = json.loads(json.dumps(subject_export(subject=restored)))
    for kind in ("facts", "notes", "lessons", "procedures", "conversations", "evidence", "pending"):
        assert len(again[kind]) == len(document[kind]), kind
    assert {n["origin"] for n in again["notes"]} == {Origin.IMPORT}
    assert [m["name"] for m in again["conversations"][0]["messages"]] == ["Alice", ""]
    assert [e["name"] for e in again["evidence"]] == ["Alice", ""]
    assert [f["value"] for f in again["facts"] if f["key"] == "city"] == [
        f"Porto {MARKER}",
        f"Lisbon {MARKER}",
    ]
    assert [f["superseded_by"] is not None for f in again["facts"] if f["key"] == "city"] == [True, False]
    assert again["consent"] == {"health": "ask"}

    # into another App: the same context there too
    other_config = get_config(other_app)
    subject_import(
        app=other_app, external_id="alice-copy", document=document, actor=actor, config=other_config
    )
    copy = Subject.objects.get(app=other_app, external_id="alice-copy")
    assert rendered(copy, other_config) == before


def test_a_document_without_speaker_names_imports_with_none(subject, world, actor, config, app):
    document = json.loads(json.dumps(subject_export(subject=subject)))
    for item in [*document["evidence"], *document["conversations"][0]["messages"]]:
        del item["name"]
    subject_delete(subject=subject, actor=actor)

    subject_import(app=app, external_id="alice", document=document, actor=actor, config=config)

    restored = Subject.objects.get(app=app, external_id="alice")
    assert set(Message.objects.filter(conversation__subject=restored).values_list("name", flat=True)) == {""}
    assert set(Evidence.objects.filter(subject=restored).values_list("name", flat=True)) == {""}


def test_a_subject_that_holds_memory_is_refused_and_left_as_it_was(subject, world, actor, config, app):
    document = json.loads(json.dumps(subject_export(subject=subject)))
    notes_before = Note.objects.count()

    with pytest.raises(Conflict):
        subject_import(app=app, external_id="alice", document=document, actor=actor, config=config)

    assert Note.objects.count() == notes_before


@pytest.mark.parametrize(
    "change,field",
    [
        (lambda d: d.update(version=2), "version"),
        (lambda d: d["notes"][0].pop("content"), "notes[0]"),
        (lambda d: d["notes"][0].update(content=12), "notes[0].content"),
        (lambda d: d["facts"][1].update(valid_from="last tuesday"), "facts[1].valid_from"),
        (lambda d: d["notes"][0].update(colour="red"), "notes[0]"),
    ],
)
def test_a_bad_document_is_a_400_naming_the_field_and_writes_nothing(
    subject, world, actor, config, app, change, field
):
    document = json.loads(json.dumps(subject_export(subject=subject)))
    change(document)
    subject_delete(subject=subject, actor=actor)

    with pytest.raises(InvalidInput) as raised:
        subject_import(app=app, external_id="alice", document=document, actor=actor, config=config)

    assert raised.value.field == field
    assert not Note.objects.exists() and not ProfileFact.objects.exists()


def test_an_imported_secret_is_redacted(subject, world, actor, config, app):
    document = json.loads(json.dumps(subject_export(subject=subject)))
    document["notes"][1]["content"] = "my AWS key is AKIAIOSFODNN7EXAMPLE"
    subject_delete(subject=subject, actor=actor)

    subject_import(app=app, external_id="alice", document=document, actor=actor, config=config)

    assert not Note.objects.filter(content__contains="AKIAIOSFODNN7EXAMPLE").exists()


@pytest.mark.parametrize(
    "change,error,field",
    [
        (lambda d: d["links"][0].update(dst=999999), NotFound, "links[0].dst"),
        (lambda d: d["notes"][1].update(consolidated_into=424242), NotFound, "notes[1].consolidated_into"),
        (lambda d: d.update(consent={"astrology": "allow"}), NotFound, "consent.astrology"),
        (lambda d: d["notes"][1].update(id=d["notes"][0]["id"]), Conflict, "notes[1].id"),
        (lambda d: d["links"][0].update(dst=d["links"][0]["src"]), Conflict, "body"),  # linked to itself
    ],
)
def test_an_inconsistent_document_names_the_field_and_writes_nothing(
    subject, world, actor, config, app, change, error, field
):
    document = json.loads(json.dumps(subject_export(subject=subject)))
    change(document)
    subject_delete(subject=subject, actor=actor)

    with pytest.raises(error) as raised:
        subject_import(app=app, external_id="alice", document=document, actor=actor, config=config)

    assert raised.value.field == field
    assert not Note.objects.exists() and not Subject.objects.filter(external_id="alice").exists()
