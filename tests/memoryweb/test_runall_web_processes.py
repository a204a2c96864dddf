"""`runall --web-processes N`: N web processes accept on one listening socket."""

import socket
import sys

import pytest
from django.core.management import CommandError, call_command

from memoryweb.management.commands.runall import ChildSpec, Supervisor, listen_socket, web_argv

# Accepts one connection on the inherited socket argv[1], answers with its pid, then stays up
# without accepting again: a second connection can only be served by another process.
SERVES_ONCE = """
import os, socket, sys, time
sock = socket.socket(fileno=int(sys.argv[1]))
conn, _ = sock.accept()
conn.sendall(str(os.getpid()).encode())
conn.close()
time.sleep(600)
"""


def ask(port: int) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.settimeout(30)
        return int(conn.recv(64).decode())


def test_two_children_serve_connections_on_one_inherited_socket():
    sock = listen_socket("127.0.0.1", 0)
    port, fd = sock.getsockname()[1], sock.fileno()
    children = [
        ChildSpec(f"web{n}", [sys.executable, "-c", SERVES_ONCE, str(fd)], pass_fds=[fd]) for n in (1, 2)
    ]
    supervisor = Supervisor(children, log=lambda line: None)
    supervisor.start()
    try:
        pids = {ask(port), ask(port)}
        assert pids == {child.process.pid for child in supervisor.children}
    finally:
        supervisor.stop()
        sock.close()


def test_a_web_process_on_a_shared_socket_is_started_with_its_descriptor():
    assert web_argv("127.0.0.1", 8000, fd=7)[3:5] == ["--fd", "7"]
    assert web_argv("127.0.0.1", 8000)[3:7] == ["-b", "127.0.0.1", "-p", "8000"]
    assert web_argv("127.0.0.1", 8000)[-1] == "memoryweb.asgi:application"


def test_zero_web_processes_is_refused():
    with pytest.raises(CommandError, match="--web-processes"):
        call_command("runall", "--web-processes", "0")
