"""`bench load`: the real server under mixed traffic at a fixed concurrency for a fixed time.

The benchmark builds a stack of its own and never touches the configured database:
a temporary var dir, migrated, seeded through the same fill as `bench context` (one App,
`notes` synthetic notes over `subjects` subjects, an API key, one conversation per subject),
then served the way a deployment serves it:

- `embedded`: `manage.py runall` (daphne and a Celery worker with beat embedded) on SQLite in
  that var dir, with the filesystem broker and the in-memory channel layer;
- `production`: N daphne processes sharing one listening socket, a Celery worker and one beat,
  on a fresh PostgreSQL database (created for the run and dropped after it), with Redis as the
  broker and the channel layer (docs/deployment.md).

Both listen on a free loopback port; a non-loopback host is refused. An async httpx client then
keeps `concurrency` requests in flight for `duration` seconds per phase: first a trivial
authenticated GET (`/api/v1/consent/categories`: the key check and one small query, the
server's floor), then the mixed phase, a chat app's traffic: a context build before each turn
(POST /api/v1/context, `context_share` of the requests) and the turn posted back (POST
…/messages and …/responses, the rest, half each), which queues a reflection for the worker.
Every answer that is not a 2xx, and every transport error, is an error. The client runs on the
same machine as the server and its CPU time is reported, so a reader can see what it took.
"""

import asyncio
import contextlib
import ipaddress
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx
from django.conf import settings

from memoryweb import procfs
from memoryweb.bench.report import percentile, table
from memoryweb.bench.server import free_port

LAYOUTS = ("embedded", "production")
TRIVIAL = "GET consent/categories"
CONTEXT = "POST context"
MESSAGES = "POST messages"
RESPONSES = "POST responses"
ERROR_SAMPLES = 5
WEB_SERVERS = (
    "memoryweb.webserver",
    "daphne",
    "uvicorn",
)  # how a web process is told from the others in /proc


class BenchError(Exception):
    pass


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# --- the stack ----------------------------------------------------------------------------

SEED_SCRIPT = """
import json
from memoryweb.bench.load import seed
print("SEED " + json.dumps(seed(notes={notes}, subjects={subjects}, seed={seed})))
"""


def seed(*, notes: int, subjects: int, seed: int) -> dict:
    """Fill the configured (scratch) database for a load run; returns what the client needs.

    Runs inside the stack's own environment (`manage.py shell -c`), never in the bench process.
    """
    from memory.services import Actor, api_key_create
    from memory.services.conversations import conversation_get_or_create
    from memoryweb.bench import context as context_bench
    from memoryweb.celery import app as celery_app

    celery_app.conf.task_always_eager = True  # linking of the sampled notes runs inline
    actor = Actor.system("bench")
    app, _ = context_bench.prepare(
        size=notes,
        subjects=subjects,
        seed=seed,
        ingest_sample=min(notes, 20),
        fresh=True,
        actor=actor,
        out=lambda line: None,
    )
    _, raw_key = api_key_create(app=app, name="bench-load", actor=actor)
    people = []
    for subject in app.subjects.order_by("id"):
        conversation, _ = conversation_get_or_create(subject=subject, external_id="load", actor=actor)
        people.append({"subject": subject.external_id, "conversation": conversation.pk})
    return {"api_key": raw_key, "people": people}


