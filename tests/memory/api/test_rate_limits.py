"""Rate limits per API key: 429 with Retry-After and the error envelope, the key's own limit or
the installation's default, counted per key in the shared cache."""

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from memory.models import ApiKey, App, AuditEvent
from memory.services import api_key_create
from memory.services.apps import api_key_rate_limit_set
from memoryweb.errors import InvalidInput
from memoryweb.ratelimit import Rate, parse_rate, window_hit

PROFILE = "/api/v1/subjects/alice/profile"
# the start of a minute, so a test's requests fall in one window
T0 = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)


def _client(raw_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    return client


def test_the_default_limit_answers_429_with_retry_after_and_the_envelope(settings, subject, client):
    settings.MEMORYWEB_API_RATE_LIMIT = "3/minute"
    with time_machine.travel(T0.replace(second=20), tick=False):
        statuses = [client.get(PROFILE).status_code for _ in range(3)]
        refused = client.get(PROFILE)

    assert statuses == [200, 200, 200]
    assert refused.status_code == 429
    assert refused["Retry-After"] == "40"  # the window ends at 09:01:00
    assert refused.json()["error"]["code"] == "throttled"
    assert "40 seconds" in refused.json()["error"]["message"]


def test_the_next_window_serves_again(settings, subject, client):
    settings.MEMORYWEB_API_RATE_LIMIT = "2/minute"
    with time_machine.travel(T0, tick=False) as clock:
        assert [client.get(PROFILE).status_code for _ in range(3)] == [200, 200, 429]
        clock.move_to(T0.replace(minute=1))
        assert client.get(PROFILE).status_code == 200


def test_a_keys_own_limit_overrides_the_default(settings, app, subject, actor):
    settings.MEMORYWEB_API_RATE_LIMIT = "100/minute"
    _, raw = api_key_create(app=app, rate_limit="1/minute", actor=actor)
    with time_machine.travel(T0, tick=False):
        assert [_client(raw).get(PROFILE).status_code for _ in range(2)] == [200, 429]


def test_each_key_has_its_own_count(settings, app, subject, client, actor):
    settings.MEMORYWEB_API_RATE_LIMIT = "1/minute"
    _, second = api_key_create(app=app, actor=actor)
    with time_machine.travel(T0, tick=False):
        assert client.get(PROFILE).status_code == 200
        assert client.get(PROFILE).status_code == 429
        assert _client(second).get(PROFILE).status_code == 200


def test_off_lifts_the_limit(settings, app, subject, actor):
    settings.MEMORYWEB_API_RATE_LIMIT = "1/minute"
    _, raw = api_key_create(app=app, rate_limit="off", actor=actor)
    with time_machine.travel(T0, tick=False):
        assert {_client(raw).get(PROFILE).status_code for _ in range(5)} == {200}


def test_a_refused_request_writes_nothing(settings, subject, client):
    settings.MEMORYWEB_API_RATE_LIMIT = "1/minute"
    with time_machine.travel(T0, tick=False):
        client.post(PROFILE, {"key": "city", "value": "Lyon"}, format="json")
        refused = client.post(PROFILE, {"key": "city", "value": "Porto"}, format="json")

    assert refused.status_code == 429
    assert list(subject.facts.values_list("value", flat=True)) == ["Lyon"]


def test_requests_without_a_key_get_401_not_429(settings, subject, anon_client):
    settings.MEMORYWEB_API_RATE_LIMIT = "1/minute"
    assert [anon_client.get(PROFILE).status_code for _ in range(3)] == [401, 401, 401]


@pytest.mark.parametrize(
    "text, rate",
    [
        ("600/minute", Rate(600, 60)),
        ("10/s", Rate(10, 1)),
        ("1000/hour", Rate(1000, 3600)),
        ("5/day", Rate(5, 86400)),
        ("100/5m", Rate(100, 300)),
        ("off", None),
    ],
)
def test_rates_parse(text, rate):
    assert parse_rate(text) == rate


@pytest.mark.parametrize("text", ["", "600", "0/minute", "ten/minute", "5/fortnight", "5/0m"])
def test_bad_rates_are_refused(text):
    with pytest.raises(ValueError, match="N/minute"):
        parse_rate(text)


def test_a_bad_key_rate_limit_is_refused_by_name(app, actor):
    with pytest.raises(InvalidInput) as error:
        api_key_create(app=app, rate_limit="lots", actor=actor)
    assert error.value.field == "rate_limit"
    assert not ApiKey.objects.filter(app=app).exists()


def test_setting_a_keys_rate_limit_is_audited_once(app, actor):
    key, _ = api_key_create(app=app, actor=actor)
    api_key_rate_limit_set(key=key, rate_limit="10/minute", actor=actor)
    api_key_rate_limit_set(key=key, rate_limit="10/minute", actor=actor)

    key.refresh_from_db()
    assert key.rate_limit == "10/minute"
    assert AuditEvent.objects.filter(action="api_key.rate_limit_set", object_id=key.prefix).count() == 1


def test_createapp_sets_the_keys_rate_limit(db, capsys):
    call_command("createapp", "limited", "--rate-limit", "30/minute")
    assert ApiKey.objects.get(app__name="limited").rate_limit == "30/minute"


def test_createapp_with_a_bad_rate_limit_leaves_no_app(db):
    with pytest.raises(CommandError, match="not a rate"):
        call_command("createapp", "limited", "--rate-limit", "lots")
    assert not App.objects.filter(name="limited").exists()


def test_a_bad_default_rate_stops_start_up(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
            "DJANGO_SETTINGS_MODULE": "memoryweb.settings",
            "MEMORYWEB_VAR_DIR": str(tmp_path),
            "MEMORYWEB_API_RATE_LIMIT": "lots",
        },
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "MEMORYWEB_API_RATE_LIMIT" in result.stderr and "not a rate" in result.stderr


def test_the_configured_cache_shares_counts_between_processes(settings, tmp_path):
    """The store settings.py configures (files under var/cache/ without Redis) is one count for
    every process: a hit in another process counts here."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(tmp_path / "cache"),
        }
    }
    rate = Rate(limit=2, period=3600)
    now = 1_800_000_000.0  # one window, whatever the clock says
    script = (
        "import django; django.setup()\n"
        "from memoryweb.ratelimit import Rate, window_hit\n"
        f"print(window_hit('shared', Rate(2, 3600), now={now}).count)\n"
    )
    other = subprocess.run(
        [sys.executable, "-c", script],
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
            "DJANGO_SETTINGS_MODULE": "memoryweb.settings",
            "MEMORYWEB_VAR_DIR": str(tmp_path),
        },
        capture_output=True,
        text=True,
        check=True,
    )
    assert other.stdout.strip() == "1"
    assert window_hit("shared", rate, now=now).count == 2
    assert window_hit("shared", rate, now=now).allowed is False


def _file_cache(settings, tmp_path):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(tmp_path / "cache"),
        }
    }
    return tmp_path / "cache" / "windows"


def test_the_file_cache_counts_every_hit_of_processes_racing_exactly(settings, tmp_path):
    """The window counter of the file cache is one appended byte per hit: four processes hitting
    at once lose none (the cache's own incr, a read then a rewrite, could count two as one)."""
    _file_cache(settings, tmp_path)
    now = 1_800_000_000.0
    script = (
        "import django; django.setup()\n"
        "from memoryweb.ratelimit import Rate, window_hit\n"
        f"for _ in range(50): window_hit('race', Rate(10_000, 3600), now={now})\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
        "DJANGO_SETTINGS_MODULE": "memoryweb.settings",
        "MEMORYWEB_VAR_DIR": str(tmp_path),
    }
    racers = [subprocess.Popen([sys.executable, "-c", script], env=env) for _ in range(4)]
    assert [racer.wait(timeout=120) for racer in racers] == [0, 0, 0, 0]

    assert window_hit("race", Rate(10_000, 3600), now=now).count == 201


def test_a_new_window_sweeps_the_counters_of_windows_long_over(settings, tmp_path):
    import os

    windows = _file_cache(settings, tmp_path)
    rate = Rate(limit=5, period=60)
    assert window_hit("old", rate, now=1_800_000_000.0).count == 1
    assert window_hit("recent", rate, now=1_800_000_000.0).count == 1
    old = sorted(windows.iterdir())[0]  # one of the two: its last hit an hour ago
    stale = old.stat().st_mtime - 3600
    os.utime(old, (stale, stale))
    kept = {path.name for path in windows.iterdir()} - {old.name}

    assert window_hit("new", rate, now=1_800_000_120.0).count == 1  # a new window's first hit

    names = {path.name for path in windows.iterdir()}
    assert old.name not in names  # its last hit is older than its timeout (61 s)
    assert kept <= names and len(names) == len(kept) + 1
