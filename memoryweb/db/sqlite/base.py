"""SQLite backend that can load extensions (FTS5 is built in; sqlite-vec is loaded).

The driver is `pysqlite3` (the `pysqlite3` wheel, which bundles its own SQLite with FTS5 and
extension loading), so every machine runs the SQLite the project pins and tests rather than
whatever the Python was built against. Only when it is not installed does the backend fall
back to the stdlib `sqlite3`. When the driver cannot load sqlite-vec, vector search falls back
to brute-force cosine in Python and `manage.py check` says so; it also warns about an SQLite
with a known hang (`AFFECTED_SQLITE_VERSIONS`).
"""

import datetime
import decimal
import logging
import os
import sqlite3 as stdlib_sqlite3
import threading
import time
from collections.abc import Mapping
from itertools import tee

from django.db.backends.sqlite3 import base as sqlite_base
from django.db.backends.sqlite3._functions import register as register_functions
from django.utils.asyncio import async_unsafe
from django.utils.dateparse import parse_date, parse_datetime, parse_time

logger = logging.getLogger(__name__)


# SQLite releases with a known fault this project can hit, and why. 3.51.0 added a check
# for broken POSIX locks whose lock order (the inode mutex, then unixBigLock) is the reverse
# of unixClose's: one thread closing a WAL connection and another opening one on the same file
# can wait on each other for ever, hanging the web process. 3.51.2 fixed it.
AFFECTED_SQLITE_VERSIONS: dict[tuple[int, ...], str] = {
    (3, 51, 0): "can deadlock when threads open and close connections at once (fixed in 3.51.2)",
    (3, 51, 1): "can deadlock when threads open and close connections at once (fixed in 3.51.2)",
}


def sqlite_version_problem(version_info: tuple[int, ...]) -> str | None:
    """Why this SQLite release must not be used, or None for one without a known fault."""
    return AFFECTED_SQLITE_VERSIONS.get(tuple(version_info[:3]))


def _pick_driver():
    try:
        from pysqlite3 import dbapi2
    except ImportError:
        return stdlib_sqlite3, "sqlite3"
    return dbapi2, "pysqlite3"


Database, DRIVER_NAME = _pick_driver()

if Database is not stdlib_sqlite3:
    # The converters and adapters Django registers on the stdlib module, on ours too.
    Database.register_converter("bool", b"1".__eq__)
    Database.register_converter("date", sqlite_base.decoder(parse_date))
    Database.register_converter("time", sqlite_base.decoder(parse_time))
    Database.register_converter("datetime", sqlite_base.decoder(parse_datetime))
    Database.register_converter("timestamp", sqlite_base.decoder(parse_datetime))
    Database.register_adapter(decimal.Decimal, str)
    Database.register_adapter(datetime.date, sqlite_base.adapt_date)
    Database.register_adapter(datetime.datetime, sqlite_base.adapt_datetime)


# A shared-cache in-memory database (the test database that a live server's threads share)
# answers a table lock held by another connection with SQLITE_LOCKED at once: SQLite's busy
# handler, which makes a file database wait out a writer, is never called for it. Its cursors
# wait the same way instead, polling for up to the connection's timeout.
LOCKED_MESSAGES = ("database table is locked", "database schema is locked")
LOCKED_FIRST_WAIT = 0.005
LOCKED_LONGEST_WAIT = 0.1


def is_locked_error(exc: Exception) -> bool:
    return str(exc).startswith(LOCKED_MESSAGES)


class SQLiteCursorWrapper(Database.Cursor):  # type: ignore[name-defined]
    """Django's format/pyformat → qmark/named conversion, on the driver's own cursor class."""

    locked_timeout = 0.0  # seconds to wait out SQLITE_LOCKED (set for shared-cache databases)

    def execute(self, query, params=None):
        if params is not None:
            param_names = list(params) if isinstance(params, Mapping) else None
            query = self.convert_query(query, param_names=param_names)
        args = (query,) if params is None else (query, params)
        if not self.locked_timeout:
            return super().execute(*args)
        deadline = time.monotonic() + self.locked_timeout
        wait = LOCKED_FIRST_WAIT
        while True:
            try:
                return super().execute(*args)
            except Database.OperationalError as exc:
                # the statement did not run: trying it again cannot apply it twice
                if not is_locked_error(exc) or time.monotonic() + wait > deadline:
                    raise
            time.sleep(wait)
            wait = min(wait * 2, LOCKED_LONGEST_WAIT)

    def executemany(self, query, param_list):
        peekable, param_list = tee(iter(param_list))
        if (params := next(peekable, None)) and isinstance(params, Mapping):
            param_names = list(params)
        else:
            param_names = None
        query = self.convert_query(query, param_names=param_names)
        return super().executemany(query, param_list)

    def convert_query(self, query, *, param_names=None):
        if param_names is None:
            return sqlite_base.FORMAT_QMARK_REGEX.sub("?", query).replace("%%", "%")
        return query % {name: f":{name}" for name in param_names}


