"""Reads of what is still in flight after a turn: reflections and the subject's queued or
running jobs (a "consolidate now")."""

import time
from dataclasses import dataclass

from chat.reflect import reflections_open
from memory.selectors import job_runs_open


@dataclass(frozen=True)
class Background:
    reflections: int  # queued, or running with a live worker
    jobs: int
    dead: int  # running, but their worker stopped heartbeating: the sweeper redoes them
    waited: float  # seconds

    @property
    def pending(self) -> int:
        return self.reflections + self.jobs


def background_wait(
    *, conversation_ids: list[int], subject_id: int, timeout: float, poll: float = 0.05
) -> Background:
    """Wait until no reflection is queued or running for these conversations and no job of the
    subject is queued or running, at most `timeout` seconds. A run whose worker stopped
    heartbeating is dead, not pending: it is counted apart and never waited on."""
    started = time.monotonic()
    while True:
        reflections, dead_reflections = reflections_open(conversation_ids=conversation_ids)
        jobs, dead_jobs = job_runs_open(subject_id=subject_id)
        waited = time.monotonic() - started
        if (reflections == 0 and jobs == 0) or waited >= timeout:
            return Background(reflections, jobs, dead_reflections + dead_jobs, waited)
        time.sleep(min(poll, max(timeout - waited, 0)))
