"""`manage.py backup` and `manage.py restore`.

The round trips run the commands as processes against a database of their own, migrated for
the test, while another process keeps storing notes through the service: the restored
database passes its integrity checks, holds every note committed before the backup started,
and no note without the rest of its transaction (its audit event, its full-text row).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memoryweb.backup import BackupError, sqlite_check, sqlite_in_use, sqlite_restore
from memoryweb.db.sqlite.base import Database
from tests.support import in_ci, wait_until

# each test makes the databases it backs up and restores (SQLite files, or PostgreSQL ones)
pytestmark = pytest.mark.own_stack

ROOT = Path(__file__).resolve().parents[2]

WRITER = r"""
import secrets, sys
from pathlib import Path
import django
django.setup()
from memory.config import get_config
from memory.models import App
from memory.services import Actor, note_store, subject_get_or_create

log, stop = open(sys.argv[1], "a", buffering=1), Path(sys.argv[2])
app, _ = App.objects.get_or_create(name="writer")
subject = subject_get_or_create(app=app, external_id="w")
config, actor = get_config(app), Actor.system("writer")
i = 0
while not stop.exists():
    content = f"load note {i} " + " ".join(secrets.token_hex(4) for _ in range(6))
    note, created = note_store(subject=subject, content=content, tags=["load"], actor=actor, config=config)
    assert created
    log.write(f"{note.pk}\t{content}\n")  # after the commit: this note is durable
    i += 1
"""


def _env(tmp_path: Path, database_url: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "memoryweb.settings",
        "MEMORYWEB_VAR_DIR": str(tmp_path / "var"),
        "DATABASE_URL": database_url,
        "MEMORY__NOTES__MAXENTRIES": "100000",  # no eviction: every stored note stays
    }


def _manage(env: dict, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args], env=env, capture_output=True, text=True, timeout=300
    )
    if check and result.returncode != 0:
        raise AssertionError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def _logged(log: Path) -> dict[int, str]:
    notes = {}
    for line in log.read_text().splitlines():
        if "\t" in line:
            pk, content = line.split("\t", 1)
            notes[int(pk)] = content
    return notes


def _backup_under_load(
    tmp_path: Path, source_env: dict, backup: Path
) -> tuple[dict[int, str], dict[int, str], str]:
    """Back up while the writer stores notes; (notes committed before the backup started,
    every note the writer logged, the backup's output)."""
    log, stop = tmp_path / "writer.log", tmp_path / "stop"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(log), str(stop)], env=source_env, stderr=subprocess.PIPE, text=True
    )
    try:
        assert wait_until(lambda: log.exists() and len(_logged(log)) >= 20, timeout=120), (
            "the writer wrote nothing"
        )
        before = _logged(log)
        output = _manage(source_env, "backup", str(backup)).stdout
        during = len(_logged(log))
        assert wait_until(lambda: len(_logged(log)) > during + 5, timeout=60)
    finally:
        stop.touch()
        writer.wait(timeout=60)
    assert writer.returncode == 0, writer.stderr.read()
    assert len(_logged(log)) > len(before)  # the writer went on while the backup ran
    return before, _logged(log), output


@pytest.mark.slow
def test_a_sqlite_backup_under_write_load_restores_every_committed_note(tmp_path):
    live, backup, restored = (
        tmp_path / "live.sqlite3",
        tmp_path / "backup.sqlite3",
        tmp_path / "restored.sqlite3",
    )
    source_env = _env(tmp_path, f"sqlite:///{live}")
    _manage(source_env, "migrate", "--noinput", "-v0")

    before, logged, output = _backup_under_load(tmp_path, source_env, backup)

    assert f"backup written: {backup}" in output
    assert f", {backup.stat().st_size} bytes)" in output
    restore = _manage(_env(tmp_path, f"sqlite:///{restored}"), "restore", str(backup), "--no-input").stdout
    assert f"database restored: {restored}" in restore
    conn = Database.connect(str(restored))
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        conn.execute("INSERT INTO memory_note_fts(memory_note_fts) VALUES ('integrity-check')")
        notes = dict(conn.execute("SELECT id, content FROM memory_note"))
        audited = {
            int(pk)
            for (pk,) in conn.execute("SELECT object_id FROM memory_auditevent WHERE action = 'note.stored'")
        }
        indexed = {pk for (pk,) in conn.execute("SELECT rowid FROM memory_note_fts")}
    finally:
        conn.close()
    assert before.items() <= notes.items()  # every note committed before the backup, intact
    assert set(notes) == audited == indexed  # no note without the rest of its transaction
    # nothing the writer did not write (the last one may be committed but not yet logged)
    assert len(set(notes) - set(logged)) <= 1
    assert all(notes[pk] == logged[pk] for pk in set(notes) & set(logged))
    assert f"notes          {len(notes)}" in output