# Filled on the first connection; read by the system check and the vector search.
EXTENSION_STATUS = {
    "driver": DRIVER_NAME,
    "sqlite_version": Database.sqlite_version,
    "sqlite_problem": sqlite_version_problem(Database.sqlite_version_info),
    "vec": None,
}


def load_sqlite_vec(conn) -> str | None:
    """Load sqlite-vec into `conn`; return its version, or None when it cannot be loaded."""
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        try:
            sqlite_vec.load(conn)
        finally:
            conn.enable_load_extension(False)
        return conn.execute("select vec_version()").fetchone()[0]
    except Exception as exc:  # any driver, any platform: degrade, never crash
        if EXTENSION_STATUS.get("vec_error") is None:
            logger.warning("sqlite-vec not loaded (%s); vector search falls back to brute force", exc)
        EXTENSION_STATUS["vec_error"] = str(exc)
        return None


class ConnectionPool:
    """Open connections to SQLite files, kept for the next request of this process.

    Under ASGI every request runs in a thread of its own, so Django opens a new connection per
    request whatever CONN_MAX_AGE says; opening one (functions, pragmas, sqlite-vec) costs about
    2 ms, a third of a small request. A closed connection waits here instead, outside any
    transaction, and the next request of any thread takes it (Django opens SQLite connections
    with check_same_thread off and lets one thread at a time use a connection). A connection
    is never handed across fork(): a child process starts with an empty pool and leaves its
    parent's connections alone.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.pid = os.getpid()
        self.idle: dict[str, list] = {}

    def _this_process(self) -> None:
        if self.pid != os.getpid():
            # the parent's connections are not ours to use or to close
            _INHERITED.extend(conn for conns in self.idle.values() for conn in conns)
            self.idle, self.pid = {}, os.getpid()

    def take(self, name: str):
        with self.lock:
            self._this_process()
            conns = self.idle.get(name)
            return conns.pop() if conns else None

    def give(self, name: str, conn, *, size: int) -> bool:
        with self.lock:
            self._this_process()
            conns = self.idle.setdefault(name, [])
            if len(conns) >= size:
                return False
            conns.append(conn)
            return True


POOL = ConnectionPool()
_INHERITED: list = []


class DatabaseWrapper(sqlite_base.DatabaseWrapper):
    Database = Database
    pool_size = 0  # OPTIONS["pool_size"]: connections kept open per database file; 0 closes them
    connection_pid = None  # the process that opened (or took) the current connection

    def get_connection_params(self):
        params = super().get_connection_params()
        params["detect_types"] = Database.PARSE_DECLTYPES | Database.PARSE_COLNAMES
        self.pool_size = int(params.pop("pool_size", 0) or 0)
        return params

    def _pooled(self) -> bool:
        return self.pool_size > 0 and not self.is_in_memory_db()

    @async_unsafe
    def get_new_connection(self, conn_params):
        self.connection_pid = os.getpid()
        if self._pooled() and (conn := POOL.take(self.settings_dict["NAME"])) is not None:
            # a schema change may have turned these off on the connection's last use
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA legacy_alter_table = OFF")
            return conn
        conn = Database.connect(**conn_params)
        register_functions(conn)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA legacy_alter_table = OFF")
        for init_command in self.init_commands:
            if init_command := init_command.strip():
                conn.execute(init_command)
        EXTENSION_STATUS["vec"] = load_sqlite_vec(conn)
        return conn

    @async_unsafe
    def _close(self):
        conn = self.connection
        if (
            conn is not None
            and self._pooled()
            and self.connection_pid == os.getpid()
            and not conn.in_transaction
            and POOL.give(self.settings_dict["NAME"], conn, size=self.pool_size)
        ):
            return
        super()._close()

    def create_cursor(self, name=None):
        cursor = self.connection.cursor(factory=SQLiteCursorWrapper)
        if self.is_in_memory_db():
            cursor.locked_timeout = float(self.settings_dict.get("OPTIONS", {}).get("timeout", 5))
        return cursor
