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
from kombu import Connection, Consumer, Exchange
from kombu import Queue as KombuQueue

from memoryweb.broker import recover
from memoryweb.celery import app as celery_app
from memoryweb.tasks import ping
from tests.support import wait_until

# the filesystem broker and workers on an embedded SQLite stack: no test here reads DATABASE_URL
pytestmark = pytest.mark.own_stack

TRANSPORT = "memoryweb.broker:AtomicFilesystemTransport"


def broker_options(root: Path, *, processed: str = "processed", **extra) -> dict:
    for sub in ("in", "control"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(root / "in"),
        "data_folder_out": str(root / "in"),
        "processed_folder": str(root / processed),
        "control_folder": str(root / "control"),
        "store_processed": False,
        **extra,
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


def start_worker(env: dict, log_path: Path, *extra: str) -> subprocess.Popen:
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "memoryweb", "worker", "--concurrency", "1"]
            + ["--loglevel", "INFO", "--hostname", f"test-broker-{log_path.stem}@%h", *extra],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop_worker(worker: subprocess.Popen) -> None:
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


@pytest.fixture
def through_the_broker():
    """Tasks sent here go through the broker, whatever an earlier test left in eager mode."""
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    yield
    celery_app.conf.task_always_eager = previous


def test_a_real_worker_runs_a_task_sent_through_the_filesystem_broker(tmp_path, through_the_broker):
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
    worker = start_worker(env, log_path)
    try:
        assert wait_until(lambda: b" ready." in log_path.read_bytes(), timeout=60), log_path.read_text()
        assert b"memoryweb.tasks.ping" in log_path.read_bytes()

        # This process's settings point at the project's own var/; send into the worker's folders.
        pong = tmp_path / "pong.txt"
        with connect(broker_options(var_dir / "broker")) as conn:
            ping.apply_async(args=[str(pong)], connection=conn)

        assert wait_until(lambda: pong.exists() and pong.read_text() == "pong"), log_path.read_text()
    finally:
        stop_worker(worker)
    assert b"Task memoryweb.tasks.ping" in log_path.read_bytes()
    assert b"succeeded" in log_path.read_bytes()


@pytest.mark.slow  # real workers, one killed with SIGKILL mid-task
def test_a_task_whose_worker_is_killed_mid_task_runs_again_on_the_next_worker_exactly_once(
    tmp_path, through_the_broker
):
    from tests.memoryweb.worker_tasks import gated

    var_dir = tmp_path / "var"
    env = _run_env(var_dir)
    gate, runs = tmp_path / "gate", tmp_path / "runs.log"
    runs.touch()
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = start_worker(env, first_log, "-I", "tests.memoryweb.worker_tasks")
    second = None
    try:
        assert wait_until(lambda: b" ready." in first_log.read_bytes(), timeout=60), first_log.read_text()
        with connect(broker_options(var_dir / "broker")) as conn:
            gated.apply_async(args=[str(gate), str(runs)], connection=conn)
        assert wait_until(lambda: runs.read_text().count("start") == 1, timeout=60), first_log.read_text()

        os.killpg(first.pid, signal.SIGKILL)  # the worker and its pool, mid-task
        first.wait(timeout=30)
        assert wait_until(lambda: not os.path.exists(f"/proc/{first.pid}"), timeout=30)

        second = start_worker(env, second_log, "-I", "tests.memoryweb.worker_tasks")
        assert wait_until(lambda: runs.read_text().count("start") == 2, timeout=60), second_log.read_text()
        gate.touch()
        assert wait_until(lambda: "done" in runs.read_text(), timeout=60), second_log.read_text()
        assert wait_until(lambda: b"succeeded" in second_log.read_bytes(), timeout=30)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
        if second is not None:
            stop_worker(second)
    # the killed run, one more, and it ended
    assert [line.split()[0] for line in runs.read_text().splitlines()] == ["start", "start", "done"]
    broker_dir = var_dir / "broker"
    assert messages_in(broker_dir / "in") == messages_in(broker_dir / "processed") == []


# --- acknowledged late: a message stays claimed until acked, comes back when not -----------


