"""Backups of the database, consistent while writes go on, and their restore.

- SQLite: the online backup API of the driver the project uses (memoryweb/db/sqlite), in one
  step, so the copy is the database as of one read transaction (WAL lets writers go on
  meanwhile). The copy is written beside the target, checked with `PRAGMA integrity_check`,
  switched to a rollback journal (one self-contained file) and renamed into place. A restore
  copies a checked backup into the database file through the same API, in one transaction:
  a connection sees the old database or the new one, never a mix. It is refused while another
  connection holds the file open, unless forced.
- PostgreSQL: `pg_dump --format=custom` of a snapshot exported by a REPEATABLE READ
  transaction, which also counts the rows, so the counts describe exactly what was dumped;
  checked with `pg_restore --list`. A restore runs `pg_restore --clean --if-exists
  --single-transaction`, refused while other sessions use the database, unless forced.

Every function returns or raises; `BackupError` says what is wrong in a sentence.
"""

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from memoryweb.db.sqlite.base import Database


class BackupError(Exception):
    pass


@dataclass
class Report:
    path: Path
    size: int
    counts: dict[str, int] = field(default_factory=dict)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# --- SQLite -------------------------------------------------------------------------------


def _sqlite_counts(conn, tables: list[str]) -> dict[str, int]:
    present = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {
        t: conn.execute(f"SELECT count(*) FROM {_quote(t)}").fetchone()[0] for t in tables if t in present
    }


def sqlite_check(path: Path, tables: list[str]) -> Report:
    """Check that `path` is a sound memoryweb SQLite database; its size and row counts."""
    if not path.is_file():
        raise BackupError(f"{path}: no such file")
    try:
        conn = Database.connect(f"file:{path}?mode=ro", uri=True)
    except Database.Error as exc:
        raise BackupError(f"{path}: cannot open it: {exc}") from exc
    try:
        result = [row[0] for row in conn.execute("PRAGMA integrity_check")]
        if result != ["ok"]:
            raise BackupError(f"{path}: integrity check failed: {'; '.join(result[:5])}")
        counts = _sqlite_counts(conn, ["django_migrations", *tables])
    except Database.DatabaseError as exc:
        raise BackupError(f"{path}: not a sound SQLite database ({exc})") from exc
    finally:
        conn.close()
    if "django_migrations" not in counts:
        raise BackupError(f"{path}: a SQLite database, but not memoryweb's (no django_migrations table)")
    counts.pop("django_migrations")
    return Report(path=path, size=path.stat().st_size, counts=counts)


def sqlite_in_use(path: Path) -> bool:
    """Whether another connection holds the database open. In WAL mode every connection that
    has read the file keeps a shared lock on it, so an exclusive lock is refused at once."""
    if not path.exists():
        return False
    conn = Database.connect(str(path), timeout=0, isolation_level=None)
    try:
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("ROLLBACK")
        return False
    except Database.OperationalError:
        return True
    finally:
        conn.close()


def _sqlite_copy(source: Path, target, *, timeout: float = 20) -> None:
    src = Database.connect(str(source), timeout=timeout)
    try:
        dst = Database.connect(str(target), timeout=timeout)
        try:
            src.backup(dst, pages=-1)  # one step: one read transaction, a consistent copy
        finally:
            dst.close()
    finally:
        src.close()


def sqlite_backup(database: Path, output: Path, tables: list[str]) -> Report:
    """Copy the live database at `database` to `output` (which must not exist)."""
    if not database.is_file():
        raise BackupError(f"{database}: the database file does not exist")
    if output.exists():
        raise BackupError(f"{output} exists already: name a new file")
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".partial")
    partial.unlink(missing_ok=True)
    try:
        _sqlite_copy(database, partial)
        conn = Database.connect(str(partial))
        try:
            conn.execute("PRAGMA journal_mode=DELETE")  # the backup is one file, no -wal beside it
        finally:
            conn.close()
        sqlite_check(partial, tables)
        os.replace(partial, output)
    finally:
        partial.unlink(missing_ok=True)
    return sqlite_check(output, tables)


