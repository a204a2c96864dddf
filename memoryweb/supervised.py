"""The child's side of `manage.py runall`: a supervised program dies with its supervisor.

runall starts each child in a session of its own (so a Ctrl-C in the terminal reaches only
runall, which stops the children in order). The price is that a runall killed hard (`kill -9`,
the OOM killer) would leave its children running: a second runall would then fight the
orphaned web server for the port and run a second worker beside the orphaned one. Two
mechanisms stop that:

- Linux: `parent_death_preexec` makes the kernel send the child a signal the moment runall
  dies (`prctl(PR_SET_PDEATHSIG)`, set between fork and exec, kept across exec).
- Anywhere: runall names itself in the child's environment (`SUPERVISOR_PID_ENV`, with the
  signal in `DEATH_SIGNAL_ENV`), and `watch_supervisor()`, called when the `memoryweb` package
  is imported, runs a thread in that child which notices the parent pid change; it sends the
  signal itself where the kernel did not, and after `ORPHAN_GRACE` seconds kills the child's
  whole process group (a Celery worker's pool processes too) if it is still there.
"""

import ctypes
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping

logger = logging.getLogger(__name__)

SUPERVISOR_PID_ENV = "MEMORYWEB_SUPERVISOR_PID"
DEATH_SIGNAL_ENV = "MEMORYWEB_PARENT_DEATH_SIGNAL"
# How long an orphan may take to stop of its own accord (a Celery worker finishing its tasks)
# before its process group is killed; runall gives a child it stops the same time.
ORPHAN_GRACE = 10.0
WATCH_INTERVAL = 0.5

_PR_SET_PDEATHSIG = 1
_PR_GET_PDEATHSIG = 2


def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


# Looked up once, here: the function run between fork and exec must not load a library.
_PRCTL = _prctl()


def parent_death_preexec(signum: int) -> Callable[[], None] | None:
    """A `preexec_fn` that has the kernel send `signum` to the child when its parent dies (Linux);
    None where there is no prctl, and the child's own watcher is all there is.

    The kernel ties the signal to the thread that forked, so the parent must fork from a
    thread that lives as long as it does (runall forks from its main thread only). Between
    fork and exec this runs nothing but two system calls.
    """
    prctl = _PRCTL
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took effect
            os.kill(os.getpid(), signum)

    return preexec


def parent_death_signal_set() -> bool:
    """Whether the kernel will signal this process when its parent dies (Linux's PDEATHSIG)."""
    if _PRCTL is None:
        return False
    value = ctypes.c_int(0)
    if _PRCTL(_PR_GET_PDEATHSIG, ctypes.byref(value), 0, 0, 0) != 0:
        return False
    return value.value != 0


def supervised_env(signum: int) -> dict[str, str]:
    """What runall adds to a child's environment so the child can watch it."""
    return {SUPERVISOR_PID_ENV: str(os.getpid()), DEATH_SIGNAL_ENV: signal.Signals(signum).name}


def watch_supervisor(environ: Mapping[str, str] = os.environ) -> threading.Thread | None:
    """In a program runall started, a daemon thread that ends it when runall is gone; None
    (and nothing started) in any other process.

    A process the program itself started inherits the environment but not the role: only the
    leader of its own process group, which runall's children are, watches.
    """
    raw = environ.get(SUPERVISOR_PID_ENV, "")
    if not raw.isdigit() or os.getpgrp() != os.getpid():
        return None
    try:
        signum = signal.Signals[environ.get(DEATH_SIGNAL_ENV, "SIGTERM")]
    except KeyError:
        signum = signal.SIGTERM
    thread = threading.Thread(
        target=_watch, args=(int(raw), signum), name="memoryweb-supervisor-watch", daemon=True
    )
    thread.start()
    return thread


def _watch(supervisor: int, signum: int) -> None:
    while os.getppid() == supervisor:
        time.sleep(WATCH_INTERVAL)
    logger.warning(
        "the supervisor (pid %d) is gone: stopping, and killing this process group in %gs",
        supervisor,
        ORPHAN_GRACE,
    )
    if not parent_death_signal_set():  # else the kernel has sent it already
        os.kill(os.getpid(), signum)
    time.sleep(ORPHAN_GRACE)
    os.killpg(os.getpgrp(), signal.SIGKILL)
