"""memoryweb.procfs: what /proc says of the running processes."""

import os
import sys

import pytest

from memoryweb import procfs

pytestmark = pytest.mark.skipif(not procfs.available(), reason="no /proc on this system")


def test_this_process_is_listed_with_its_parent_group_and_cpu_time():
    sum(i * i for i in range(200_000))  # some CPU time of our own
    me = next(p for p in procfs.processes() if p.pid == os.getpid())

    assert (me.ppid, me.pgrp) == (os.getppid(), os.getpgrp())
    assert me.state != "Z" and me.cpu_seconds > 0
    assert os.path.basename(sys.executable) in procfs.cmdline(os.getpid())


def test_a_process_that_is_gone_has_no_command_line():
    assert procfs.cmdline(2**22 + 12345) == ""
