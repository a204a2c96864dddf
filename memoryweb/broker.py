"""The embedded task broker: kombu's filesystem transport, made safe for several processes.

The stock transport writes a message straight into the queue folder, so a worker polling that
folder can pick up a file that is still being written and fail to decode it. Here a message is
written under a name no queue matches, flushed to disk, then renamed into place (a rename is
atomic within a folder). A worker claims a message by renaming it into the processed folder,
which sits on the same filesystem, so two workers never both get the same message.
"""

import os
import uuid
from queue import Empty
from time import monotonic

from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads


class AtomicFilesystemChannel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(monotonic() * 1000)):015d}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.part")
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
                f.flush()
                os.fsync(f.fileno())
            os.rename(partial, final)
        except OSError as exc:
            raise filesystem.ChannelError(f"Cannot add message {final!r} to the broker folder") from exc

    def _get(self, queue):
        wanted = f"{queue}.msg"
        claim_dir = self.processed_folder
        for name in sorted(os.listdir(self.data_folder_in)):
            if name.startswith(".") or name.partition(".")[2] != wanted:
                continue
            claimed = os.path.join(claim_dir, f"{os.getpid()}-{name}")
            try:
                os.rename(os.path.join(self.data_folder_in, name), claimed)
            except OSError:
                continue  # another worker claimed it first
            try:
                with open(claimed, "rb") as f:
                    payload = f.read()
            finally:
                if not self.store_processed:
                    os.remove(claimed)
            return loads(bytes_to_str(payload))
        raise Empty()


class AtomicFilesystemTransport(filesystem.Transport):
    Channel = AtomicFilesystemChannel
