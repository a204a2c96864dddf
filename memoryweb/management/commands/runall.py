"""`manage.py runall`: the whole embedded stack from one terminal.

Migrates, then runs the web server (daphne) and the Celery worker with beat embedded, each as
its own process group. A child that dies is restarted with backoff, and so is a web server
that stops answering its liveness probe (`GET /api/v1/live`); Ctrl-C or SIGTERM stops every
group and exits 0. The children die with runall even when it is killed outright
(memoryweb/supervised.py), and only the runall that holds `$MEMORYWEB_VAR_DIR/beat.lock`
runs beat, so one host never runs two.
"""

import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from memoryweb import procfs
from memoryweb.supervised import ORPHAN_GRACE, parent_death_preexec, supervised_env


def restart_delay(failures: int, *, initial: float = 1.0, cap: float = 30.0) -> float:
    """Seconds to wait before restarting a child that has died `failures` times in a row."""
    return min(cap, initial * 2 ** min(failures, 30))


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in a process group.

    Zombies are left out on purpose: an orphaned grandchild is reaped by PID 1, and in a
    container PID 1 may never do it, yet a zombie holds no resources and needs no signal.
    """
    if not procfs.available():  # not Linux: ask the kernel whether anything is left in the group
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    return [p.pid for p in procfs.processes() if p.pgrp == pgid and p.state != "Z"]


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


@dataclass
class ChildSpec:
    """A program the supervisor keeps running: a name for the log and its argv.

    `liveness_url`, when given, is probed over HTTP while the child runs (anything but a 200
    in time is a failure); `parent_death_signal` is what the child gets when the supervisor
    dies; `pass_fds` are descriptors the child inherits (a lock it must hold too).
    """

    name: str
    argv: Sequence[str]
    liveness_url: str | None = None
    parent_death_signal: int = signal.SIGTERM
    pass_fds: Sequence[int] = ()  # descriptors the child inherits (a shared listening socket, the beat lock)


@dataclass
class _Child:
    spec: ChildSpec
    process: subprocess.Popen | None = None
    pgid: int | None = None
    started_at: float = 0.0
    failures: int = 0  # deaths in a row, each before the child had been up `stable_after`
    restart_at: float | None = None
    probe: Future | None = None  # the liveness probe in flight
    next_probe_at: float = 0.0
    probe_failures: int = 0  # liveness failures in a row
    answered: bool = False  # whether this run of the child has passed a probe yet


def probe_liveness(url: str, timeout: float) -> str | None:
    """GET `url` (no proxy): None for a 200 within `timeout` seconds, else what went wrong."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as answer:
            if answer.status == 200:
                return None
            return f"answered {answer.status}"
    except urllib.error.HTTPError as exc:
        body = exc.read(300).decode("utf-8", "replace").strip()
        return f"answered {exc.code}: {body}" if body else f"answered {exc.code}"
    except (OSError, ValueError) as exc:  # refused, reset, timed out
        return f"no answer ({exc})"


