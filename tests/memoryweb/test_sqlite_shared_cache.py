"""A shared-cache in-memory database (the test database a live server's threads share) waits
out another connection's table lock as a file database's busy timeout does, instead of failing
with "database table is locked" at once (memoryweb/db/sqlite)."""

import copy
import threading
import uuid

import pytest
from django.db import OperationalError, connections

from memoryweb.db.sqlite import base


@pytest.fixture(autouse=True)
def databases_of_our_own(django_db_blocker):
    with django_db_blocker.unblock():
        yield


def shared_memory_wrapper(name, timeout):
    settings_dict = copy.deepcopy(connections.settings["default"])
    settings_dict.update(ENGINE="memoryweb.db.sqlite", NAME=f"file:{name}?mode=memory&cache=shared")
    settings_dict["OPTIONS"] = {"uri": True, "timeout": timeout}
    return base.DatabaseWrapper(settings_dict, alias=f"shared-{name}")


@pytest.fixture
def pair():
    """Two connections to one fresh shared-cache database with a table `t`."""
    name = f"locktest{uuid.uuid4().hex}"
    holder, waiter = shared_memory_wrapper(name, 20), shared_memory_wrapper(name, 20)
    with holder.cursor() as cursor:
        cursor.execute("CREATE TABLE t (x INTEGER)")
    yield holder, waiter
    waiter.close()
    holder.close()


def test_a_write_waits_for_the_other_connections_lock_and_then_runs(pair):
    holder, waiter = pair
    holder_cursor = holder.connection.cursor()
    holder_cursor.execute("BEGIN IMMEDIATE")
    holder_cursor.execute("INSERT INTO t VALUES (1)")
    released = threading.Event()

    def release():
        released.wait(5)
        holder.connection.commit()

    thread = threading.Thread(target=release)
    thread.start()
    with waiter.cursor() as cursor:
        threading.Timer(0.2, released.set).start()
        cursor.execute("INSERT INTO t VALUES (%s)", [2])  # locked until the holder commits
        cursor.execute("SELECT x FROM t ORDER BY x")
        rows = [row[0] for row in cursor.fetchall()]
    thread.join()
    assert released.is_set()
    assert rows == [1, 2]


def test_a_lock_held_past_the_timeout_is_still_an_error(pair):
    holder, waiter = pair
    waiter.settings_dict["OPTIONS"]["timeout"] = 0.05
    holder_cursor = holder.connection.cursor()
    holder_cursor.execute("BEGIN IMMEDIATE")
    holder_cursor.execute("INSERT INTO t VALUES (1)")
    try:
        with pytest.raises(OperationalError, match="locked"), waiter.cursor() as cursor:
            cursor.execute("INSERT INTO t VALUES (2)")
    finally:
        holder.connection.rollback()


def test_other_errors_are_not_retried(pair):
    _, waiter = pair
    with pytest.raises(OperationalError, match="no such table"), waiter.cursor() as cursor:
        cursor.execute("SELECT * FROM missing")


def test_a_file_database_leaves_locks_to_sqlites_busy_timeout(tmp_path):
    settings_dict = copy.deepcopy(connections.settings["default"])
    settings_dict.update(
        ENGINE="memoryweb.db.sqlite", NAME=str(tmp_path / "f.sqlite3"), OPTIONS={"timeout": 20}
    )
    db = base.DatabaseWrapper(settings_dict, alias="file-lock")
    with db.cursor() as cursor:
        assert cursor.cursor.locked_timeout == 0.0
    db.close()
