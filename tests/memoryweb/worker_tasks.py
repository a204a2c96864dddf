"""Tasks only the broker tests' real workers know (they start with `-I tests.memoryweb.worker_tasks`)."""

import os
import time
from pathlib import Path

from celery import shared_task


@shared_task(name="tests.gated")
def gated(gate: str, log: str) -> None:
    """Note a start in `log`, wait until the file `gate` exists, then note the end."""
    with open(log, "a") as f:
        f.write(f"start {os.getpid()}\n")
    while not Path(gate).exists():
        time.sleep(0.05)
    with open(log, "a") as f:
        f.write("done\n")
