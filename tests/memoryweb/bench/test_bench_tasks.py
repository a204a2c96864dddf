"""`bench tasks`: a real worker on a temporary broker; a reflect-queue task overtakes a backlog."""

import json
from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.slow  # starts a real worker
def test_bench_tasks_runs_every_task_and_the_reflect_probe_overtakes_the_backlog(tmp_path):
    out = tmp_path / "tasks.json"
    stdout = StringIO()
    # one process, tasks of a second each: the backlog is still there when the probe is sent
    call_command(
        "bench", "tasks", "--tasks", "30", "--behind", "4", "--work-ms", "2000", "--concurrency", "1",
        "--json", str(out), stdout=stdout,
    )  # fmt: skip
    summary = json.loads(out.read_text())
    assert summary["tasks"] == 30 and summary["tasks_per_s"] > 0
    reflect, background = summary["probes"]
    assert reflect["queue"] == "reflect" and background["queue"] == "background"
    assert reflect["overtook"] >= 1 and reflect["ran_meanwhile"] <= 1, summary  # only the one running
    assert background["overtook"] == 0, summary  # a FIFO queue: all of them first
    assert "trivial tasks/s" in stdout.getvalue()