def _sqlite_db(path: Path, notes: int = 2) -> Path:
    conn = Database.connect(str(path))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE django_migrations (id integer primary key, app text, name text)")
    conn.execute("CREATE TABLE memory_note (id integer primary key, content text)")
    conn.executemany("INSERT INTO memory_note (content) VALUES (?)", [(f"note {i}",) for i in range(notes)])
    conn.commit()
    conn.close()
    return path


def test_a_restore_is_refused_while_the_database_is_open_unless_forced(tmp_path):
    backup = _sqlite_db(tmp_path / "backup.sqlite3", notes=3)
    live = _sqlite_db(tmp_path / "live.sqlite3", notes=1)
    server = Database.connect(str(live))
    server.execute("SELECT count(*) FROM memory_note").fetchone()  # holds it open, as a server does
    try:
        assert sqlite_in_use(live)
        with pytest.raises(BackupError, match="is in use"):
            sqlite_restore(backup, live, ["memory_note"])
        assert server.execute("SELECT count(*) FROM memory_note").fetchone() == (1,)

        report = sqlite_restore(backup, live, ["memory_note"], force=True)

        assert report.counts == {"memory_note": 3}
        assert server.execute("SELECT count(*) FROM memory_note").fetchone() == (3,)  # sees the new one
    finally:
        server.close()
    assert not sqlite_in_use(live)


def test_a_missing_backup_is_refused(tmp_path):
    with pytest.raises(BackupError, match="no such file"):
        sqlite_check(tmp_path / "nope.sqlite3", [])


def test_a_file_that_is_no_database_is_refused(tmp_path):
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"this is not a database" * 200)
    with pytest.raises(BackupError, match="not a sound SQLite database"):
        sqlite_check(bad, [])


def test_a_corrupt_database_is_refused_and_nothing_is_restored(tmp_path):
    backup = _sqlite_db(tmp_path / "backup.sqlite3", notes=2000)
    conn = Database.connect(str(backup))
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    data = bytearray(backup.read_bytes())
    data[4096 * 3 : 4096 * 3 + 600] = b"\xff" * 600  # scribble over a b-tree page
    backup.write_bytes(bytes(data))
    live = _sqlite_db(tmp_path / "live.sqlite3", notes=1)

    with pytest.raises(BackupError, match="integrity check failed|not a sound SQLite database"):
        sqlite_restore(backup, live, ["memory_note"])
    assert sqlite_check(live, ["memory_note"]).counts == {"memory_note": 1}


def test_a_sqlite_database_of_another_program_is_refused(tmp_path):
    other = tmp_path / "other.sqlite3"
    conn = Database.connect(str(other))
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(BackupError, match="not memoryweb's"):
        sqlite_check(other, [])


def test_backup_refuses_to_overwrite_and_restore_names_the_missing_file(tmp_path):
    existing = tmp_path / "taken.sqlite3"
    existing.write_text("keep me")
    env = _env(tmp_path, f"sqlite:///{_sqlite_db(tmp_path / 'live.sqlite3')}")

    backup = _manage(env, "backup", str(existing), check=False)
    restore = _manage(env, "restore", str(tmp_path / "nope.sqlite3"), "--no-input", check=False)

    assert backup.returncode != 0 and "exists already" in backup.stderr
    assert existing.read_text() == "keep me"
    assert restore.returncode != 0 and "no such file" in restore.stderr