class Supervisor:
    """Runs each child in its own session (so its own process group) and keeps it running.

    `run()` is the whole life cycle for a command; `start()`, `poll()` and `stop()` are its
    steps, for a caller (or a test) that drives the loop itself.
    """

    def __init__(
        self,
        children: Sequence[ChildSpec],
        *,
        cwd: str | os.PathLike | None = None,
        env: Mapping[str, str] | None = None,
        log: Callable[[str], None] | None = None,
        backoff_initial: float = 1.0,
        backoff_max: float = 30.0,
        stable_after: float = 60.0,
        stop_timeout: float = ORPHAN_GRACE,
        poll_interval: float = 0.2,
        liveness_interval: float = 10.0,
        liveness_timeout: float = 10.0,
        liveness_failures: int = 3,
        liveness_grace: float = 60.0,
    ):
        self.children = [_Child(spec) for spec in children]
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.log = log or _log_to_stderr
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.stable_after = stable_after
        self.stop_timeout = stop_timeout
        self.poll_interval = poll_interval
        # A child with a liveness URL is probed every `liveness_interval` s; `liveness_failures`
        # failures in a row get its process group killed (then it restarts like any dead
        # child). Until it first passes, a starting child's failures count only once it has
        # been up `liveness_grace` s.
        self.liveness_interval = liveness_interval
        self.liveness_timeout = liveness_timeout
        self.liveness_failures = liveness_failures
        self.liveness_grace = liveness_grace
        self._probes: ThreadPoolExecutor | None = None
        # Plain flags, not threading.Event: a signal handler that takes a lock the main thread
        # already holds would deadlock.
        self.stopping = False
        self.force = False
        self.signals: list[int] = []

    # --- life cycle ---------------------------------------------------------------------

    def run(self) -> None:
        """Start every child, keep them running until SIGINT, SIGTERM or SIGHUP, then stop them all.

        SIGHUP is there for a closed terminal: the children sit in sessions of their own, so
        the hangup reaches only this process, and dying of it would orphan them.
        """
        handled = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        previous = {sig: signal.signal(sig, self._on_signal) for sig in handled}
        try:
            self.start()
            while not self.stopping:
                self.poll()
                time.sleep(self.poll_interval)
            if self.signals:
                self.log(f"{signal.Signals(self.signals[0]).name} received: stopping")
        finally:
            self.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def start(self) -> None:
        for child in self.children:
            self._spawn(child)

    def poll(self) -> None:
        """One supervision step: notice children that died or stopped answering their liveness
        probe, restart those whose wait is over."""
        now = time.monotonic()
        for child in self.children:
            if child.process is not None:
                code = child.process.poll()
                if code is None:
                    self._check_liveness(child, now)
                    continue
                self._on_exit(child, code, now)
            if not self.stopping and child.restart_at is not None and now >= child.restart_at:
                self._spawn(child)

    def stop(self) -> None:
        """SIGTERM every child, give each group up to `stop_timeout` to empty, then SIGKILL it.

        The leader gets SIGTERM first and the rest of its group only once the leader is gone:
        a Celery worker shuts its pool down itself (finishing the running tasks), whereas pool
        processes signalled directly would die mid-task.
        """
        self.stopping = True
        if self._probes is not None:
            self._probes.shutdown(wait=False, cancel_futures=True)
            self._probes = None
        # (child, its process); each process leads its own group, so its pid is the group id
        running = [(child, child.process) for child in self.children if child.process is not None]
        for child, process in running:
            self.log(f"stopping {child.spec.name} (pid {process.pid})")
            try:
                process.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + self.stop_timeout
        leaders_gone: set[int] = set()
        pending = list(running)
        while pending and time.monotonic() < deadline and not self.force:
            for entry in list(pending):
                process = entry[1]
                if process.poll() is None:
                    continue
                if process.pid not in leaders_gone:
                    leaders_gone.add(process.pid)
                    _signal_group(process.pid, signal.SIGTERM)
                if not group_members(process.pid):
                    pending.remove(entry)
            if pending:
                time.sleep(0.05)
        for child, process in pending:
            if self.force:
                self.log(f"asked twice to stop: killing the process group of {child.spec.name}")
            else:
                self.log(
                    f"{child.spec.name} did not stop within {self.stop_timeout:g}s: killing its process group"
                )
            _signal_group(process.pid, signal.SIGKILL)
        for child, process in running:
            code = process.wait()
            child.process = None
            child.restart_at = None
            self.log(f"{child.spec.name} stopped ({_describe_exit(code)})")

    # --- steps --------------------------------------------------------------------------

    def _spawn(self, child: _Child) -> None:
        if child.pgid is not None:
            # Whatever the previous run left in its group (say, a crashed worker's pool
            # processes) must not live on beside the new one.
            _signal_group(child.pgid, signal.SIGKILL)
        child.restart_at = None
        child.started_at = time.monotonic()
        child.probe = None
        child.probe_failures = 0
        child.answered = False
        child.next_probe_at = child.started_at + self.liveness_interval
        env = dict(os.environ if self.env is None else self.env)
        env.update(supervised_env(child.spec.parent_death_signal))
        try:
            child.process = subprocess.Popen(
                list(child.spec.argv),
                cwd=self.cwd,
                env=env,
                start_new_session=True,
                pass_fds=tuple(child.spec.pass_fds),
                preexec_fn=parent_death_preexec(child.spec.parent_death_signal),
            )
        except OSError as exc:
            child.process = None
            delay = self._next_delay(child, uptime=0.0)
            self.log(f"cannot start {child.spec.name}: {exc}: retrying in {delay:g}s")
            child.restart_at = time.monotonic() + delay
            return
        child.pgid = child.process.pid  # a new session's leader leads its own group
        self.log(f"started {child.spec.name}: pid {child.process.pid}")

    def _check_liveness(self, child: _Child, now: float) -> None:
        """Collect a finished probe of a running child, start the next one when it is due, and
        kill the child's process group after `liveness_failures` failures in a row."""
        url = child.spec.liveness_url
        if url is None or self.stopping or child.process is None:
            return
        if child.probe is not None:
            if not child.probe.done():
                return
            problem = child.probe.result()
            child.probe = None
            if problem is None:
                if not child.answered:
                    self.log(f"{child.spec.name} answers its liveness probe {url}")
                child.answered = True
                child.probe_failures = 0
            elif child.answered or now - child.started_at >= self.liveness_grace:
                child.probe_failures += 1
                self.log(
                    f"{child.spec.name} failed its liveness probe "
                    f"({child.probe_failures}/{self.liveness_failures}): {problem}"
                )
                if child.probe_failures >= self.liveness_failures:
                    self.log(f"{child.spec.name} stopped answering {url}: killing its process group")
                    if child.pgid is not None:
                        _signal_group(child.pgid, signal.SIGKILL)  # a hung process handles no SIGTERM
                    return  # the next poll() sees it die and restarts it
        if now >= child.next_probe_at:
            if self._probes is None:
                self._probes = ThreadPoolExecutor(thread_name_prefix="runall-liveness")
            child.probe = self._probes.submit(probe_liveness, url, self.liveness_timeout)
            child.next_probe_at = now + self.liveness_interval

    def _on_exit(self, child: _Child, code: int, now: float) -> None:
        child.process = None
        child.probe = None
        uptime = now - child.started_at
        # The group may still hold processes the leader started; ask them to go now, and
        # _spawn kills whatever is left before the next run.
        if child.pgid is not None:
            _signal_group(child.pgid, signal.SIGTERM)
        if self.stopping:
            return
        delay = self._next_delay(child, uptime=uptime)
        self.log(f"{child.spec.name} {_describe_exit(code)} after {uptime:.1f}s: restarting in {delay:g}s")
        child.restart_at = now + delay

    def _next_delay(self, child: _Child, *, uptime: float) -> float:
        if uptime >= self.stable_after:
            child.failures = 0
        delay = restart_delay(child.failures, initial=self.backoff_initial, cap=self.backoff_max)
        child.failures += 1
        return delay

    def _on_signal(self, signum: int, frame: object) -> None:
        # Flags only: writing a log line here could re-enter a write the main thread was in.
        if self.stopping:
            self.force = True  # asked again while stopping: stop waiting
        self.stopping = True
        self.signals.append(signum)


