"""`bench load`: the real server under a tiny load, its report, and the loopback-only rule."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory.models import App


def test_a_non_loopback_host_is_refused_before_anything_starts(tmp_path):
    out = tmp_path / "load.json"
    with pytest.raises(CommandError, match="not a loopback address"):
        call_command("bench", "load", "--host", "10.1.2.3", "--json", str(out), stdout=StringIO())

    assert not out.exists()


@pytest.mark.slow
@pytest.mark.django_db
def test_a_tiny_run_reports_every_phase_and_endpoint_without_errors(tmp_path):
    out = tmp_path / "load.json"
    stdout = StringIO()

    call_command(
        "bench",
        "load",
        *("--duration", "1.5", "--concurrency", "2", "--notes", "40", "--subjects", "2"),
        *("--json", str(out)),
        stdout=stdout,
    )

    summary = json.loads(out.read_text())
    assert summary["layout"] == "embedded" and summary["concurrency"] == 2
    assert summary["errors"] == 0
    baseline, mixed = summary["phases"]["baseline"], summary["phases"]["mixed"]
    assert set(baseline["endpoints"]) == {"GET consent/categories"}
    assert set(mixed["endpoints"]) <= {"POST context", "POST messages", "POST responses"}
    assert "POST context" in mixed["endpoints"]
    for phase in (baseline, mixed):
        assert phase["requests"] > 0 and phase["errors"] == 0 and phase["error_samples"] == []
        assert phase["requests"] == sum(e["requests"] for e in phase["endpoints"].values())
        assert phase["p50"] <= phase["p95"] <= phase["p99"]
        assert phase["server_cpu_s"]["web"] > 0
    text = stdout.getvalue()
    assert "POST context" in text and "req/s" in text
    assert not App.objects.exists()  # its own stack: the configured database is untouched