def messages_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".msg"))


def test_a_message_taken_but_not_acked_stays_claimed_and_no_one_else_gets_it(broker):
    options = broker_options(broker)
    with connect(options) as a, connect(options) as b:
        queue_a, queue_b = a.SimpleQueue("jobs"), b.SimpleQueue("jobs")
        queue_a.put({"i": 1})
        message = queue_a.get_nowait()
        assert messages_in(broker / "in") == []
        assert len(messages_in(broker / "processed")) == 1  # the claim, until the ack
        with pytest.raises(Empty):
            queue_b.get_nowait()
        message.ack()
        assert messages_in(broker / "processed") == []
        with pytest.raises(Empty):
            queue_b.get_nowait()
        queue_a.close()
        queue_b.close()


def test_a_message_rejected_with_requeue_comes_back_first_and_without_it_is_gone(broker):
    options = broker_options(broker)
    with connect(options) as conn:
        queue = conn.SimpleQueue("jobs")
        for i in range(3):
            queue.put({"i": i})
        first = queue.get_nowait()
        first.requeue()
        assert len(messages_in(broker / "in")) == 3
        again = queue.get_nowait()
        assert again.payload == {"i": 0}  # back at its old place, ahead of the others
        again.reject()
        assert [m.payload["i"] for m in [queue.get_nowait(), queue.get_nowait()]] == [1, 2]
        with pytest.raises(Empty):
            queue.get_nowait()
        queue.close()  # the two unacked ones go back
    assert len(messages_in(broker / "in")) == 2
    assert messages_in(broker / "processed") == []


def test_unacked_messages_go_back_to_the_queue_when_the_channel_closes(broker):
    options = broker_options(broker)
    with connect(options) as conn:
        queue = conn.SimpleQueue("jobs")
        queue.put({"i": 1})
        queue.get_nowait()
        queue.close()
    with connect(options) as conn:
        queue = conn.SimpleQueue("jobs")
        message = queue.get_nowait()
        message.ack()
        queue.close()
    assert message.payload == {"i": 1}
    assert messages_in(broker / "in") == messages_in(broker / "processed") == []


def test_a_no_ack_consumer_leaves_no_claim_behind(broker):
    options = broker_options(broker)
    with connect(options) as conn:
        queue = conn.SimpleQueue("jobs", no_ack=True)
        queue.put({"i": 1})
        assert queue.get_nowait().payload == {"i": 1}
        assert messages_in(broker / "processed") == []
        queue.close()
    assert messages_in(broker / "in") == []


CLAIMER = """
import json, sys, time
from pathlib import Path
from kombu import Connection

options, ready = json.loads(sys.argv[1]), Path(sys.argv[2])
with Connection(transport="memoryweb.broker:AtomicFilesystemTransport", transport_options=options) as conn:
    queue = conn.SimpleQueue("jobs")
    message = queue.get_nowait()
    ready.write_text(json.dumps(message.payload))
    time.sleep(600)  # killed here, holding the message
"""


@pytest.mark.slow  # kills a real process
def test_the_claim_of_a_killed_consumer_is_recovered_and_a_live_ones_is_not(broker, tmp_path):
    options = broker_options(broker, recover_interval=0)
    with connect(options) as conn:
        queue = conn.SimpleQueue("jobs")
        queue.put({"i": 1})
        queue.close()
    ready = tmp_path / "ready"
    claimer = subprocess.Popen(
        [sys.executable, "-c", CLAIMER, json.dumps(options), str(ready)], cwd=settings.BASE_DIR
    )
    try:
        assert wait_until(ready.exists, timeout=60)
        assert json.loads(ready.read_text()) == {"i": 1}
        folders = {"queue_folder": str(broker / "in"), "processed_folder": str(broker / "processed")}
        owners = broker / "control" / "owners"
        # alive: its claim stays, even with no visibility timeout at all
        assert recover(**folders, owners_dir=owners, visibility_timeout=0) == 0
        with connect(options) as conn:
            queue = conn.SimpleQueue("jobs")
            with pytest.raises(Empty):
                queue.get_nowait()
            queue.close()
        claimer.kill()
        claimer.wait(timeout=30)
        # dead: the next poll of any consumer puts its claim back and takes it
        with connect(options) as conn:
            queue = conn.SimpleQueue("jobs")
            message = queue.get_nowait()
            message.ack()
            queue.close()
        assert message.payload == {"i": 1}
    finally:
        if claimer.poll() is None:
            claimer.kill()
    assert messages_in(broker / "in") == messages_in(broker / "processed") == []
    assert [p.name for p in owners.iterdir() if not p.name.startswith(str(os.getpid()))] == []


