"""The web server `manage.py runall` starts (memoryweb/webserver.py, daphne underneath) answers a
request head that is too long instead of dropping the connection: 414 for the request line,
431 for the headers, in the API's JSON envelope. Driven over a real socket against a real
server on a free port."""

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from memoryweb.management.commands.runall import web_argv

ROOT = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def server(tmp_path):
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMORYWEB_VAR_DIR": str(tmp_path)}
    process = subprocess.Popen(
        web_argv("127.0.0.1", port), cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"the web server did not start: {process.stderr.read().decode()[-2000:]}")
            time.sleep(0.1)
    yield port
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _exchange(port: int, head: bytes) -> bytes:
    """Send a raw request head; everything the server answers until it closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        try:
            sock.sendall(head)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before it has read all of it
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def _status_and_error(answer: bytes):
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *headers = head.decode().split("\r\n")
    assert "content-type: application/json" in [h.lower() for h in headers]
    return int(status_line.split()[1]), json.loads(body)["error"]


@pytest.mark.slow
def test_a_request_line_over_16_kb_is_answered_414_in_the_json_envelope(server):
    answer = _exchange(server, b"GET /api/v1/subjects/alice/notes?query=" + b"a" * 17_000 + b" HTTP/1.1\r\n")

    status, error = _status_and_error(answer)
    assert status == 414
    assert error["code"] == "uri_too_long" and "16384" in error["message"]


@pytest.mark.slow
def test_headers_that_overflow_the_head_after_a_long_request_line_are_431(server):
    answer = _exchange(
        server,
        b"GET /api/v1/x?q="
        + b"a" * 16_300
        + b" HTTP/1.1\r\nHost: localhost\r\nX-Pad: "
        + b"b" * 200
        + b"\r\n",
    )

    assert _status_and_error(answer)[0] == 431


@pytest.mark.slow
def test_headers_over_16_kb_are_answered_431(server):
    answer = _exchange(server, b"GET /api/v1/context HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"b" * 17_000)

    status, error = _status_and_error(answer)
    assert status == 431
    assert error["code"] == "headers_too_large"


@pytest.mark.slow
def test_an_ordinary_request_still_reaches_the_app(server):
    answer = _exchange(
        server, b"GET /api/v1/no-such-endpoint HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )

    status, error = _status_and_error(answer)
    assert status == 404 and error["code"] == "not_found"
