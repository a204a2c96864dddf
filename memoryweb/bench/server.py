"""A real HTTP server for the benchmark: daphne as a child process on a free localhost port.

The child inherits the environment (DJANGO_SETTINGS_MODULE, MEMORYWEB_VAR_DIR, DATABASE_URL),
so it serves the same database the benchmark just filled. Its output goes to a log file, not a
pipe, so a chatty access log can never block it. It is always stopped by its own pid.
"""

import contextlib
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time

import httpx


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def quiet_http_log():
    """httpx logs every request at INFO; a benchmark sends hundreds."""
    logger = logging.getLogger("httpx")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


class BenchServer:
    """`with BenchServer() as server: httpx.post(server.url + "/api/v1/context", …)`."""

    def __init__(self, *, startup_timeout: float = 60.0, env: dict[str, str] | None = None):
        self.extra_env = dict(env or {})
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen | None = None
        self.log = tempfile.NamedTemporaryFile(prefix="memoryweb-bench-daphne-", suffix=".log", delete=False)

    def start(self) -> "BenchServer":
        env = dict(os.environ)
        env.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
        env.update(self.extra_env)
        argv = [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(self.port),
            "memoryweb.asgi:application",
        ]
        self.process = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daphne exited with code {self.process.returncode}; see {self.log.name}")
            try:
                httpx.get(self.url + "/api/v1/context", timeout=1.0)  # 401/405 is fine: it answers
                return self
            except httpx.TransportError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"daphne did not answer within {self.startup_timeout:.0f} s; see {self.log.name}")

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()

    def __enter__(self) -> "BenchServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
