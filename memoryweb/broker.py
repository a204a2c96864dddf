"""The embedded task broker: kombu's filesystem transport, made safe for several processes,
acknowledged late, and fast.

Writing. The stock transport writes a message straight into the queue folder, so a worker
polling that folder can pick up a file that is still being written and fail to decode it. Here a
message is written under a name no queue matches, flushed to disk, then renamed into place (a
rename is atomic within a folder). Names start with the wall-clock time in nanoseconds and a
per-process sequence number, so one producer's messages come out in the order it put them (the
stock millisecond stamp leaves messages of the same millisecond in random order), and messages
left in the folder across a reboot still sort before new ones (a monotonic clock restarts at
boot).

Claiming and acknowledging. A consumer claims a message by renaming it into the processed
folder under `<owner>~<name>`, so two consumers never both get it. The claimed file stays there
until the message is acknowledged (`basic_ack`: Celery's `acks_late` acks when the task has
ended), then it is deleted. A rejected message with requeue, and every unacknowledged one when
the channel closes (a warm shutdown), is renamed back into the queue folder under its old name,
so it sorts where it was. The stock transport deleted the file the moment it was read: a worker
killed mid-task lost the task.

Owners and recovery. `<owner>` is a token for the consuming process; it holds an exclusive
`flock` on `control/owners/<owner>.lock` for its whole life (the kernel lets go when the process
dies, however it dies; the worker's forked pool processes inherit it, so a task still running in
an orphaned child is not handed out twice). A consumer recovers on its first poll and then every
`recover_interval` seconds: each owner file it can lock belongs to a dead process, and that
owner's claims go back into the queue folder. A claim whose owner file is missing altogether
goes back once it is older than `visibility_timeout` (the redis transport's name for its
redelivery delay; here a live owner's claims never time out, however long its task runs).

Speed. kombu's virtual transport sleeps `polling_interval` (1 s by default) whenever a poll comes
back empty, and also when the channel may not take more (the worker's prefetch limit, reached
while every pool process is busy): with `acks_late` every task waited for that sleep, about two
tasks a second on two processes. Here an acknowledgement wakes the sleeping consumer at once,
and an idle poll sleeps `polling_interval` from the options (0.1 s in the settings). One listing
of the folder serves every queue a poll asks about.

Priority. A poll takes from the queues in `queue_order` (a transport option) first, in that
order, then from the others: the settings put `reflect` before `background`, so a reflection
waits for the tasks already running, never for the backlog queued ahead of it.

The routing table in the control folder gets the same care as the messages. The stock transport
creates it with an open-for-writing that truncates before it takes its lock, so a second process
binding the same queue at that moment read an empty file and failed with a JSON error (seen in
CI with one producer and two consumers starting together). Here every change to the table is
made under a lock on a separate lock file and lands by rename, so a reader sees the old table or
the new one, never a part.
"""

import fcntl
import itertools
import logging
import os
import threading
import time
import uuid
from collections import deque
from contextlib import contextmanager
from pathlib import Path
from queue import Empty, Queue

from kombu.transport import filesystem, virtual
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

logger = logging.getLogger(__name__)

_sequence = itertools.count()

CLAIM = "~"  # `<owner>~<message name>`: a claimed message in the processed folder
SETTLED = ".done"  # `.<owner>~<message name>.done`: acknowledged, about to be removed
DEFAULT_VISIBILITY_TIMEOUT = 3600.0
DEFAULT_RECOVER_INTERVAL = 30.0


