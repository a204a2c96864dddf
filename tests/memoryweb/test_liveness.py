"""`GET /api/v1/live`: no key, a real query, and 503 when the database does not answer."""

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from rest_framework.test import APIClient

from memoryweb.db.sqlite.base import Database
from tests.memoryweb.stack import free_port, stack_env
from tests.support import DEADLINE, wait_until


@pytest.mark.django_db
def test_live_answers_200_without_a_key_after_a_query():
    response = APIClient().get("/api/v1/live")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ok"
    assert isinstance(body["database_ms"], int)


@pytest.mark.django_db
def test_live_is_in_the_openapi_schema_without_authentication():
    response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/json")

    assert response.status_code == 200
    schema = response.json()
    operation = schema["paths"]["/api/v1/live"]["get"]
    assert set(operation["responses"]) == {"200", "503"}
    # the keyed endpoints each name their scheme, and there is no schema-wide one
    assert "security" not in schema
    assert "security" not in operation
    assert schema["paths"]["/api/v1/context"]["post"]["security"] == [{"ApiKey": []}]


def live(port: int) -> httpx.Response | None:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/v1/live", timeout=10)
    except httpx.HTTPError:
        return None


@pytest.mark.slow
@pytest.mark.own_stack
def test_live_answers_503_while_the_database_is_locked_and_200_once_it_is_free(migrated_var_dir, tmp_path):
    env = stack_env(migrated_var_dir)
    env["MEMORYWEB_LIVENESS_TIMEOUT"] = "1"
    # no idle connection kept between probes: one held open (even idle, in WAL mode) would keep
    # the test's exclusive lock below from being taken at all
    env["MEMORYWEB_SQLITE_POOL"] = "0"
    port = free_port()
    log_path = tmp_path / "daphne.log"
    with open(log_path, "wb") as log:
        web = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-p", str(port), "memoryweb.asgi:application"],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    holder = None
    try:
        assert wait_until(
            lambda: (answer := live(port)) is not None and answer.status_code == 200, timeout=60, interval=0.2
        ), log_path.read_text()

        # an exclusive lock on the file: every other connection waits (busy_timeout, 20 s)
        holder = Database.connect(str(Path(migrated_var_dir) / "memoryweb.sqlite3"), isolation_level=None)
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("DELETE FROM django_migrations WHERE 0")

        first = live(port)
        assert first is not None and first.status_code == 503, first and first.text
        assert first.json() == {
            "error": {"code": "unavailable", "message": "the database did not answer within 1s"}
        }
        # the first probe's query is still waiting: the next answers at once, without another
        second = live(port)
        assert second is not None and second.status_code == 503
        assert "has not come back" in second.json()["error"]["message"]

        holder.execute("ROLLBACK")
        holder.close()
        holder = None
        assert wait_until(
            lambda: (answer := live(port)) is not None and answer.status_code == 200,
            timeout=DEADLINE,
            interval=0.2,
        ), log_path.read_text()
    finally:
        if holder is not None:
            holder.close()
        os.killpg(web.pid, 9)
        web.wait()
