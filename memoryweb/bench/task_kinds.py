"""The tasks `bench tasks` sends: a real worker imports this module (`celery worker -I`)."""

import time
from pathlib import Path

from celery import shared_task


@shared_task(name="memoryweb.bench.stamp")
def stamp(path: str, work_ms: float = 0.0) -> None:
    """Spend `work_ms` (sleeping: a stand-in for a task's cost), then write the wall-clock time
    it finished to the file at `path`. Overwrites the file, so it is safe to repeat."""
    if work_ms:
        time.sleep(work_ms / 1000)
    Path(path).write_text(repr(time.time()))