def _log_to_stderr(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} runall: {message}", file=sys.stderr, flush=True)


class BeatLock:
    """An exclusive `flock` on a file: only its holder starts a worker with beat, so one host
    (one var dir) never runs two beats, which would enqueue every periodic job twice.

    The lock lives as long as any process has the file open: runall keeps it open and hands
    the descriptor to the worker it starts (and so to the beat process the worker forks), so
    it is not released while any of them runs, and is released by the kernel as soon as they
    are all gone, however they ended. The holder's pid is written into the file for the
    message of the one that finds it taken.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.fd: int | None = None

    def acquire(self) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held elsewhere (BlockingIOError), or flock refused
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd
        return True

    def holder(self) -> str:
        try:
            pid = self.path.read_text().strip()
        except OSError:
            pid = ""
        return f"pid {pid}" if pid.isdigit() else "another process"

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def web_argv(host: str, port: int, *, fd: int | None = None) -> list[str]:
    # memoryweb.webserver is daphne answering an over-long request line or header with a JSON
    # 414/431. daphne's own access log writes each raw URL, query string and all, to stdout:
    # off. The app writes the access line itself, redacted (logger memoryweb.access).
    where = ["--fd", str(fd)] if fd is not None else ["-b", host, "-p", str(port)]
    return [
        *(sys.executable, "-m", "memoryweb.webserver", *where),
        *("--access-log", os.devnull, "memoryweb.asgi:application"),
    ]


def listen_socket(host: str, port: int) -> socket.socket:
    """A listening socket that several daphne processes accept on (`daphne --fd`): the kernel
    hands each connection to one of them, and a restarted process takes the same socket."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock
    return [
        *(sys.executable, "-m", "memoryweb.webserver", "-b", host, "-p", str(port)),
        *("--access-log", os.devnull, "memoryweb.asgi:application"),
    ]


