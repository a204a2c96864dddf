"""The atomic filesystem broker (memoryweb/broker.py), through kombu and through a real worker."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty

import pytest
from django.conf import settings
from kombu import Connection, Exchange
from kombu import Queue as KombuQueue

from memoryweb.tasks import ping
from tests.support import wait_until

TRANSPORT = "memoryweb.broker:AtomicFilesystemTransport"


def broker_options(root: Path, *, processed: str = "processed") -> dict:
    for sub in ("in", "control"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(root / "in"),
        "data_folder_out": str(root / "in"),
        "processed_folder": str(root / processed),
        "control_folder": str(root / "control"),
        "store_processed": False,
    }


@pytest.fixture
def broker(tmp_path):
    root = tmp_path / "broker"
    (root / "processed").mkdir(parents=True)
    return root


def connect(options: dict) -> Connection:
    return Connection(transport=TRANSPORT, transport_options=options)


def message_body(i: int, size: int) -> dict:
    blob = (hashlib.sha256(str(i).encode()).hexdigest() * (size // 64 + 1))[:size]
    return {"i": i, "blob": blob, "sha": hashlib.sha256(blob.encode()).hexdigest()}


def drain(queue, *, quiet_for: float = 0.5) -> list:
    """Every message the queue hands out until it has been empty for `quiet_for` seconds."""
    got = []
    last = time.monotonic()
    while time.monotonic() - last < quiet_for:
        try:
            message = queue.get_nowait()
        except Empty:
            time.sleep(0.01)
            continue
        message.ack()
        got.append(message.payload)
        last = time.monotonic()
    return got


def test_a_message_put_is_got_back_intact_and_the_folders_are_left_empty(broker):
    options = broker_options(broker)
    with connect(options) as conn:
        queue = conn.SimpleQueue("jobs")
        queue.put(message_body(1, 100_000))
        message = queue.get(timeout=5)
        message.ack()
        queue.close()

    assert message.payload == message_body(1, 100_000)
    assert [p.name for p in (broker / "in").iterdir()] == []
    assert [p.name for p in (broker / "processed").iterdir()] == []


def test_messages_from_one_producer_come_out_in_the_order_they_were_put(broker):
    options = broker_options(broker)
    with connect(options) as conn:
        queue = conn.SimpleQueue("jobs")
        for i in range(300):
            queue.put({"i": i})
        got = [payload["i"] for payload in drain(queue)]
        queue.close()

    assert got == list(range(300))


def test_no_message_is_visible_half_written_and_each_is_delivered_exactly_once(broker):
    options = broker_options(broker)
    total = 200
    # every tenth message is large, so a non-atomic write would stay half-done for a while
    sizes = {i: 1_000_000 if i % 10 == 0 else 4_000 for i in range(total)}
    produced = threading.Event()
    watcher_done = threading.Event()
    received: dict[str, list] = {"a": [], "b": []}
    torn: list[str] = []
    errors: list[BaseException] = []

    def produce():
        try:
            with connect(options) as conn:
                queue = conn.SimpleQueue("jobs")
                for i in range(total):
                    queue.put(message_body(i, sizes[i]))
                queue.close()
        except BaseException as exc:  # surfaced by the assertions below
            errors.append(exc)
        finally:
            produced.set()

    def consume(name):
        try:
            with connect(options) as conn:
                queue = conn.SimpleQueue("jobs")
                while True:
                    try:
                        message = queue.get_nowait()
                    except Empty:
                        if produced.is_set() and not any(
                            p.name.endswith(".msg") for p in (broker / "in").iterdir()
                        ):
                            break
                        time.sleep(0.002)
                        continue
                    message.ack()
                    received[name].append(message.payload)
                queue.close()
        except BaseException as exc:
            errors.append(exc)

    def watch():
        # Any file under its final name must already hold a whole message.
        while not watcher_done.is_set():
            for path in (broker / "in").iterdir():
                if not path.name.endswith(".msg"):
                    continue
                try:
                    raw = path.read_bytes()
                except FileNotFoundError:
                    continue  # claimed meanwhile
                try:
                    json.loads(raw)
                except ValueError:
                    torn.append(f"{path.name}: {len(raw)} bytes")

    threads = [
        threading.Thread(target=produce),
        threading.Thread(target=consume, args=("a",)),
        threading.Thread(target=consume, args=("b",)),
    ]
    watcher = threading.Thread(target=watch)
    watcher.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    watcher_done.set()
    watcher.join(timeout=10)

    assert errors == []
    assert torn == []
    everything = received["a"] + received["b"]
    assert sorted(body["i"] for body in everything) == list(range(total))  # none lost, none twice
    assert all(hashlib.sha256(body["blob"].encode()).hexdigest() == body["sha"] for body in everything)
    assert all(len(body["blob"]) == sizes[body["i"]] for body in everything)
    assert list((broker / "in").iterdir()) == []
    assert list((broker / "processed").iterdir()) == []


def bind_concurrently(options: dict, transport: str, *, binders: int = 12, rounds: int = 5) -> list:
    """Bind `binders` queues to one exchange from as many threads at once, `rounds` times over."""
    errors: list[BaseException] = []
    for round_ in range(rounds):
        start = threading.Barrier(binders)
        exchange = Exchange(f"shared-{round_}", type="direct")

        def bind(i, exchange=exchange, start=start):
            try:
                with Connection(transport=transport, transport_options=options) as conn:
                    queue = KombuQueue(f"{exchange.name}-q{i}", exchange, routing_key=f"q{i}")
                    start.wait()
                    queue(conn.default_channel).declare()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=bind, args=(i,)) for i in range(binders)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    return errors


def test_queues_bound_at_the_same_moment_all_land_in_the_routing_table(broker):
    # The stock transport truncates the table file before it locks it: a binder starting at
    # that moment read an empty file (the JSON error CI once hit with one producer and two
    # consumers starting together), and a later writer could drop an earlier one's queue.
    options = broker_options(broker)
    assert bind_concurrently(options, TRANSPORT) == []
    with connect(options) as conn:
        for round_ in range(5):
            table = conn.default_channel.get_table(f"shared-{round_}")
            assert sorted(entry.queue for entry in table) == sorted(
                f"shared-{round_}-q{i}" for i in range(12)
            )
    assert not [p.name for p in (broker / "control").iterdir() if p.name.endswith(".part")]


CONSUMER = """
import json, sys, time
from pathlib import Path
from queue import Empty
from kombu import Connection