def folder_options(root: Path) -> dict:
    """The transport options that put the broker's folders under `root` (and create them)."""
    for sub in ("in", "processed", "control"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    return {
        # in and out are the same folder: producers drop files, workers pick them up
        "data_folder_in": str(root / "in"),
        "data_folder_out": str(root / "in"),
        "processed_folder": str(root / "processed"),
        "control_folder": str(root / "control"),
        "store_processed": False,
    }


def _write_atomically(partial, final, text: str, *, what: str) -> None:
    """Write `text` to `partial`, flush it to disk, then rename it to `final` (atomic within a
    folder), so a reader sees the whole file or none; the partial file never stays behind."""
    try:
        with open(partial, "wb") as f:
            f.write(str_to_bytes(text))
            f.flush()
            os.fsync(f.fileno())
        os.replace(partial, final)
    except OSError as exc:
        try:
            os.remove(partial)
        except OSError:
            pass
        raise filesystem.ChannelError(f"Cannot write {what}") from exc


class _Owner:
    """This process's identity on its claims: a token, and the lock on its owner file, held until
    the process ends. The file is made and locked under a temporary name, then renamed into
    place, so nobody ever finds it unlocked while its owner lives."""

    _lock = threading.Lock()
    _mine: dict[tuple[int, str], "_Owner"] = {}

    def __init__(self, owners_dir: Path):
        owners_dir.mkdir(parents=True, exist_ok=True)
        self.token = f"{os.getpid()}-{uuid.uuid4().hex}"
        final = owners_dir / f"{self.token}.lock"
        partial = owners_dir / f".{self.token}.lock.part"
        self.file = open(partial, "a+b")  # noqa: SIM115 - held open (and locked) for the process's life
        fcntl.flock(self.file.fileno(), fcntl.LOCK_EX)
        os.replace(partial, final)

    @classmethod
    def of(cls, owners_dir: Path) -> "_Owner":
        key = (os.getpid(), str(owners_dir))  # a forked child gets an owner of its own
        with cls._lock:
            owner = cls._mine.get(key)
            if owner is None:
                owner = cls._mine[key] = cls(owners_dir)
            return owner


def recover(*, queue_folder: str, processed_folder: str, owners_dir: Path, visibility_timeout: float) -> int:
    """Put the claims of dead owners back into the queue folder; returns how many.

    Dead: the owner file can be locked (its process is gone), or there is no owner file and
    the claim is older than `visibility_timeout` seconds. Several processes may recover at
    once: a claim goes back by one rename, so only one of them moves it.
    """
    restored = 0
    try:
        owner_files = [name for name in os.listdir(owners_dir) if name.endswith(".lock")]
    except FileNotFoundError:
        owner_files = []
    for name in owner_files:
        token = name.removesuffix(".lock")
        try:
            f = open(owners_dir / name, "rb")  # noqa: SIM115 - closed in the finally below
        except FileNotFoundError:
            continue  # recovered by another process meanwhile
        try:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # alive (this process's own owner file answers the same)
            # Dead, and it stays dead: every claim it made is in the folder by now.
            restored += _restore_claims(queue_folder, processed_folder, lambda t, _c, dead=token: t == dead)
            try:
                os.remove(owners_dir / name)
            except FileNotFoundError:
                pass
        finally:
            f.close()

    try:
        present = {name.removesuffix(".lock") for name in os.listdir(owners_dir)}
    except FileNotFoundError:
        present = set()
    horizon = time.time() - visibility_timeout

    def ownerless_and_old(token: str, claimed: str) -> bool:
        if token in present:
            return False
        try:
            return os.stat(claimed).st_ctime < horizon  # a rename sets ctime: the claim's age
        except FileNotFoundError:
            return False

    restored += _restore_claims(queue_folder, processed_folder, ownerless_and_old)
    if restored:
        logger.warning(
            "broker: %d message(s) claimed by a process that is gone put back in the queue", restored
        )
    return restored


def _restore_claims(queue_folder: str, processed_folder: str, wanted) -> int:
    """Put back the claims `wanted(owner, path)` picks, and remove its settled files (the owner
    died before its remover got to them)."""
    restored = 0
    try:
        names = os.listdir(processed_folder)
    except FileNotFoundError:
        return 0
    for name in names:
        settled = name.startswith(".") and name.endswith(SETTLED)
        token, sep, original = (name[1:] if settled else name).partition(CLAIM)
        if not sep or (name.startswith(".") and not settled):
            continue
        path = os.path.join(processed_folder, name)
        if not wanted(token, path):
            continue
        try:
            if settled:
                os.remove(path)
            else:
                os.rename(path, os.path.join(queue_folder, original))
                restored += 1
        except FileNotFoundError:
            pass  # another process got to it first
    return restored


class _Remover:
    """One thread per process that removes settled files, so that no ack waits for a removal."""

    _lock = threading.Lock()
    _mine: dict[int, "_Remover"] = {}

    def __init__(self):
        self.paths: Queue[str] = Queue()
        threading.Thread(target=self._run, name="broker-remover", daemon=True).start()

    @classmethod
    def get(cls) -> "_Remover":
        with cls._lock:  # one per process: a forked child starts its own thread
            remover = cls._mine.get(os.getpid())
            if remover is None:
                remover = cls._mine[os.getpid()] = cls()
            return remover

    def remove(self, path: str) -> None:
        self.paths.put(path)

    @classmethod
    def wait(cls) -> None:
        """Return when what this process settled so far is removed (at once if it settled nothing)."""
        with cls._lock:
            remover = cls._mine.get(os.getpid())
        if remover is not None:
            remover.paths.join()

    def _run(self) -> None:
        while True:
            path = self.paths.get()
            try:
                os.remove(path)
            except OSError:
                pass  # gone already (a recovery removes the settled files of dead owners)
            finally:
                self.paths.task_done()


class ClaimQoS(virtual.QoS):
    """Acknowledging settles the claimed file; rejecting deletes it or, with requeue, puts it back
    (through `Channel._restore`, which the base class also uses for what is unacknowledged when
    the channel closes)."""

    def ack(self, delivery_tag):
        super().ack(delivery_tag)  # first: frees the prefetch slot for the consumer it wakes
        self.channel._settle(delivery_tag)

    def reject(self, delivery_tag, requeue=False):
        super().reject(delivery_tag, requeue=requeue)
        if not requeue:
            self.channel._settle(delivery_tag)


class AtomicFilesystemChannel(filesystem.Channel):
    QoS = ClaimQoS

    def __init__(self, connection, **kwargs):
        super().__init__(connection, **kwargs)
        self._claims: dict[str, str] = {}  # delivery tag -> claimed file
        self._no_ack_queues: set[str] = set()
        self._listing: dict[str, deque[str]] = {}  # queue -> names not yet tried, oldest first
        self._listing_at: float | None = None

    # --- options --------------------------------------------------------------------------

    @property
    def owners_dir(self) -> Path:
        return self.control_folder / "owners"

    def _option(self, name, default):
        value = self.transport_options.get(name)
        return default if value is None else value

    # --- routing table --------------------------------------------------------------------

    def queue_bind(self, queue, exchange=None, routing_key="", arguments=None, **kwargs):
        # kombu remembers bindings per process and writes the routing table in the control
        # folder only the first time. The folder is what producers in other processes read,
        # so write the binding through every time (it is a no-op when already there): a
        # control folder that was emptied or swapped under a running process would otherwise
        # route its messages nowhere, silently.
        super().queue_bind(queue, exchange, routing_key, arguments, **kwargs)
        exchange = exchange or "amq.direct"
        meta = self.typeof(exchange).prepare_bind(queue, exchange, routing_key, arguments)
        self._queue_bind(exchange, *meta)

    @contextmanager
    def _table_lock(self, exchange):
        """Hold the exclusive lock that serialises changes to `exchange`'s routing table."""
        self.control_folder.mkdir(parents=True, exist_ok=True)
        path = self.control_folder / f".{exchange}.lock"
        with open(path, "a+b") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)

    def _write_table(self, exchange, queues):
        file = self._exchange_file(exchange)
        partial = file.with_name(f".{file.name}.{os.getpid()}.{uuid.uuid4().hex}.part")
        _write_atomically(partial, file, dumps(queues), what=f"the routing table {file}")

    def _queue_bind(self, exchange, routing_key, pattern, queue):
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        with self._table_lock(exchange):
            queues = self.get_table(exchange)
            if entry not in queues:
                self._write_table(exchange, [entry, *queues])

    def _delete(self, queue, exchange, routing_key, pattern, *args, **kwargs):
        # The queue's messages go as in the stock transport (its grandparent's _delete);
        # the routing table changes under the lock, by rename.
        super(filesystem.Channel, self)._delete(queue, exchange, routing_key, pattern, *args, **kwargs)
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        with self._table_lock(exchange):
            queues = self.get_table(exchange)
            if entry in queues:
                self._write_table(exchange, [q for q in queues if q != entry])

    # --- putting --------------------------------------------------------------------------

    def _put(self, queue, payload, **kwargs):
        name = f"{time.time_ns():020d}_{next(_sequence):012d}_{uuid.uuid4().hex}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.part")
        _write_atomically(partial, final, dumps(payload), what=f"message {final!r} to the broker folder")

    # --- getting --------------------------------------------------------------------------

    def basic_consume(self, queue, no_ack, callback, consumer_tag, **kwargs):
        # Messages of a no-ack consumer (Celery's remote-control replies) are never
        # acknowledged: their claims are settled as soon as they are read.
        if no_ack:
            self._no_ack_queues.add(queue)
        return super().basic_consume(queue, no_ack, callback, consumer_tag, **kwargs)

    def basic_cancel(self, consumer_tag):
        queue = self._tag_to_queue.get(consumer_tag)
        super().basic_cancel(consumer_tag)
        if queue is not None and queue not in self._tag_to_queue.values():
            self._no_ack_queues.discard(queue)

    def basic_get(self, queue, no_ack=False, **kwargs):
        message = super().basic_get(queue, no_ack=no_ack, **kwargs)
        if message is not None and no_ack:
            self._settle(message.delivery_tag)
        return message

    def _poll(self, cycle, callback, timeout=None):
        # One listing for all the consumed queues, taken in priority order (module docstring)
        # instead of the stock one-queue-per-call round robin.
        message, queue = self._get_first(self._active_queues)
        callback(message, queue)

    def _get(self, queue):
        return self._get_first([queue])[0]

    def _ordered(self, queues) -> list[str]:
        first = list(self._option("queue_order", ()))
        rank = {name: i for i, name in enumerate(first)}
        return sorted(dict.fromkeys(queues), key=lambda q: rank.get(q, len(first)))

    def _get_first(self, queues) -> tuple[dict, str]:
        """Claim and read the oldest message of the first of `queues` (priority order) that has one.

        Listing a folder of a few thousand messages takes milliseconds, so one listing serves
        the polls that follow it for up to `polling_interval` seconds (a message queued meanwhile
        on a higher-priority queue waits that long at most), and until it runs out.
        """
        if self._maybe_recover():
            self._listing_at = None
        order = self._ordered(queues)
        interval = self.connection.polling_interval or 0.0
        fresh = False
        if (
            self._listing_at is None
            or time.monotonic() - self._listing_at >= interval
            or not any(self._listing.get(queue) for queue in order)
        ):
            self._list()
            fresh = True
        while True:
            for queue in order:
                names = self._listing.get(queue)
                while names:
                    name = names.popleft()
                    owner = _Owner.of(self.owners_dir)
                    source = os.path.join(self.data_folder_in, name)
                    claimed = os.path.join(self.processed_folder, f"{owner.token}{CLAIM}{name}")
                    if self._claim(source, claimed, self.processed_folder):
                        return self._read_claim(claimed, queue), queue
                    # else another consumer claimed it first
            if fresh:
                raise Empty()
            self._list()
            fresh = True

    def _list(self) -> None:
        """List the queue folder: each queue's messages, oldest first."""
        buckets: dict[str, list[str]] = {}
        for name in os.listdir(self.data_folder_in):
            if name.startswith(".") or not name.endswith(".msg"):
                continue
            buckets.setdefault(name.partition(".")[2].removesuffix(".msg"), []).append(name)
        self._listing = {queue: deque(sorted(names)) for queue, names in buckets.items()}
        self._listing_at = time.monotonic()

    def _read_claim(self, claimed: str, queue: str) -> dict:
        try:
            with open(claimed, "rb") as f:
                payload = loads(bytes_to_str(f.read()))
        except (OSError, ValueError) as exc:
            raise filesystem.ChannelError(f"Cannot read file {claimed!r} from queue.") from exc
        tag = payload.get("properties", {}).get("delivery_tag") if isinstance(payload, dict) else None
        if tag is None or queue in self._no_ack_queues:
            self._settle_file(claimed)
        else:
            self._claims[tag] = claimed
        return payload

    @staticmethod
    def _claim(source, claimed, claim_dir):
        """Move `source` to `claimed`; False when another consumer took it first."""
        try:
            os.rename(source, claimed)
            return True
        except FileNotFoundError:
            if not os.path.exists(source):
                return False
        except OSError as exc:
            # Any other failure (another filesystem, no permission) would repeat on every
            # poll: say so instead of leaving the message in the folder forever.
            raise filesystem.ChannelError(f"Cannot claim {source!r} into {claim_dir!r}: {exc}") from exc
        # The source is there, so the processed folder is what is missing: make it, retry once.
        os.makedirs(claim_dir, exist_ok=True)
        try:
            os.rename(source, claimed)
            return True
        except FileNotFoundError:
            return False

    # --- settling -------------------------------------------------------------------------

    def _settle(self, delivery_tag) -> None:
        """The message is done with (acknowledged, or rejected for good): its claim goes."""
        claimed = self._claims.pop(delivery_tag, None)
        # Wake first: removing a file can take milliseconds (a filesystem mounted with
        # `discard` trims its blocks there and then), and the consumer need not wait for it.
        self._wake()
        if claimed is not None:
            self._settle_file(claimed)

    def _settle_file(self, claimed: str) -> None:
        folder, name = os.path.split(claimed)
        try:
            if self.store_processed:  # kept, under its own name, where recovery never looks
                os.replace(claimed, os.path.join(folder, name.partition(CLAIM)[2]))
            else:
                # A rename takes microseconds; removing a file whose blocks are on disk can take
                # milliseconds (a filesystem mounted with `discard` trims them there and then),
                # so the removal is left to a thread, and a settled file is never redelivered.
                settled = os.path.join(folder, f".{name}{SETTLED}")
                os.rename(claimed, settled)
                _Remover.get().remove(settled)
        except FileNotFoundError:
            pass

    def close(self):
        super().close()
        _Remover.wait()  # what this channel settled is gone when it has closed

    def _restore(self, message):
        """Redeliver: a claimed message goes back to the queue folder under its own name (so it
        sorts where it was); anything else is put again as in kombu."""
        claimed = self._claims.pop(message.delivery_tag, None)
        if claimed is None:
            return super()._restore(message)
        try:
            original = os.path.basename(claimed).partition(CLAIM)[2]
            os.rename(claimed, os.path.join(self.data_folder_in, original))
        except FileNotFoundError:
            pass  # settled or recovered meanwhile
        finally:
            self._listing_at = None  # it goes before what the last listing found
            self._wake()

    def _wake(self) -> None:
        transport = self.connection
        if transport is not None and hasattr(transport, "wakeup"):
            transport.wakeup.set()

    def _maybe_recover(self) -> bool:
        """Recover dead owners' claims when it is time to (module docstring); True if any came back."""
        key = (os.getpid(), str(self.processed_folder))
        interval = float(self._option("recover_interval", DEFAULT_RECOVER_INTERVAL))
        now = time.monotonic()
        with _recovered_lock:
            last = _recovered_at.get(key)
            if last is not None and now - last < interval:
                return False
            _recovered_at[key] = now
        return 0 < recover(
            queue_folder=self.data_folder_in,
            processed_folder=self.processed_folder,
            owners_dir=self.owners_dir,
            visibility_timeout=float(self._option("visibility_timeout", DEFAULT_VISIBILITY_TIMEOUT)),
        )


_recovered_lock = threading.Lock()
_recovered_at: dict[tuple[int, str], float] = {}


class AtomicFilesystemTransport(filesystem.Transport):
    Channel = AtomicFilesystemChannel
    # folders, not a host: without this kombu warns "No hostname was supplied" on every new
    # producer connection of a `filesystem://` URL
    default_connection_params: dict = {}

    def __init__(self, client, **kwargs):
        super().__init__(client, **kwargs)
        self.wakeup = threading.Event()  # set by an ack or requeue (any thread): poll again now

    def drain_events(self, connection, timeout=None):
        """kombu's loop (deliver one message or time out), except that an empty poll waits on
        `wakeup` rather than sleeping through `polling_interval` regardless."""
        started = time.monotonic()
        interval = self.polling_interval
        while True:
            self.wakeup.clear()
            try:
                self.cycle.get(self._deliver, timeout=timeout)
                return
            except Empty:
                pass
            wait = interval
            if timeout is not None:
                left = timeout - (time.monotonic() - started)
                if left <= 0:
                    raise TimeoutError()  # socket.timeout, as kombu raises it
                wait = left if wait is None else min(wait, left)
            if wait is not None:
                self.wakeup.wait(wait)
