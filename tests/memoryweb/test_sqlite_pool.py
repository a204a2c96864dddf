"""The SQLite backend keeps closed connections open for the next request (memoryweb/db/sqlite)."""

import copy
import threading

import pytest
from django.db import connections

from memoryweb.db.sqlite import base


@pytest.fixture(autouse=True)
def files_of_our_own(django_db_blocker):
    """These tests open their own SQLite files, never the test database."""
    with django_db_blocker.unblock():
        yield


def wrapper(path, **options):
    settings_dict = copy.deepcopy(connections.settings["default"])
    settings_dict.update(ENGINE="memoryweb.db.sqlite", NAME=str(path))
    settings_dict["OPTIONS"] = {**base_options(), **options}
    return base.DatabaseWrapper(settings_dict, alias=f"pool-{path.name}")


def base_options():
    return {"transaction_mode": "IMMEDIATE", "timeout": 20, "pool_size": 2}


def in_thread(fn):
    result = {}
    thread = threading.Thread(target=lambda: result.update(value=fn()))
    thread.start()
    thread.join()
    return result["value"]


def open_raw(path, **options):
    """Open a connection in a thread of its own (as an ASGI request does) and hand back the
    raw SQLite connection and what it reads, after closing the wrapper."""

    def use():
        db = wrapper(path, **options)
        with db.cursor() as cursor:
            cursor.execute("PRAGMA foreign_keys")
            foreign_keys = cursor.fetchone()[0]
            cursor.execute("SELECT count(*) FROM t")
            rows = cursor.fetchone()[0]
        raw = db.connection
        db.close()
        return raw, foreign_keys, rows

    return in_thread(use)


def make_table(path):
    db = wrapper(path, pool_size=0)
    with db.cursor() as cursor:
        cursor.execute("CREATE TABLE t (x integer)")
        cursor.execute("INSERT INTO t VALUES (1)")
    db.close()


def test_a_closed_connection_serves_the_next_request_of_another_thread(tmp_path):
    path = tmp_path / "db.sqlite3"
    make_table(path)

    first, _, _ = open_raw(path)
    second, foreign_keys, rows = open_raw(path)

    assert second is first
    assert foreign_keys == 1 and rows == 1


def test_without_a_pool_every_request_opens_its_own_connection(tmp_path):
    path = tmp_path / "db.sqlite3"
    make_table(path)

    first, _, _ = open_raw(path, pool_size=0)
    second, _, rows = open_raw(path, pool_size=0)

    assert second is not first
    assert rows == 1


def test_a_connection_closed_inside_a_transaction_is_not_kept(tmp_path):
    path = tmp_path / "db.sqlite3"
    make_table(path)

    def use():
        db = wrapper(path)
        db.ensure_connection()
        db.connection.execute("BEGIN")
        db.connection.execute("INSERT INTO t VALUES (2)")
        raw = db.connection
        db.close()
        return raw

    abandoned = in_thread(use)
    taken, _, rows = open_raw(path)

    assert taken is not abandoned
    assert rows == 1  # the half-done insert was never committed


def test_a_forked_process_leaves_its_parents_connections_alone(tmp_path, monkeypatch):
    path = tmp_path / "db.sqlite3"
    make_table(path)
    parents, _, _ = open_raw(path)

    monkeypatch.setattr(base.POOL, "pid", -1)  # what a child process sees after fork()
    childs, _, rows = open_raw(path)

    assert childs is not parents
    assert rows == 1
    assert parents.execute("SELECT count(*) FROM t").fetchone()[0] == 1  # not closed under the parent


def test_the_pool_keeps_at_most_pool_size_connections(tmp_path):
    path = tmp_path / "db.sqlite3"
    make_table(path)
    dbs = [wrapper(path) for _ in range(3)]
    for db in dbs:
        db.ensure_connection()
    raws = [db.connection for db in dbs]
    for db in dbs:
        db.close()

    assert len(base.POOL.idle[str(path)]) == 2
    assert raws[2] not in base.POOL.idle[str(path)]
