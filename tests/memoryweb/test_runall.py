"""`manage.py runall` and its supervisor, with real child processes."""

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from memoryweb.management.commands.runall import ChildSpec, Supervisor, restart_delay
from tests.memoryweb.stack import free_port, stack_env
from tests.support import DEADLINE, wait_until

# Records its pid in the file named by argv[1], then dies.
CRASHES = """
import os, sys
with open(sys.argv[1], "a") as f:
    f.write(f"{os.getpid()}\\n")
sys.exit(3)
"""

# Records its pid, stays up for argv[2] seconds, then dies.
CRASHES_LATER = """
import os, sys, time
with open(sys.argv[1], "a") as f:
    f.write(f"{os.getpid()}\\n")
time.sleep(float(sys.argv[2]))
sys.exit(1)
"""

# Starts a grandchild in its own process group, writes the grandchild's pid, then sleeps.
WITH_GRANDCHILD = """
import subprocess, sys, time
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(sys.argv[1], "w") as f:
    f.write(str(grandchild.pid))
time.sleep(600)
"""

# Ignores SIGTERM, so only SIGKILL stops it.
IGNORES_SIGTERM = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
time.sleep(600)
"""

# A stand-in for `manage.py runall` whose children are the scripts above.
SUPERVISOR = """
import json, sys
from memoryweb.management.commands.runall import ChildSpec, Supervisor
specs = [ChildSpec(name, argv) for name, argv in json.loads(sys.argv[1])]
Supervisor(specs, stop_timeout=float(sys.argv[2]), poll_interval=0.05).run()
"""


def pids_in(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def process_state(pid: int) -> str | None:
    """The /proc state letter of a process, None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    return stat[stat.rfind(")") + 2 :].split()[0]


def is_running(pid: int) -> bool:
    # A zombie has exited; it only waits for a parent (maybe PID 1 of a container) to reap it.
    return process_state(pid) not in (None, "Z")