def test_a_claim_without_an_owner_file_goes_back_only_after_the_visibility_timeout(broker):
    options = broker_options(broker)
    with connect(options) as conn:
        queue = conn.SimpleQueue("jobs")
        queue.put({"i": 1})
        queue.close()
    (broker / "processed").mkdir(exist_ok=True)
    [name] = messages_in(broker / "in")
    os.rename(broker / "in" / name, broker / "processed" / f"gone-owner~{name}")
    folders = {"queue_folder": str(broker / "in"), "processed_folder": str(broker / "processed")}
    owners = broker / "control" / "owners"
    assert recover(**folders, owners_dir=owners, visibility_timeout=3600) == 0
    assert messages_in(broker / "in") == []
    assert recover(**folders, owners_dir=owners, visibility_timeout=0) == 1
    assert messages_in(broker / "in") == [name]


# --- priority and speed -------------------------------------------------------------------


def test_a_consumer_of_several_queues_takes_the_first_in_queue_order_first(broker):
    options = broker_options(broker, queue_order=["reflect", "background"])
    with connect(options) as conn:
        background, reflect = conn.SimpleQueue("background"), conn.SimpleQueue("reflect")
        for i in range(3):
            background.put({"q": "background", "i": i})
        reflect.put({"q": "reflect", "i": 0})
        got = []
        consumer = Consumer(
            conn.channel(),
            [KombuQueue(name, Exchange(name), routing_key=name) for name in ("background", "reflect")],
            callbacks=[lambda body, message: (got.append(body), message.ack())],
        )
        with consumer:
            for _ in range(4):
                conn.drain_events(timeout=10)
        background.close()
        reflect.close()
    assert got == [{"q": "reflect", "i": 0}] + [{"q": "background", "i": i} for i in range(3)]


def test_an_ack_wakes_a_consumer_held_by_its_prefetch_limit(broker):
    # An idle poll would sleep an hour: the second message can only come because the ack of
    # the first, from another thread (as the worker's pool acks), wakes the consumer.
    options = broker_options(broker, polling_interval=3600)
    with connect(options) as conn:
        queue = conn.SimpleQueue("jobs")
        queue.put({"i": 0})
        queue.put({"i": 1})
        got = []
        channel = conn.channel()
        channel.basic_qos(0, 1, False)
        consumer = Consumer(
            channel,
            [KombuQueue("jobs", Exchange("jobs"), routing_key="jobs")],
            callbacks=[lambda body, message: got.append(message)],
        )
        with consumer:
            conn.drain_events(timeout=10)
            # no timeout: kombu's own loop would sleep through the whole polling interval
            drainer = threading.Thread(target=conn.drain_events, daemon=True)
            drainer.start()
            drainer.join(timeout=0.5)
            assert len(got) == 1  # held by the prefetch limit until the ack
            got[0].ack()
            drainer.join(timeout=60)
            assert not drainer.is_alive()
            got[1].ack()
        queue.close()
    assert [m.payload for m in got] == [{"i": 0}, {"i": 1}]


def test_reflection_is_routed_to_the_reflect_queue_and_everything_else_to_background():
    def queue_of(name):
        return celery_app.amqp.router.route({}, name)["queue"].name

    assert queue_of("chat.turn_reflect") == "reflect"
    assert queue_of("memory.note_link") == "background"
    assert queue_of("consolidation.consolidate_subject") == "background"
    consumed = list(celery_app.amqp.queues)
    assert consumed[:2] == ["reflect", "background"]
    assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["queue_order"][:2] == ["reflect", "background"]
