"""A real Celery worker killed in the middle of a consolidation: the next worker to start
reclaims the dead run from the database (its heartbeat went stale) and does the work."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from tests.consolidation.test_consolidation import _env, held_llm, migrated_db, query, seed, var_dir  # noqa: F401
from tests.support import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.own_stack]

REQUEST = """
import django
django.setup()
from django.db import transaction
from consolidation.services import consolidation_request
from memory.models import Subject
from memory.services.audit import Actor
with transaction.atomic():
    run = consolidation_request(subject=Subject.objects.get(external_id="alice"), actor=Actor.system("test"))
print(run.pk)
"""


def worker_env(folder: Path, llm) -> dict:
    # beats every second and is dead after three, so the test does not wait a minute
    return _env(folder, llm) | {"MEMORYWEB_HEARTBEAT_SECONDS": "1", "MEMORYWEB_HEARTBEAT_STALE_SECONDS": "3"}


def start_worker(folder: Path, llm, log: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "memoryweb", "worker", "--concurrency", "1"]
            + ["--loglevel", "INFO", "--hostname", f"dead-worker-{log.stem}@%h"],
            cwd=settings.BASE_DIR,
            env=worker_env(folder, llm),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    assert wait_until(lambda: b" ready." in log.read_bytes(), timeout=90), log.read_text()
    return worker


def kill_group(worker: subprocess.Popen) -> None:
    try:
        os.killpg(worker.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    worker.wait(timeout=30)


def stop(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
    kill_group(worker)


def test_a_consolidation_whose_worker_is_killed_is_finished_by_the_next_worker(var_dir, held_llm, tmp_path):  # noqa: F811
    llm = held_llm(hold_from=2)  # one cluster is written, the second is in flight when the worker dies
    seed(var_dir, llm, ["alpha", "beta", "gamma"])
    doomed = start_worker(var_dir, llm, tmp_path / "first.log")
    try:
        subprocess.run(
            [sys.executable, "-c", REQUEST],
            cwd=settings.BASE_DIR,
            env=worker_env(var_dir, llm),
            check=True,
            timeout=60,
        )
        assert llm.arrived.wait(120), (tmp_path / "first.log").read_text()
        assert query(var_dir, "SELECT status FROM memory_jobrun") == [("running",)]
    finally:
        kill_group(doomed)
    assert query(var_dir, "SELECT COUNT(*) FROM memory_lesson") == [(1,)]
    time.sleep(4)  # its heartbeat goes stale (3 s); its five-minute lease has not run out

    rerun_llm = held_llm()
    survivor = start_worker(var_dir, rerun_llm, tmp_path / "second.log")
    try:
        finished = wait_until(
            lambda: (
                query(var_dir, "SELECT status FROM memory_jobrun ORDER BY id") == [("abandoned",), ("done",)]
            ),
            timeout=120,
        )
    finally:
        stop(survivor)

    assert finished, (tmp_path / "second.log").read_text()
    assert "stopped heartbeating" in query(var_dir, "SELECT error FROM memory_jobrun ORDER BY id")[0][0]
    assert query(var_dir, "SELECT COUNT(*) FROM memory_lesson") == [(3,)]
    assert query(var_dir, "SELECT COUNT(*), COUNT(consolidated_into_id) FROM memory_note") == [(9, 9)]
    assert rerun_llm.count == 2  # only the two clusters the dead run had not written
    assert query(var_dir, "SELECT COUNT(*) FROM memoryweb_taskintent WHERE sent_at IS NULL") == [(0,)]
