"""`bench tasks`: how fast a real worker takes tasks off the embedded broker, and how long a
reflection-priority task waits behind a backlog of background work.

Everything runs on a throw-away broker folder: a temporary MEMORYWEB_VAR_DIR for the worker, whose
settings put the broker folders under it, and the same folders for the producer here. The tasks
(memoryweb/bench/task_kinds.py) write the wall-clock time they finished to a file each, so the
numbers come from the worker's own clock, not from polling here.

- throughput: `tasks` trivial tasks are queued *before* the worker starts (the enqueue rate, one
  fsync per message, is reported on its own), then tasks/s = (tasks − 1) / (last finish − first
  finish), which leaves the worker's start-up out.
- priority: with the worker idle, `behind` background tasks of `work_ms` each are queued, then one
  trivial task on the reflect queue; its latency is from just before it was sent to its finish,
  `waiting` counts the background tasks not yet finished when it was sent and `ran_meanwhile` those
  that finished between its send and its own finish, `overtook` those that finished after it. The same probe sent to the background queue
  instead shows what a single FIFO queue would make it wait.
- CPU per task: the CPU time of the worker's processes (Linux /proc) over the throughput run,
  divided by the tasks: a number a busy machine changes less than tasks/s.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from kombu import Connection

from memoryweb import procfs
from memoryweb.bench.task_kinds import stamp
from memoryweb.broker import folder_options

TRANSPORT = "memoryweb.broker:AtomicFilesystemTransport"
REFLECT_QUEUE = settings.CELERY_TASK_ROUTES["chat.turn_reflect"]["queue"]
BACKGROUND_QUEUE = settings.CELERY_TASK_DEFAULT_QUEUE


class BenchError(Exception):
    pass


def _finished(folder: Path) -> dict[str, float]:
    stamps = {}
    for path in folder.iterdir():
        try:
            text = path.read_text()
        except FileNotFoundError:
            continue
        if text:  # a file is written in one go, but may be caught empty
            stamps[path.name] = float(text)
    return stamps


def _count(folder: Path) -> int:
    return len(os.listdir(folder))  # cheap enough to poll; the stamps are read once, at the end


def _wait_for(predicate: Callable[[], bool], *, timeout: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise BenchError(f"timed out after {timeout:g}s waiting for {what}; worker log ends:\n{tail}")
        time.sleep(0.02)


def _start_worker(var_dir: Path, log: Path, concurrency: int) -> subprocess.Popen:
    env = dict(os.environ, MEMORYWEB_VAR_DIR=str(var_dir), PYTHONUNBUFFERED="1")
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER"):
        env.pop(name, None)  # the worker's broker is the temporary one (its tasks use no database)
    argv = [sys.executable, "-m", "celery", "-A", "memoryweb", "worker", "--concurrency", str(concurrency)]
    argv += ["--loglevel", "INFO", "-I", "memoryweb.bench.task_kinds", "--hostname", "bench-tasks@%h"]
    with open(log, "wb") as out:
        return subprocess.Popen(
            argv, cwd=settings.BASE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def _stop_worker(worker: subprocess.Popen) -> None:
    try:
        os.killpg(worker.pid, signal.SIGKILL)  # its tasks are throw-away
    except ProcessLookupError:
        pass
    worker.wait()


def _probe(conn, folder: Path, *, behind: int, work_ms: float, queue: str, log: Path) -> dict:
    folder.mkdir()
    for i in range(behind):
        stamp.apply_async(args=[str(folder / f"b{i}"), work_ms], connection=conn)
    sent = time.time()
    waiting = behind - _count(folder)  # queued or running when the probe is sent
    stamp.apply_async(args=[str(folder / "probe")], connection=conn, queue=queue)
    _wait_for(lambda: _count(folder) == behind + 1, timeout=600, what=f"the {queue} probe", log=log)
    _wait_for(lambda: len(_finished(folder)) == behind + 1, timeout=60, what="the stamps", log=log)
    stamps = _finished(folder)
    probe = stamps.pop("probe")
    return {
        "queue": queue,
        "latency_ms": round((probe - sent) * 1000, 1),
        "waiting": waiting,
        "ran_meanwhile": sum(1 for t in stamps.values() if sent <= t < probe),
        "overtook": sum(1 for t in stamps.values() if t > probe),
    }


def _cpu_seconds(pgid: int) -> float | None:
    """CPU time used so far by the live processes of a process group (Linux; None elsewhere)."""
    if not procfs.available():
        return None
    return sum(p.cpu_seconds for p in procfs.processes() if p.pgrp == pgid)


def run(*, tasks: int, behind: int, work_ms: float, concurrency: int, out: Callable[[str], None]) -> dict:
    with tempfile.TemporaryDirectory(prefix="memoryweb-bench-tasks-") as tmp:
        root = Path(tmp)
        var_dir, log = root / "var", root / "worker.log"
        options = folder_options(var_dir / "broker")
        throughput_dir = root / "throughput"
        throughput_dir.mkdir()
        with Connection(transport=TRANSPORT, transport_options=options) as conn:
            started = time.perf_counter()
            for i in range(tasks):
                stamp.apply_async(args=[str(throughput_dir / f"t{i}")], connection=conn)
            enqueue_s = time.perf_counter() - started
            out(f"queued {tasks} trivial tasks in {enqueue_s:.2f}s ({tasks / enqueue_s:.0f}/s)")

            worker = _start_worker(var_dir, log, concurrency)
            try:
                # CPU from the first task's end to the last's: the worker's start-up left out
                _wait_for(lambda: _count(throughput_dir) > 0, timeout=300, what="the first task", log=log)
                cpu_start = _cpu_seconds(worker.pid)
                _wait_for(lambda: _count(throughput_dir) == tasks, timeout=1200, what="the tasks", log=log)
                cpu_end = _cpu_seconds(worker.pid)
                _wait_for(
                    lambda: len(_finished(throughput_dir)) == tasks, timeout=60, what="the stamps", log=log
                )
                stamps = sorted(_finished(throughput_dir).values())
                span = stamps[-1] - stamps[0]
                rate = (tasks - 1) / span if span > 0 else float("inf")
                cpu_ms = None
                if cpu_start is not None and cpu_end is not None:
                    cpu_ms = round((cpu_end - cpu_start) * 1000 / (tasks - 1), 2)
                out(
                    f"worker (concurrency {concurrency}) ran them at {rate:.0f} tasks/s"
                    + (f", {cpu_ms:.2f} ms of CPU each" if cpu_ms is not None else "")
                )

                probes = []
                for queue in (REFLECT_QUEUE, BACKGROUND_QUEUE):
                    probe = _probe(
                        conn, root / f"probe-{queue}", behind=behind, work_ms=work_ms, queue=queue, log=log
                    )
                    out(
                        f"a task on {queue!r} behind {behind} background tasks of {work_ms:g} ms: "
                        f"{probe['latency_ms']:.0f} ms ({probe['waiting']} waiting when it was sent, "
                        f"{probe['ran_meanwhile']} ran meanwhile)"
                    )
                    probes.append(probe)
            finally:
                _stop_worker(worker)
    return {
        "tasks": tasks,
        "concurrency": concurrency,
        "enqueue_per_s": round(tasks / enqueue_s, 1),
        "tasks_per_s": round(rate, 1),
        "cpu_ms_per_task": cpu_ms,
        "behind": behind,
        "work_ms": work_ms,
        "probes": probes,
    }


def render(summary: dict) -> str:
    lines = [
        f"enqueue: {summary['enqueue_per_s']:.0f} messages/s (one fsync each)",
        f"worker:  {summary['tasks_per_s']:.0f} trivial tasks/s at concurrency {summary['concurrency']}"
        + (
            f", {summary['cpu_ms_per_task']:.2f} ms CPU per task"
            if summary["cpu_ms_per_task"] is not None
            else ""
        ),
        f"a trivial task queued behind {summary['behind']} background tasks of {summary['work_ms']:g} ms:",
    ]
    for probe in summary["probes"]:
        lines.append(
            f"  on {probe['queue']:<10} {probe['latency_ms']:>8.0f} ms   ({probe['waiting']} waiting when it was "
            f"sent, {probe['ran_meanwhile']} ran meanwhile)"
        )
    return "\n".join(lines)