# --- PostgreSQL -----------------------------------------------------------------------------


def _pg_base_name() -> str:
    """A database name of this run's own: from DATABASE_URL when it names PostgreSQL."""
    url = os.environ.get("DATABASE_URL", "")
    name = url.rsplit("/", 1)[-1].split("?")[0] if url.startswith(("postgres", "pgsql")) else "memoryweb"
    return f"test_{name}_backup_{os.getpid()}"


@pytest.fixture
def pg_databases():
    """Two empty databases on 127.0.0.1:5432 (source and target), dropped afterwards."""
    reason = None
    if shutil.which("pg_dump") is None or shutil.which("pg_restore") is None:
        reason = "pg_dump / pg_restore are not installed"
    else:
        try:
            import psycopg

            admin = psycopg.connect(
                host="127.0.0.1", user="postgres", dbname="postgres", autocommit=True, connect_timeout=3
            )
        except Exception as exc:
            reason = f"no PostgreSQL at 127.0.0.1:5432 ({exc})"
    if reason:
        if in_ci():
            pytest.fail(f"CI is set, so the PostgreSQL backup test must run, but {reason}", pytrace=False)
        pytest.skip(reason)
    base = _pg_base_name()
    names = [f"{base}_src", f"{base}_dst"]
    for name in names:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    yield names
    for name in names:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin.close()


@pytest.mark.postgres
@pytest.mark.slow
def test_a_postgres_backup_under_write_load_restores_every_committed_note(tmp_path, pg_databases):
    import psycopg

    source, target = pg_databases
    source_env = _env(tmp_path, f"postgresql://postgres@127.0.0.1:5432/{source}")
    target_env = _env(tmp_path, f"postgresql://postgres@127.0.0.1:5432/{target}")
    _manage(source_env, "migrate", "--noinput", "-v0")
    backup = tmp_path / "backup.dump"

    before, logged, output = _backup_under_load(tmp_path, source_env, backup)

    listing = subprocess.run(["pg_restore", "--list", str(backup)], capture_output=True, text=True)
    assert listing.returncode == 0 and "memory_note" in listing.stdout
    assert f"backup written: {backup}" in output
    restore = _manage(target_env, "restore", str(backup), "--no-input").stdout
    assert f"database restored: {target}" in restore
    with psycopg.connect(host="127.0.0.1", user="postgres", dbname=target) as conn:
        notes = dict(conn.execute("SELECT id, content FROM memory_note").fetchall())
        audited = {
            int(pk)
            for (pk,) in conn.execute("SELECT object_id FROM memory_auditevent WHERE action = 'note.stored'")
        }
        indexed = {pk for (pk,) in conn.execute("SELECT id FROM memory_note WHERE search_vector IS NOT NULL")}
    assert before.items() <= notes.items()
    assert set(notes) == audited == indexed
    assert len(set(notes) - set(logged)) <= 1
    assert f"notes          {len(notes)}" in output  # the counts are the dump's own snapshot
    assert f"notes          {len(notes)}" in restore

    # refused while another session uses the database (unless forced), and for a bad archive
    bad = tmp_path / "bad.dump"
    bad.write_bytes(b"PGDMP not really" * 10)
    with psycopg.connect(host="127.0.0.1", user="postgres", dbname=target) as other:
        other.execute("SELECT 1")
        busy = _manage(target_env, "restore", str(backup), "--no-input", check=False)
        forced = _manage(target_env, "restore", str(backup), "--no-input", "--force", check=False)
    corrupt = _manage(target_env, "restore", str(bad), "--no-input", check=False)
    assert busy.returncode != 0 and "other session" in busy.stderr
    assert forced.returncode == 0, forced.stderr
    assert corrupt.returncode != 0 and "not a readable pg_dump archive" in corrupt.stderr
