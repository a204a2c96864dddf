"""What /proc says of the running processes (Linux): one reader of `/proc/<pid>/stat` for the
supervisor (`runall`, which waits for a process group to empty) and the benchmarks (which add
up the CPU time of the processes they started)."""

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class ProcStat:
    pid: int
    state: str  # "R", "S", … ; "Z" for a zombie
    ppid: int
    pgrp: int
    cpu_seconds: float  # user + system so far


def available() -> bool:
    return PROC.is_dir()


def processes() -> Iterator[ProcStat]:
    """Every process /proc lists now (none where there is no /proc); one that exits while it
    is read is skipped."""
    if not available():
        return
    tick = os.sysconf("SC_CLK_TCK")
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited while we looked
        # "pid (comm) state ppid pgrp … utime stime …": comm may hold spaces and parentheses
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) < 13:
            continue
        yield ProcStat(
            pid=int(entry.name),
            state=fields[0],
            ppid=int(fields[1]),
            pgrp=int(fields[2]),
            cpu_seconds=(int(fields[11]) + int(fields[12])) / tick,
        )


def cmdline(pid: int) -> str:
    """The process's command line, arguments joined by spaces ("" once it has exited)."""
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
