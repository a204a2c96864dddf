"""Upgrading a database from before the renovation keeps every conversation, message, reflection
run, job run and counter: the models moved apps, their rows did not (memory 0012/0013, chat
0005, consolidation 0002, memoryweb 0001)."""

import os
import subprocess
import sys

import pytest
from django.conf import settings
from pysqlite3 import dbapi2 as sqlite3

BEFORE = [("memory", "0011_pg_search_config"), ("chat", "0004_live_event"), ("consolidation", "0001_initial")]


def _manage(var_dir, *args):
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"} | {"MEMORYWEB_VAR_DIR": str(var_dir)}
    subprocess.run(
        [sys.executable, "manage.py", *args], cwd=settings.BASE_DIR, env=env, check=True, timeout=300
    )


def _insert(db, table: str, **values) -> int:
    """A row with `values`, every other NOT NULL column without a default filled with a plain value."""
    filler = {"integer": 0, "bigint": 0, "bool": 0, "real": 0.0, "datetime": "2026-01-01 00:00:00"}
    for _, name, kind, notnull, default, pk in db.execute(f"PRAGMA table_info({table})"):
        if name in values or pk or not notnull or default is not None:
            continue
        kind = kind.lower()
        values[name] = next((v for k, v in filler.items() if k in kind), "{}" if "text" in kind else "")
    columns = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    return db.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", list(values.values())).lastrowid


@pytest.mark.slow  # two `migrate` runs in subprocesses
@pytest.mark.own_stack
def test_rows_written_before_the_models_moved_are_all_there_after_migrate(tmp_path):
    for app, migration in BEFORE:
        _manage(tmp_path, "migrate", app, migration, "--noinput", "-v", "0")
    db = sqlite3.connect(tmp_path / "memoryweb.sqlite3")
    app = _insert(db, "memory_app", name="old")
    subject = _insert(db, "memory_subject", app_id=app, external_id="ana")
    conversation = _insert(db, "chat_conversation", subject_id=subject, external_id="c1")
    message = _insert(db, "chat_message", conversation_id=conversation, role="user", text="I moved to Porto")
    _insert(db, "chat_reflectionrun", conversation_id=conversation, through_message_id=message, status="done")
    _insert(db, "consolidation_jobrun", key="consolidate:subject:1", subject_id=subject, status="done")
    _insert(db, "memory_counter", name="redaction.message", value=3)
    db.commit()
    db.close()

    _manage(tmp_path, "migrate", "--noinput", "-v", "0")

    db = sqlite3.connect(tmp_path / "memoryweb.sqlite3")
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not {"chat_conversation", "chat_message", "consolidation_jobrun", "memory_counter"} & tables
    assert db.execute("SELECT subject_id, external_id FROM memory_conversation").fetchall() == [
        (subject, "c1")
    ]
    assert db.execute("SELECT conversation_id, text FROM memory_message").fetchall() == [
        (conversation, "I moved to Porto")
    ]
    assert db.execute("SELECT through_message_id FROM chat_reflectionrun").fetchall() == [(message,)]
    assert db.execute("SELECT key, status FROM memory_jobrun").fetchall() == [
        ("consolidate:subject:1", "done")
    ]
    assert db.execute("SELECT name, value FROM memoryweb_counter").fetchall() == [("redaction.message", 3)]
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []


@pytest.mark.slow  # two `migrate` runs in subprocesses
@pytest.mark.own_stack
def test_turns_stored_before_speaker_names_keep_their_text_and_are_found_after_migrate(tmp_path):
    _manage(tmp_path, "migrate", "memory", "0027_parked_distilled", "--noinput", "-v", "0")
    db = sqlite3.connect(tmp_path / "memoryweb.sqlite3")
    app = _insert(db, "memory_app", name="old")
    subject = _insert(db, "memory_subject", app_id=app, external_id="ana")
    conversation = _insert(db, "memory_conversation", subject_id=subject, external_id="c1")
    message = _insert(db, "memory_message", conversation_id=conversation, role="user", text="I paint horses")
    unit = _insert(
        db,
        "memory_evidence",
        subject_id=subject,
        conversation_id=conversation,
        message_id=message,
        role="user",
        text="I paint horses",
        status="visible",
    )
    db.commit()
    db.close()

    _manage(tmp_path, "migrate", "--noinput", "-v", "0")

    db = sqlite3.connect(tmp_path / "memoryweb.sqlite3")
    assert db.execute("SELECT name, text FROM memory_message").fetchall() == [("", "I paint horses")]
    assert db.execute("SELECT name, text FROM memory_evidence").fetchall() == [("", "I paint horses")]
    found = "SELECT rowid FROM memory_evidence_fts WHERE memory_evidence_fts MATCH ?"
    assert db.execute(found, ["{name text} : horses"]).fetchall() == [(unit,)]
    # a name set afterwards is indexed too (the update trigger covers the column)
    db.execute("UPDATE memory_evidence SET name = 'Ana' WHERE id = ?", [unit])
    db.commit()
    assert db.execute(found, ["{name text} : ana"]).fetchall() == [(unit,)]