def live_in_group(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def started_pids(log: str) -> dict[str, int]:
    return {name: int(pid) for name, pid in re.findall(r"started (\w+): pid (\d+)", log)}


def kill_leftovers(pgids) -> None:
    for pgid in pgids:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


pytestmark = [
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process groups from /proc"),
    pytest.mark.own_stack,
]


def test_restart_delay_doubles_from_one_second_and_stops_at_thirty():
    assert [restart_delay(n) for n in range(8)] == [1, 2, 4, 8, 16, 30, 30, 30]


def test_a_crashed_child_is_restarted_with_a_growing_delay(tmp_path):
    starts = tmp_path / "starts"
    lines: list[str] = []
    supervisor = Supervisor(
        [ChildSpec("crasher", [sys.executable, "-c", CRASHES, str(starts)])],
        log=lines.append,
        backoff_initial=0.05,
        backoff_max=0.2,
        poll_interval=0.02,
    )

    supervisor.start()
    try:
        assert wait_until(lambda: supervisor.poll() or len(pids_in(starts)) >= 5), lines
    finally:
        supervisor.stop()

    assert len(set(pids_in(starts))) >= 4  # a new process each time
    restarts = [line for line in lines if line.startswith("crasher exited with code 3")]
    delays = [float(re.search(r"restarting in ([\d.]+)s", line).group(1)) for line in restarts]
    assert delays[:4] == [0.05, 0.1, 0.2, 0.2]


def test_the_delay_starts_over_once_a_child_has_stayed_up_long_enough(tmp_path):
    starts = tmp_path / "starts"
    lines: list[str] = []
    supervisor = Supervisor(
        [ChildSpec("flaky", [sys.executable, "-c", CRASHES_LATER, str(starts), "0.5"])],
        log=lines.append,
        backoff_initial=0.05,
        backoff_max=10,
        stable_after=0.2,  # every run outlives this
        poll_interval=0.02,
    )

    supervisor.start()
    try:
        assert wait_until(lambda: supervisor.poll() or len(pids_in(starts)) >= 3), lines
    finally:
        supervisor.stop()

    restarts = [line for line in lines if line.startswith("flaky exited with code 1")]
    assert len(restarts) >= 2
    assert all(line.endswith("restarting in 0.05s") for line in restarts)


def test_stop_ends_a_running_child_and_does_not_restart_it(tmp_path):
    marker = tmp_path / "grandchild"
    lines: list[str] = []
    supervisor = Supervisor(
        [ChildSpec("sleeper", [sys.executable, "-c", WITH_GRANDCHILD, str(marker)])],
        log=lines.append,
        backoff_initial=0.05,
        poll_interval=0.02,
    )
    supervisor.start()
    leader = started_pids("\n".join(lines))["sleeper"]
    try:
        assert wait_until(lambda: marker.exists() and marker.read_text() != "")
        grandchild = int(marker.read_text())

        supervisor.stop()
        supervisor.poll()

        assert not is_running(leader)
        assert wait_until(lambda: not is_running(grandchild))
        assert live_in_group(leader) == []
        assert "sleeper stopped (was killed by SIGTERM)" in lines
        assert not any("restarting" in line for line in lines)
    finally:
        kill_leftovers([leader])


def test_sigint_stops_every_child_process_group_and_exits_0(tmp_path):
    grandchild_file = tmp_path / "grandchild"
    stubborn_file = tmp_path / "stubborn"
    specs = [
        ["sleeper", [sys.executable, "-c", WITH_GRANDCHILD, str(grandchild_file)]],
        ["stubborn", [sys.executable, "-c", IGNORES_SIGTERM, str(stubborn_file)]],
    ]
    log_path = tmp_path / "supervisor.log"
    with open(log_path, "wb") as log:
        runner = subprocess.Popen(
            [sys.executable, "-c", SUPERVISOR, json.dumps(specs), "2"],
            cwd=settings.BASE_DIR,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a signal meant for it never reaches pytest
        )
    children: dict[str, int] = {}
    try:
        # both children up, the grandchild started, SIGTERM ignored
        assert wait_until(
            lambda: (
                grandchild_file.exists()
                and grandchild_file.read_text() != ""
                and stubborn_file.exists()
                and stubborn_file.read_text() != ""
            )
        ), log_path.read_text()
        children = started_pids(log_path.read_text())
        grandchild = int(grandchild_file.read_text())
        assert set(children) == {"sleeper", "stubborn"}

        runner.send_signal(signal.SIGINT)
        code = runner.wait(timeout=DEADLINE)

        output = log_path.read_text()
        assert code == 0, output
        assert "SIGINT received: stopping" in output
        assert "stubborn did not stop within 2s: killing its process group" in output
        assert "stubborn stopped (was killed by SIGKILL)" in output
        assert "sleeper stopped (was killed by SIGTERM)" in output
        assert wait_until(lambda: not is_running(grandchild))
        assert [pid for pid in children.values() if is_running(pid)] == []
        assert {name: live_in_group(pgid) for name, pgid in children.items()} == {
            "sleeper": [],
            "stubborn": [],
        }
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
        kill_leftovers(children.values())


def test_a_second_sigint_kills_a_child_that_ignores_the_first_without_waiting(tmp_path):
    stubborn_file = tmp_path / "stubborn"
    specs = [["stubborn", [sys.executable, "-c", IGNORES_SIGTERM, str(stubborn_file)]]]
    log_path = tmp_path / "supervisor.log"
    with open(log_path, "wb") as log:
        runner = subprocess.Popen(
            [sys.executable, "-c", SUPERVISOR, json.dumps(specs), "600"],  # would wait 10 minutes
            cwd=settings.BASE_DIR,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    children: dict[str, int] = {}
    try:
        assert wait_until(lambda: stubborn_file.exists() and stubborn_file.read_text() != "")
        children = started_pids(log_path.read_text())
        runner.send_signal(signal.SIGINT)
        assert wait_until(lambda: "stopping stubborn" in log_path.read_text()), log_path.read_text()

        runner.send_signal(signal.SIGINT)
        code = runner.wait(timeout=DEADLINE)

        output = log_path.read_text()
        assert code == 0, output
        assert "asked twice to stop: killing the process group of stubborn" in output
        assert live_in_group(children["stubborn"]) == []
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
        kill_leftovers(children.values())


def schema_answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def start_runall(var_dir: Path, log_path: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            [sys.executable, "manage.py", "runall", *args],
            cwd=settings.BASE_DIR,
            env=env or stack_env(var_dir),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a signal meant for it never reaches pytest
        )


def stop_runall(runall: subprocess.Popen, children) -> None:
    if runall.poll() is None:
        runall.send_signal(signal.SIGINT)
        try:
            runall.wait(timeout=40)
        except subprocess.TimeoutExpired:
            runall.kill()
            runall.wait()
    kill_leftovers(children)


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except FileNotFoundError:
        return []


@pytest.mark.slow
def test_runall_serves_the_api_runs_the_worker_and_stops_on_ctrl_c(tmp_path):
    env = stack_env(tmp_path / "var")
    port = free_port()
    log_path = tmp_path / "runall.log"
    with open(log_path, "wb") as log:
        runall = subprocess.Popen(
            [sys.executable, "manage.py", "runall", "--port", str(port)],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    children: dict[str, int] = {}
    try:
        # migrate on an empty database comes first, so allow more than the usual wait
        assert wait_until(
            lambda: schema_answers(f"http://127.0.0.1:{port}/api/schema/"), timeout=90, interval=0.5
        ), log_path.read_text()
        assert wait_until(lambda: " ready." in log_path.read_text(), timeout=60), log_path.read_text()
        output = log_path.read_text()
        assert f"http://127.0.0.1:{port}/api/docs/" in output
        assert f"http://127.0.0.1:{port}/admin/" in output
        children = started_pids(output)
        assert set(children) == {"web", "worker"}
        assert (tmp_path / "var" / "memoryweb.sqlite3").exists()
        # the access line carries the query string redacted, and daphne's raw one is off
        secret_query = "query=redis%3A%2F%2F%3ARz9pQ2wX7v%40cache%3A6379%2F0"
        assert httpx.get(f"http://127.0.0.1:{port}/api/v1/subjects/a/notes?{secret_query}").status_code == 401
        assert wait_until(lambda: "/api/v1/subjects/a/notes?query=" in log_path.read_text(), timeout=10)
        output = log_path.read_text()
        assert "memoryweb.access" in output and "[REDACTED:url_password]" in output
        assert "Rz9pQ2wX7v" not in output

        runall.send_signal(signal.SIGINT)
        code = runall.wait(timeout=40)  # the worker's warm shutdown, plus the 10 s grace

        output = log_path.read_text()
        assert code == 0, output
        assert "web stopped (exited with code 0)" in output
        assert "worker stopped (exited with code 0)" in output
        assert {name: live_in_group(pgid) for name, pgid in children.items()} == {"web": [], "worker": []}
    finally:
        if runall.poll() is None:
            runall.kill()
            runall.wait()
        kill_leftovers(children.values())


def live_answers(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/v1/live", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.mark.slow
def test_runall_replaces_a_web_server_that_stops_answering_its_liveness_probe(migrated_var_dir, tmp_path):
    env = stack_env(migrated_var_dir)
    env["MEMORYWEB_LIVENESS_TIMEOUT"] = "1"  # the probe then waits 6 s for an answer
    port = free_port()
    log_path = tmp_path / "runall.log"
    runall = start_runall(
        migrated_var_dir,
        log_path,
        "--port",
        str(port),
        "--no-worker",
        "--liveness-interval",
        "0.5",
        "--liveness-failures",
        "2",
        env=env,
    )
    pids: list[int] = []
    try:
        assert wait_until(
            lambda: "web answers its liveness probe" in log_path.read_text(), timeout=90, interval=0.2
        ), log_path.read_text()
        hung = started_pids(log_path.read_text())["web"]
        pids.append(hung)

        os.kill(hung, signal.SIGSTOP)  # accepts connections (the kernel does), answers nothing

        assert wait_until(
            lambda: started_pids(log_path.read_text())["web"] != hung, timeout=60, interval=0.2
        ), log_path.read_text()
        output = log_path.read_text()
        assert "web failed its liveness probe (1/2): no answer" in output
        assert (
            f"web stopped answering http://127.0.0.1:{port}/api/v1/live: killing its process group" in output
        )
        assert "web was killed by SIGKILL" in output
        replacement = started_pids(output)["web"]
        pids.append(replacement)
        assert not is_running(hung)
        assert wait_until(lambda: live_answers(port), timeout=60, interval=0.2), log_path.read_text()
        assert is_running(replacement)
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        stop_runall(runall, [*pids, *started_pids(log_path.read_text()).values()])


@pytest.mark.slow
def test_killing_runall_outright_takes_its_web_server_and_worker_with_it(migrated_var_dir, tmp_path):
    port = free_port()
    log_path = tmp_path / "runall.log"
    runall = start_runall(migrated_var_dir, log_path, "--port", str(port))
    try:
        assert wait_until(
            lambda: (
                " ready." in log_path.read_text() and schema_answers(f"http://127.0.0.1:{port}/api/schema/")
            ),
            timeout=90,
            interval=0.2,
        ), log_path.read_text()
        children = started_pids(log_path.read_text())
        assert set(children) == {"web", "worker"}
        groups = {name: live_in_group(pgid) for name, pgid in children.items()}
        assert len(groups["worker"]) > 1, groups  # the worker's group holds its pool and beat too

        runall.kill()  # SIGKILL: no handler runs, nothing is stopped in order
        runall.wait()

        # web: the kernel kills it with runall; worker: a warm shutdown, killed if it lingers
        assert wait_until(
            lambda: not any(live_in_group(pgid) for pgid in children.values()), timeout=DEADLINE
        ), {name: live_in_group(pgid) for name, pgid in children.items()}
        assert not schema_answers(f"http://127.0.0.1:{port}/api/schema/")
    finally:
        stop_runall(runall, started_pids(log_path.read_text()).values())


@pytest.mark.slow
def test_two_runall_on_one_var_dir_run_one_beat(migrated_var_dir, tmp_path):
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = start_runall(migrated_var_dir, first_log, "--port", str(free_port()))
    second = None
    try:
        assert wait_until(lambda: " ready." in first_log.read_text(), timeout=90, interval=0.2), (
            first_log.read_text()
        )
        second = start_runall(migrated_var_dir, second_log, "--port", str(free_port()))
        assert wait_until(lambda: " ready." in second_log.read_text(), timeout=90, interval=0.2), (
            second_log.read_text()
        )
        first_worker = started_pids(first_log.read_text())["worker"]
        second_worker = started_pids(second_log.read_text())["worker"]

        assert "-B" in cmdline(first_worker)
        assert "-B" not in cmdline(second_worker)
        holder = (migrated_var_dir / "beat.lock").read_text().strip()
        assert holder == str(first.pid)
        second_output = second_log.read_text()
        assert (
            f"is held by pid {first.pid}, which runs beat for this var dir: this worker runs without beat"
            in second_output
        )
        assert wait_until(lambda: "beat: Starting..." in first_log.read_text()), first_log.read_text()
        assert "beat: Starting..." not in second_log.read_text()
    finally:
        stop_runall(first, started_pids(first_log.read_text()).values())
        if second is not None:
            stop_runall(second, started_pids(second_log.read_text()).values())
