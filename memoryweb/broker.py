"""The embedded task broker: kombu's filesystem transport, made safe for several processes.

The stock transport writes a message straight into the queue folder, so a worker polling that
folder can pick up a file that is still being written and fail to decode it. Here a message is
written under a name no queue matches, flushed to disk, then renamed into place (a rename is
atomic within a folder). A worker claims a message by renaming it into the processed folder,
which sits on the same filesystem, so two workers never both get the same message.

Names start with the wall-clock time in nanoseconds and a per-process sequence number, so one
producer's messages come out in the order it put them (the stock millisecond stamp leaves
messages of the same millisecond in random order), and messages left in the folder across a
reboot still sort before new ones (a monotonic clock restarts at boot).
"""

import itertools
import os
import time
import uuid
from queue import Empty

from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

_sequence = itertools.count()


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

    def _put(self, queue, payload, **kwargs):
        name = f"{time.time_ns():020d}_{next(_sequence):012d}_{uuid.uuid4().hex}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.part")
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
                f.flush()
                os.fsync(f.fileno())
            os.rename(partial, final)
        except OSError as exc:
            try:
                os.remove(partial)
            except OSError:
                pass
            raise filesystem.ChannelError(f"Cannot add message {final!r} to the broker folder") from exc

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
