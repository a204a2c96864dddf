"""The SQLite the project runs on: a release without the open/close deadlock, with FTS5 and
sqlite-vec, as the backend's own connections get it."""

import pytest
import sqlite_vec
from django.db import connection

from memoryweb.db.sqlite.base import (
    DRIVER_NAME,
    EXTENSION_STATUS,
    Database,
    load_sqlite_vec,
    sqlite_version_problem,
)


def test_the_driver_is_the_packaged_pysqlite3_with_extension_loading():
    assert DRIVER_NAME == "pysqlite3"
    assert hasattr(Database.Connection, "enable_load_extension")


def test_the_bundled_sqlite_is_not_a_release_that_deadlocks_on_concurrent_open_and_close():
    # 3.51.0 and 3.51.1 take unixBigLock and the inode mutex in both orders; 3.51.2 fixed it
    version = Database.sqlite_version_info
    assert not ((3, 51, 0) <= version < (3, 51, 2)), Database.sqlite_version
    assert sqlite_version_problem(version) is None
    assert EXTENSION_STATUS["sqlite_problem"] is None


def test_the_version_table_names_exactly_the_deadlocking_releases():
    assert sqlite_version_problem((3, 51, 1)) is not None
    assert sqlite_version_problem((3, 51, 0)) is not None
    assert sqlite_version_problem((3, 51, 2)) is None
    assert sqlite_version_problem((3, 50, 4)) is None
    assert sqlite_version_problem((3, 53, 4)) is None


def test_a_driver_connection_loads_sqlite_vec_and_runs_a_nearest_neighbour_query():
    conn = Database.connect(":memory:")
    try:
        assert load_sqlite_vec(conn) == f"v{sqlite_vec.__version__}"
        conn.execute("CREATE VIRTUAL TABLE v USING vec0(e float[2])")
        conn.execute("INSERT INTO v(rowid, e) VALUES (1, '[1, 0]'), (2, '[0, 1]')")
        assert conn.execute("SELECT rowid FROM v WHERE e MATCH '[0.1, 0.9]' AND k = 1").fetchall() == [(2,)]
    finally:
        conn.close()


def test_a_driver_connection_has_fts5():
    conn = Database.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE f USING fts5(body)")
        conn.execute("INSERT INTO f(body) VALUES ('the quick brown fox'), ('lazy dogs sleep')")
        assert conn.execute("SELECT rowid FROM f WHERE f MATCH 'dog*'").fetchall() == [(2,)]
    finally:
        conn.close()


@pytest.mark.django_db
def test_the_backends_connections_have_sqlite_vec_loaded():
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite backend only")
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT vec_version(), sqlite_version()")
        vec, version = cursor.fetchone()
    assert vec == EXTENSION_STATUS["vec"] == f"v{sqlite_vec.__version__}"
    assert version == Database.sqlite_version
