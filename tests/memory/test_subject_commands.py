"""manage.py subject_export / subject_import (docs/export.md): the same document as the REST
export, and an import through the same service, all or nothing."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory.models import Note, ProfileFact, Subject
from memory.selectors import subject_export
from memory.services import subject_delete
from tests.memory.portable_world import portable_world


@pytest.fixture
def world(subject, actor, config):
    return portable_world(subject, actor, config)


def test_subject_export_writes_the_document_the_api_answers(subject, world, app, client, tmp_path):
    out = tmp_path / "alice.json"

    call_command("subject_export", "--app", app.name, "--subject", "alice", "-o", str(out))

    def timeless(document: dict) -> dict:
        return {k: v for k, v in document.items() if k != "exported_at"}

    written = json.loads(out.read_text())
    assert timeless(written) == timeless(json.loads(json.dumps(subject_export(subject=subject))))
    assert timeless(written) == timeless(client.get("/api/v1/subjects/alice").json())


def test_subject_export_to_stdout(subject, world, app, capsys):
    call_command("subject_export", "--app", app.name, "--subject", "alice")

    assert json.loads(capsys.readouterr().out)["format"] == "memoryweb.subject"


def test_export_delete_import_brings_the_subject_back(subject, world, app, actor, tmp_path, capsys):
    out = tmp_path / "alice.json"
    call_command("subject_export", "--app", app.name, "--subject", "alice", "-o", str(out))
    facts = sorted(ProfileFact.objects.filter(subject=subject).values_list("key", "value"))
    notes = sorted(Note.objects.filter(subject=subject).values_list("content", flat=True))
    subject_delete(subject=subject, actor=actor)
    capsys.readouterr()

    call_command("subject_import", "--app", app.name, "--subject", "alice", str(out))

    restored = Subject.objects.get(app=app, external_id="alice")
    assert sorted(ProfileFact.objects.filter(subject=restored).values_list("key", "value")) == facts
    assert sorted(Note.objects.filter(subject=restored).values_list("content", flat=True)) == notes
    assert json.loads(capsys.readouterr().out)["counts"]["notes"] == len(notes)


def test_subject_import_refuses_a_subject_with_memory_and_a_bad_file(subject, world, app, tmp_path):
    out = tmp_path / "alice.json"
    call_command("subject_export", "--app", app.name, "--subject", "alice", "-o", str(out))
    before = Note.objects.count()

    with pytest.raises(CommandError, match="already holds memory"):
        call_command("subject_import", "--app", app.name, "--subject", "alice", str(out))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**json.loads(out.read_text()), "version": 99}))
    with pytest.raises(CommandError, match="version"):
        call_command("subject_import", "--app", app.name, "--subject", "bob", str(bad))
    with pytest.raises(CommandError, match="no app"):
        call_command("subject_export", "--app", "nope", "--subject", "alice")

    assert Note.objects.count() == before
    assert not Subject.objects.filter(external_id="bob", notes__isnull=False).exists()