def sqlite_restore(backup: Path, database: Path, tables: list[str], *, force: bool = False) -> Report:
    """Replace the database at `database` with the checked backup `backup`."""
    sqlite_check(backup, tables)
    if not force and sqlite_in_use(database):
        raise BackupError(
            f"{database} is in use (a server, worker or shell has it open): stop them first, "
            "or pass --force to restore into it while they run"
        )
    database.parent.mkdir(parents=True, exist_ok=True)
    _sqlite_copy(backup, database)
    conn = Database.connect(str(database))
    try:
        conn.execute("PRAGMA journal_mode=WAL")  # as memoryweb runs it
    finally:
        conn.close()
    return sqlite_check(database, tables)


# --- PostgreSQL ---------------------------------------------------------------------------


def _pg_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise BackupError(f"{name} is not installed (Debian: apt-get install postgresql-client)")
    return path


def pg_env(db: dict) -> dict[str, str]:
    """The libpq environment for a Django DATABASES entry."""
    env = dict(os.environ)
    for var, value in (
        ("PGHOST", db.get("HOST")),
        ("PGPORT", db.get("PORT")),
        ("PGUSER", db.get("USER")),
        ("PGPASSWORD", db.get("PASSWORD")),
        ("PGDATABASE", db.get("NAME")),
        ("PGSSLMODE", (db.get("OPTIONS") or {}).get("sslmode")),
    ):
        if value:
            env[var] = str(value)
    return env


def _run(argv: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(argv, env=env, capture_output=True, text=True)


def pg_check(path: Path, env: dict) -> Report:
    """Check that `path` is a pg_dump custom-format archive pg_restore can read."""
    if not path.is_file():
        raise BackupError(f"{path}: no such file")
    listing = _run([_pg_tool("pg_restore"), "--list", str(path)], env)
    if listing.returncode != 0:
        raise BackupError(f"{path}: not a readable pg_dump archive: {listing.stderr.strip()}")
    return Report(path=path, size=path.stat().st_size)


def pg_backup(connection, output: Path, tables: list[str]) -> Report:
    """Dump the database behind Django's `connection` to `output` (which must not exist)."""
    if output.exists():
        raise BackupError(f"{output} exists already: name a new file")
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".partial")
    partial.unlink(missing_ok=True)
    env = pg_env(connection.settings_dict)
    pg_dump = _pg_tool("pg_dump")
    try:
        with connection.cursor() as cursor:
            cursor.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            try:
                cursor.execute("SELECT pg_export_snapshot()")
                snapshot = cursor.fetchone()[0]
                counts = {}
                for table in tables:
                    cursor.execute("SELECT to_regclass(%s)", [table])
                    if cursor.fetchone()[0] is not None:
                        cursor.execute(f"SELECT count(*) FROM {_quote(table)}")
                        counts[table] = cursor.fetchone()[0]
                dump = _run([pg_dump, "--format=custom", f"--snapshot={snapshot}", f"--file={partial}"], env)
            finally:
                cursor.execute("ROLLBACK")
        if dump.returncode != 0:
            raise BackupError(f"pg_dump failed: {dump.stderr.strip()}")
        pg_check(partial, env)
        os.replace(partial, output)
    finally:
        partial.unlink(missing_ok=True)
    return Report(path=output, size=output.stat().st_size, counts=counts)


def pg_sessions(connection) -> int:
    """Other sessions connected to the database."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def pg_counts(connection, tables: list[str]) -> dict[str, int]:
    counts = {}
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute("SELECT to_regclass(%s)", [table])
            if cursor.fetchone()[0] is not None:
                cursor.execute(f"SELECT count(*) FROM {_quote(table)}")
                counts[table] = cursor.fetchone()[0]
    return counts


def pg_restore(connection, backup: Path, tables: list[str], *, force: bool = False) -> Report:
    """Replace the database behind `connection` with the archive `backup`, in one transaction."""
    env = pg_env(connection.settings_dict)
    report = pg_check(backup, env)
    if not force and (others := pg_sessions(connection)):
        raise BackupError(
            f"database {connection.settings_dict['NAME']!r} has {others} other session(s): stop the "
            "servers and workers first, or pass --force to restore while they run"
        )
    connection.close()  # our own session would hold locks pg_restore waits for
    restore = _run(
        [
            _pg_tool("pg_restore"),
            "--clean",
            "--if-exists",
            "--no-owner",
            "--single-transaction",
            "--exit-on-error",
            f"--dbname={env.get('PGDATABASE', '')}",
            str(backup),
        ],
        env,
    )
    if restore.returncode != 0:
        raise BackupError(f"pg_restore failed, nothing was changed: {restore.stderr.strip()}")
    report.counts = pg_counts(connection, tables)
    return report