def worker_argv(*, beat: bool = True) -> list[str]:
    argv = [sys.executable, "-m", "celery", "-A", "memoryweb", "worker"]
    if beat:
        argv += ["-B", "--scheduler", "django_celery_beat.schedulers:DatabaseScheduler"]
    return argv + ["--concurrency", "2", "--loglevel", "INFO"]


class Command(BaseCommand):
    help = "Migrate, then run the web server and the Celery worker (beat embedded) until Ctrl-C."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1", help="address daphne binds (default 127.0.0.1)")
        parser.add_argument("--port", type=int, default=8000, help="port daphne listens on (default 8000)")
        parser.add_argument(
            "--web-processes",
            type=int,
            default=1,
            help="daphne processes sharing the port (default 1)",
        )
        parser.add_argument("--no-worker", action="store_true", help="run the web server only")
        parser.add_argument("--no-web", action="store_true", help="run the Celery worker only")
        parser.add_argument(
            "--liveness-interval",
            type=float,
            default=10.0,
            help="seconds between probes of the web server's /api/v1/live; 0 turns them off (default 10)",
        )
        parser.add_argument(
            "--liveness-failures",
            type=int,
            default=3,
            help="failed probes in a row after which the web server is killed and restarted (default 3)",
        )

    def handle(
        self,
        *args,
        host,
        port,
        web_processes,
        no_worker,
        no_web,
        liveness_interval,
        liveness_failures,
        verbosity,
        **options,
    ):
        if no_web and no_worker:
            raise CommandError("--no-web and --no-worker together leave nothing to run")
        if web_processes < 1:
            raise CommandError("--web-processes must be at least 1")
        if liveness_interval < 0 or liveness_failures < 1:
            raise CommandError("--liveness-interval must be >= 0 and --liveness-failures >= 1")
        call_command("migrate", interactive=False, verbosity=verbosity, stdout=self.stdout)
        call_command("install_schedule", stdout=self.stdout)

        shown = "127.0.0.1" if host in {"0.0.0.0", "::", ""} else host
        if ":" in shown:
            shown = f"[{shown}]"
        base = f"http://{shown}:{port}"

        children = []
        # a web process has nothing to finish, and a hung one handles no SIGTERM: SIGKILL
        if not no_web and web_processes == 1:
            children.append(
                ChildSpec(
                    "web",
                    web_argv(host, port),
                    liveness_url=f"{base}/api/v1/live" if liveness_interval > 0 else None,
                    parent_death_signal=signal.SIGKILL,
                )
            )
        elif not no_web:
            # one socket, several processes: a probe of the port reaches whichever accepts it,
            # so it cannot tell which one hangs; these are not probed (deployment.md)
            sock = listen_socket(host, port)
            fd = sock.fileno()
            for n in range(1, web_processes + 1):
                children.append(
                    ChildSpec(
                        f"web{n}",
                        web_argv(host, port, fd=fd),
                        pass_fds=[fd],
                        parent_death_signal=signal.SIGKILL,
                    )
                )
        beat_lock = BeatLock(Path(settings.VAR_DIR) / "beat.lock")
        if not no_worker:
            if beat_lock.acquire():
                assert beat_lock.fd is not None
                children.append(ChildSpec("worker", worker_argv(beat=True), pass_fds=(beat_lock.fd,)))
            else:
                self.stderr.write(
                    f"beat: {beat_lock.path} is held by {beat_lock.holder()}, which runs beat for "
                    "this var dir: this worker runs without beat"
                )
                children.append(ChildSpec("worker", worker_argv(beat=False)))

        if not no_web:
            self.stdout.write(f"memoryweb     {base}/")
            self.stdout.write(f"API docs      {base}/api/docs/")
            self.stdout.write(f"admin         {base}/admin/")
        self.stdout.write("Press Ctrl-C to stop.")
        self.stdout.flush()

        env = dict(os.environ)
        env["DJANGO_SETTINGS_MODULE"] = settings.SETTINGS_MODULE
        env["PYTHONUNBUFFERED"] = "1"
        supervisor = Supervisor(
            children,
            cwd=settings.BASE_DIR,
            env=env,
            liveness_interval=liveness_interval or 10.0,
            liveness_timeout=settings.LIVENESS_TIMEOUT + 5,
            liveness_failures=liveness_failures,
        )
        try:
            supervisor.run()
        finally:
            beat_lock.release()