options, go, out = json.loads(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
with Connection(transport="memoryweb.broker:AtomicFilesystemTransport", transport_options=options) as conn:
    queue = conn.SimpleQueue("jobs")
    Path(f"{out}.ready").touch()
    while not go.exists():
        time.sleep(0.005)
    got, last = [], time.monotonic()
    while time.monotonic() - last < 1.0:
        try:
            message = queue.get_nowait()
        except Empty:
            time.sleep(0.005)
            continue
        message.ack()
        got.append(message.payload["i"])
        last = time.monotonic()
    queue.close()
out.write_text(json.dumps(got))
"""


def test_consumers_in_separate_processes_never_get_the_same_message(broker, tmp_path):
    options = broker_options(broker)
    total = 600
    with connect(options) as conn:
        queue = conn.SimpleQueue("jobs")
        for i in range(total):
            queue.put({"i": i})
        queue.close()
    go = tmp_path / "go"
    outs = [tmp_path / f"consumer-{n}.json" for n in range(3)]
    consumers = [
        subprocess.Popen(
            [sys.executable, "-c", CONSUMER, json.dumps(options), str(go), str(out)],
            cwd=settings.BASE_DIR,
        )
        for out in outs
    ]
    try:
        # all three at the start line before any of them may take a message
        assert wait_until(lambda: all(Path(f"{out}.ready").exists() for out in outs), timeout=60)
        go.touch()
        codes = [consumer.wait(timeout=60) for consumer in consumers]
    finally:
        for consumer in consumers:
            if consumer.poll() is None:
                consumer.kill()

    assert codes == [0, 0, 0]
    got = [json.loads(out.read_text()) for out in outs]
    everything = [i for ids in got for i in ids]
    assert sorted(everything) == list(range(total))  # none lost, none twice
    assert sum(1 for ids in got if ids) >= 2  # they really competed


def test_a_consumer_creates_a_missing_processed_folder_instead_of_never_delivering(tmp_path):
    options = broker_options(tmp_path / "broker", processed="not-there-yet")
    with connect(options) as conn:
        queue = conn.SimpleQueue("jobs")
        queue.put({"i": 7})
        message = queue.get(timeout=5)
        message.ack()
        queue.close()

    assert message.payload == {"i": 7}
    assert list((tmp_path / "broker" / "in").iterdir()) == []


def _run_env(var_dir: Path) -> dict:
    env = dict(os.environ)
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER"):
        env.pop(name, None)
    env["MEMORYWEB_VAR_DIR"] = str(var_dir)
    env["DJANGO_SETTINGS_MODULE"] = "memoryweb.settings"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def test_a_real_worker_runs_a_task_sent_through_the_filesystem_broker(tmp_path):
    var_dir = tmp_path / "var"
    env = _run_env(var_dir)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=settings.BASE_DIR,
        env=env,
        check=True,
        timeout=120,
    )
    log_path = tmp_path / "worker.log"
    with open(log_path, "wb") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "memoryweb", "worker", "--concurrency", "1"]
            + ["--loglevel", "INFO", "--hostname", "test-broker@%h"],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        assert wait_until(lambda: b" ready." in log_path.read_bytes(), timeout=60), log_path.read_text()
        assert b"memoryweb.tasks.ping" in log_path.read_bytes()

        # This process's settings point at the project's own var/; send into the worker's folders.
        pong = tmp_path / "pong.txt"
        with connect(broker_options(var_dir / "broker")) as conn:
            ping.apply_async(args=[str(pong)], connection=conn)

        assert wait_until(lambda: pong.exists() and pong.read_text() == "pong"), log_path.read_text()
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        try:
            os.killpg(worker.pid, signal.SIGKILL)  # whatever the worker left in its group
        except ProcessLookupError:
            pass
    assert b"Task memoryweb.tasks.ping" in log_path.read_bytes()
    assert b"succeeded" in log_path.read_bytes()
