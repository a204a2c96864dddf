"""Reads of what is still in flight after a turn: reflections and the subject's queued or
running jobs (a "consolidate now")."""

import time

from chat.reflect import reflection_pending
from memory.selectors import job_runs_open


def background_wait(
    *, conversation_ids: list[int], subject_id: int, timeout: float, poll: float = 0.05
) -> tuple[int, int, float]:
    """Wait until no reflection is queued or running for these conversations and no job of the
    subject is queued or running, at most `timeout` seconds. Returns (open reflections, open
    jobs, seconds waited)."""
    started = time.monotonic()
    while True:
        reflections = reflection_pending(conversation_ids=conversation_ids)
        jobs = job_runs_open(subject_id=subject_id)
        waited = time.monotonic() - started
        if (reflections == 0 and jobs == 0) or waited >= timeout:
            return reflections, jobs, waited
        time.sleep(min(poll, max(timeout - waited, 0)))