@dataclass
class Stack:
    """A temporary memoryweb: var dir, database, server processes. `with Stack(...) as stack:`."""

    layout: str = "embedded"
    web_processes: int = 1
    host: str = "127.0.0.1"
    postgres_url: str = "postgresql://postgres@127.0.0.1:5432/postgres"
    redis_url: str = "redis://127.0.0.1:6379/13"
    startup_timeout: float = 120.0
    out: Callable[[str], None] = print
    port: int = 0
    url: str = ""
    var_dir: Path = field(default_factory=Path)
    env: dict = field(default_factory=dict)
    database: str = ""
    processes: list = field(default_factory=list)
    keep_log: bool = False  # set when a request failed: the server's log says why
    kept_log: str = ""
    _socket: socket.socket | None = None
    _log: IO[bytes] | None = None

    def __enter__(self) -> "Stack":
        if not loopback(self.host):
            raise BenchError(f"--host {self.host} is not a loopback address: bench load only runs locally")
        self.var_dir = Path(tempfile.mkdtemp(prefix="memoryweb-load-"))
        self._log = open(self.var_dir / "server.log", "wb")  # noqa: SIM115 (closed in __exit__)
        try:
            self.env = self._environment()
            self._manage("migrate", "--noinput")
            return self
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def _environment(self) -> dict:
        env = dict(os.environ)
        for name in ("CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER", "REDIS_URL", "DATABASE_URL", "DEBUG"):
            env.pop(name, None)
        env.update(
            MEMORYWEB_VAR_DIR=str(self.var_dir),
            DJANGO_SETTINGS_MODULE="memoryweb.settings",
            PYTHONUNBUFFERED="1",
            LOG_LEVEL="WARNING",  # no log line per task or request
            # the per-key limiter still counts every request (its cost is measured) but never
            # refuses one: the default 600/minute would turn most of the load into 429s
            MEMORYWEB_API_RATE_LIMIT="100000000/minute",
        )
        if self.layout == "embedded":
            env["DATABASE_URL"] = f"sqlite:///{self.var_dir / 'memoryweb.sqlite3'}"
            return env
        self.database = f"mwload_{secrets.token_hex(4)}"
        self._create_database()
        admin = httpx.URL(self.postgres_url)
        env["DATABASE_URL"] = str(admin.copy_with(path=f"/{self.database}"))
        self._check_redis()
        env["CELERY_BROKER_URL"] = self.redis_url
        env["REDIS_URL"] = self.redis_url
        return env

    def _create_database(self) -> None:
        import psycopg

        try:
            with psycopg.connect(self.postgres_url, autocommit=True, connect_timeout=5) as conn:
                conn.execute(f'CREATE DATABASE "{self.database}"')
        except psycopg.Error as exc:
            self.database = ""
            raise BenchError(f"production layout: PostgreSQL at {self.postgres_url} refused: {exc}") from exc

    def _drop_database(self) -> None:
        import psycopg

        with psycopg.connect(self.postgres_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')

    def _check_redis(self) -> None:
        import redis

        try:
            redis.Redis.from_url(self.redis_url, socket_connect_timeout=5).ping()
        except redis.RedisError as exc:
            raise BenchError(f"production layout: Redis at {self.redis_url} refused: {exc}") from exc

    def _manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=settings.BASE_DIR,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            raise BenchError(f"manage.py {args[0]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        return done.stdout

    def seed(self, *, notes: int, subjects: int, seed: int) -> dict:
        output = self._manage("shell", "-c", SEED_SCRIPT.format(notes=notes, subjects=subjects, seed=seed))
        line = next(line for line in output.splitlines() if line.startswith("SEED "))
        return json.loads(line.removeprefix("SEED "))

    def _spawn(self, name: str, argv: list[str], *, pass_fds: Sequence[int] = ()) -> None:
        process = subprocess.Popen(
            argv,
            cwd=settings.BASE_DIR,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=pass_fds,
        )
        self.processes.append((name, process))

    def start(self) -> "Stack":
        from memoryweb.management.commands.runall import listen_socket, web_argv, worker_argv

        python = sys.executable
        if self.layout == "embedded":
            self.port = free_port()
            argv = [python, "manage.py", "runall", "--host", self.host, "--port", str(self.port)]
            if self.web_processes > 1:
                argv += ["--web-processes", str(self.web_processes)]
            self._spawn("runall", argv)
        else:
            sock = listen_socket(self.host, 0)
            self._socket = sock
            self.port = sock.getsockname()[1]
            for n in range(self.web_processes):
                self._spawn(
                    f"web-{n + 1}", web_argv(self.host, self.port, fd=sock.fileno()), pass_fds=[sock.fileno()]
                )
            worker = [arg for arg in worker_argv() if arg not in ("-B",)]
            worker = [arg for arg in worker if not arg.startswith("django_celery_beat")]
            worker = [arg for arg in worker if arg != "--scheduler"]
            self._spawn("worker", worker)
            self._spawn(
                "beat",
                [
                    python,
                    "-m",
                    "celery",
                    "-A",
                    "memoryweb",
                    "beat",
                    "--scheduler",
                    "django_celery_beat.schedulers:DatabaseScheduler",
                    "--loglevel",
                    "WARNING",
                    "--schedule",
                    str(self.var_dir / "celerybeat-schedule"),
                ],
            )
        self.url = f"http://{self.host}:{self.port}"
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            for name, process in self.processes:
                if process.poll() is not None:
                    raise BenchError(f"{name} exited with code {process.returncode}:\n{self.log_tail()}")
            try:
                httpx.get(self.url + "/api/v1/consent/categories", timeout=2.0)  # 401 is an answer
                return self
            except httpx.TransportError:
                time.sleep(0.2)
        raise BenchError(f"the server did not answer on {self.url} within {self.startup_timeout:.0f} s")

    def log_tail(self, lines: int = 30) -> str:
        text = (self.var_dir / "server.log").read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def pids(self) -> list[int]:
        return [process.pid for _, process in self.processes]

    def stop(self) -> None:
        # runall stops its children's groups itself; the production processes lead their own
        for _, process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 60
        for _, process in self.processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.processes = []

    def __exit__(self, *exc) -> None:
        try:
            self.stop()
        finally:
            if self._socket is not None:
                self._socket.close()
            if self._log is not None:
                self._log.close()
            if self.database:
                self._drop_database()
            if exc[0] is None:
                if self.keep_log:
                    fd, self.kept_log = tempfile.mkstemp(prefix="memoryweb-load-", suffix=".log")
                    os.close(fd)
                    shutil.copyfile(self.var_dir / "server.log", self.kept_log)
                    self.out(f"requests failed: the server log is kept in {self.kept_log}")
                shutil.rmtree(self.var_dir, ignore_errors=True)
            else:
                self.out(f"server log kept in {self.var_dir / 'server.log'}")


def process_tree_cpu(roots: list[int]) -> dict[str, float]:
    """CPU seconds (user + system) so far of every live process under `roots`, by role: `web`
    (daphne) and `other` (the Celery worker and beat, runall itself). Linux only; {} elsewhere.

    CPU time per request moves much less than wall-clock latency on a machine shared with other
    work, so it is the figure to compare between two runs on a busy machine.
    """
    if not procfs.available():
        return {}
    children: dict[int, list[int]] = {}
    seconds: dict[int, float] = {}
    for p in procfs.processes():
        children.setdefault(p.ppid, []).append(p.pid)
        seconds[p.pid] = p.cpu_seconds
    totals = {"web": 0.0, "other": 0.0}
    todo = list(roots)
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        if pid in seconds:
            command = procfs.cmdline(pid)
            totals["web" if any(name in command for name in WEB_SERVERS) else "other"] += seconds[pid]
    return totals


# --- the client ---------------------------------------------------------------------------


@dataclass
class Sample:
    endpoint: str
    ms: float
    ok: bool
    error: str = ""


Plan = Callable[[random.Random, int], tuple[str, str, str, dict | None]]


def trivial_plan(rng: random.Random, user: int) -> tuple[str, str, str, dict | None]:
    return TRIVIAL, "GET", "/api/v1/consent/categories", None


def mixed_plan(people: list[dict], questions: list[str], texts: list[str], context_share: float) -> Plan:
    def plan(rng: random.Random, user: int) -> tuple[str, str, str, dict | None]:
        person = people[user % len(people)]
        conversation = person["conversation"]
        draw = rng.random()
        if draw < context_share:
            body = {
                "subject": person["subject"],
                "message": rng.choice(questions),
                "conversation": conversation,
            }
            return CONTEXT, "POST", "/api/v1/context", body
        if draw < context_share + (1 - context_share) / 2:
            return (
                MESSAGES,
                "POST",
                f"/api/v1/conversations/{conversation}/messages",
                {"text": rng.choice(texts)},
            )
        return (
            RESPONSES,
            "POST",
            f"/api/v1/conversations/{conversation}/responses",
            {"text": rng.choice(texts)},
        )

    return plan


async def _drive(url: str, api_key: str, plan: Plan, *, concurrency: int, duration: float, seed: int):
    samples: list[Sample] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"Authorization": f"Bearer {api_key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=30.0) as client:

        async def user(n: int, deadline: float) -> None:
            rng = random.Random(seed * 1000 + n)
            while time.monotonic() < deadline:
                endpoint, method, path, body = plan(rng, n)
                started = time.perf_counter()
                try:
                    response = await client.request(method, path, json=body)
                    ok = 200 <= response.status_code < 300
                    error = "" if ok else f"{endpoint}: {response.status_code} {response.text[:200]}"
                except httpx.HTTPError as exc:
                    ok, error = False, f"{endpoint}: {type(exc).__name__}: {exc}"
                samples.append(Sample(endpoint, (time.perf_counter() - started) * 1000, ok, error))

        started = time.monotonic()
        await asyncio.gather(*(user(n, started + duration) for n in range(concurrency)))
        elapsed = time.monotonic() - started
    return samples, elapsed


def _stats(samples: list[Sample], elapsed: float) -> dict:
    ms = [s.ms for s in samples]
    return {
        "requests": len(samples),
        "errors": sum(not s.ok for s in samples),
        "rps": round(len(samples) / elapsed, 1) if elapsed else None,
        "p50": round(percentile(ms, 50), 1) if ms else None,
        "p95": round(percentile(ms, 95), 1) if ms else None,
        "p99": round(percentile(ms, 99), 1) if ms else None,
        "mean": round(sum(ms) / len(ms), 1) if ms else None,
    }


def phase(
    url: str, api_key: str, plan: Plan, *, concurrency: int, duration: float, seed: int, server_pids=()
) -> dict:
    cpu = time.process_time()
    server_before = process_tree_cpu(list(server_pids))
    samples, elapsed = asyncio.run(
        _drive(url, api_key, plan, concurrency=concurrency, duration=duration, seed=seed)
    )
    server_after = process_tree_cpu(list(server_pids))
    cpu = time.process_time() - cpu
    server = {role: round(server_after[role] - server_before.get(role, 0.0), 2) for role in server_after}
    endpoints: dict[str, list[Sample]] = {}
    for sample in samples:
        endpoints.setdefault(sample.endpoint, []).append(sample)
    return {
        "elapsed_s": round(elapsed, 2),
        "client_cpu_s": round(cpu, 2),
        "server_cpu_s": server,
        # the web processes' CPU time per answered request: the cost of serving, whatever the load
        "web_cpu_ms_per_request": round(server["web"] * 1000 / len(samples), 2)
        if server and samples
        else None,
        **_stats(samples, elapsed),
        "endpoints": {name: _stats(rows, elapsed) for name, rows in sorted(endpoints.items())},
        "error_samples": [s.error for s in samples if not s.ok][:ERROR_SAMPLES],
    }


def _warm(url: str, api_key: str, people: list[dict], questions: list[str]) -> None:
    """One request per person and endpoint, so no phase pays for a cold process."""
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {api_key}"}, timeout=60) as client:
        client.get("/api/v1/consent/categories")
        for person in people[:8]:
            client.post("/api/v1/context", json={"subject": person["subject"], "message": questions[0]})


def run(
    *,
    layout: str = "embedded",
    web_processes: int = 1,
    concurrency: int = 8,
    duration: float = 10.0,
    notes: int = 2000,
    subjects: int = 8,
    seed_value: int = 1,
    context_share: float = 0.7,
    host: str = "127.0.0.1",
    postgres_url: str = "postgresql://postgres@127.0.0.1:5432/postgres",
    redis_url: str = "redis://127.0.0.1:6379/13",
    out: Callable[[str], None] = print,
) -> dict:
    from memoryweb.bench import synthetic

    if layout not in LAYOUTS:
        raise BenchError(f"layout must be one of {', '.join(LAYOUTS)}")
    questions = synthetic.questions(200, seed=seed_value)
    texts = list(synthetic.chat_messages(200, seed=seed_value + 1))
    with Stack(
        layout=layout,
        web_processes=web_processes,
        host=host,
        postgres_url=postgres_url,
        redis_url=redis_url,
        out=out,
    ) as stack:
        out(f"stack in {stack.var_dir} ({layout}; database {stack.env['DATABASE_URL']})")
        started = time.perf_counter()
        seeded = stack.seed(notes=notes, subjects=subjects, seed=seed_value)
        out(f"seeded {notes} notes over {subjects} subjects in {time.perf_counter() - started:.1f} s")
        stack.start()
        out(f"serving at {stack.url} (pids {', '.join(map(str, stack.pids()))})")
        _warm(stack.url, seeded["api_key"], seeded["people"], questions)
        phases = {}
        out(f"baseline: {TRIVIAL} for {duration:g} s at concurrency {concurrency}")
        phases["baseline"] = phase(
            stack.url,
            seeded["api_key"],
            trivial_plan,
            concurrency=concurrency,
            duration=duration,
            seed=seed_value,
            server_pids=stack.pids(),
        )
        out(f"mixed: {context_share:.0%} context, the rest messages and responses, for {duration:g} s")
        phases["mixed"] = phase(
            stack.url,
            seeded["api_key"],
            mixed_plan(seeded["people"], questions, texts, context_share),
            concurrency=concurrency,
            duration=duration,
            seed=seed_value,
            server_pids=stack.pids(),
        )
        stack.keep_log = any(p["errors"] for p in phases.values())
    return {
        "layout": layout,
        "web_processes": web_processes,
        "database": "sqlite" if layout == "embedded" else "postgresql",
        "concurrency": concurrency,
        "duration_s": duration,
        "notes": notes,
        "subjects": subjects,
        "seed": seed_value,
        "context_share": context_share,
        "cores": os.cpu_count(),
        "errors": sum(p["errors"] for p in phases.values()),
        "server_log": stack.kept_log or None,
        "phases": phases,
    }


def rows(summary: dict) -> Iterator[list]:
    for name, result in summary["phases"].items():
        yield [
            name,
            "all",
            result["requests"],
            result["errors"],
            result["rps"],
            result["p50"],
            result["p95"],
            result["p99"],
            result["web_cpu_ms_per_request"],
        ]
        for endpoint, stats in result["endpoints"].items():
            yield [
                "",
                endpoint,
                stats["requests"],
                stats["errors"],
                stats["rps"],
                stats["p50"],
                stats["p95"],
                stats["p99"],
                None,
            ]


def _cell(value):
    return f"{value:.1f}" if isinstance(value, float) else value


def render(summary: dict) -> str:
    headers = ["phase", "endpoint", "requests", "errors", "req/s", "p50", "p95", "p99", "web cpu/req"]
    cpu = ", ".join(
        f"{name}: client {p['client_cpu_s']:.1f} s, "
        + ", ".join(f"{role} {seconds:.1f} s" for role, seconds in p["server_cpu_s"].items())
        for name, p in summary["phases"].items()
    )
    lines = [
        table(headers, [[_cell(c) for c in row] for row in rows(summary)]),
        f"(ms; {summary['layout']} layout, {summary['web_processes']} web process(es), {summary['database']}, "
        f"concurrency {summary['concurrency']}, {summary['duration_s']:g} s per phase, {summary['cores']} cores; "
        f"web cpu/req = the web processes' CPU ms per request; CPU time per phase: {cpu})",
    ]
    for name, result in summary["phases"].items():
        for error in result["error_samples"]:
            lines.append(f"{name} error: {error}")
    return "\n".join(lines)
