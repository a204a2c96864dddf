"""The embedded task broker: kombu's filesystem transport, made safe for several processes.

The stock transport writes a message straight into the queue folder, so a worker polling that
folder can pick up a file that is still being written and fail to decode it. Here a message is
written under a name no queue matches, flushed to disk, then renamed into place (a rename is
atomic within a folder). A worker claims a message by renaming it into the processed folder,
which sits on the same filesystem, so two workers never both get the same message.

The routing table in the control folder gets the same care. The stock transport creates it
with an open-for-writing that truncates before it takes its lock, so a second process binding
the same queue at that moment read an empty file and failed with a JSON error (seen in CI with
one producer and two consumers starting together). Here every change to the table is made
under a lock on a separate lock file and lands by rename, so a reader sees the old table or
the new one, never a part.

Names start with the wall-clock time in nanoseconds and a per-process sequence number, so one
producer's messages come out in the order it put them (the stock millisecond stamp leaves
messages of the same millisecond in random order), and messages left in the folder across a
reboot still sort before new ones (a monotonic clock restarts at boot).
"""

import fcntl
import itertools
import os
import time
import uuid
from contextlib import contextmanager
from queue import Empty

from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

_sequence = itertools.count()


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


class AtomicFilesystemChannel(filesystem.Channel):
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

    def _put(self, queue, payload, **kwargs):
        name = f"{time.time_ns():020d}_{next(_sequence):012d}_{uuid.uuid4().hex}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.part")
        _write_atomically(partial, final, dumps(payload), what=f"message {final!r} to the broker folder")

    def _get(self, queue):
        wanted = f"{queue}.msg"
        claim_dir = self.processed_folder
        for name in sorted(os.listdir(self.data_folder_in)):
            if name.startswith(".") or name.partition(".")[2] != wanted:
                continue
            source = os.path.join(self.data_folder_in, name)
            claimed = os.path.join(claim_dir, f"{os.getpid()}-{name}")
            if not self._claim(source, claimed, claim_dir):
                continue  # another consumer claimed it first
            try:
                with open(claimed, "rb") as f:
                    payload = f.read()
            finally:
                if not self.store_processed:
                    os.remove(claimed)
            return loads(bytes_to_str(payload))
        raise Empty()

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


class AtomicFilesystemTransport(filesystem.Transport):
    Channel = AtomicFilesystemChannel
    # folders, not a host: without this kombu warns "No hostname was supplied" on every new
    # producer connection of a `filesystem://` URL
    default_connection_params: dict = {}
