"""Rotating an app's API key: a new key at once, the old ones working beside it until the
overlap ends and refused after; through the service and `manage.py rotatekey`."""

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from memory.models import ApiKey, AuditEvent
from memory.services import api_key_create
from memory.services.apps import api_key_rotate
from memoryweb.errors import InvalidInput

PROFILE = "/api/v1/subjects/alice/profile"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _status(raw_key: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    return client.get(PROFILE).status_code


def test_the_old_key_works_until_the_overlap_ends_then_is_refused(app, subject, api_key, actor):
    with time_machine.travel(T0, tick=False) as clock:
        rotation = api_key_rotate(app=app, overlap=timedelta(hours=2), actor=actor)
        assert (_status(api_key), _status(rotation.raw_key)) == (200, 200)

        clock.move_to(T0 + timedelta(hours=2) - timedelta(seconds=1))
        assert _status(api_key) == 200

        clock.move_to(T0 + timedelta(hours=2))
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key}")
        refused = client.get(PROFILE)
        assert refused.status_code == 401
        assert "rotated and expired at 2026-03-02T11:00:00Z" in refused.json()["error"]["message"]
        assert _status(rotation.raw_key) == 200

    old = ApiKey.objects.get(prefix=api_key.split("_")[1])
    assert old.expires_at == T0 + timedelta(hours=2) and old.revoked_at is None
    assert rotation.expiring == [old.prefix] and rotation.revoked == []


def test_the_default_overlap_comes_from_the_settings(app, subject, api_key, actor, settings):
    settings.MEMORYWEB_API_KEY_OVERLAP = 600
    with time_machine.travel(T0, tick=False):
        rotation = api_key_rotate(app=app, actor=actor)
    assert rotation.expires_at == T0 + timedelta(seconds=600)
    assert ApiKey.objects.get(prefix=api_key.split("_")[1]).expires_at == rotation.expires_at


def test_an_overlap_of_zero_revokes_at_once(app, subject, api_key, actor):
    rotation = api_key_rotate(app=app, overlap=timedelta(0), actor=actor)
    assert (_status(api_key), _status(rotation.raw_key)) == (401, 200)
    assert rotation.revoked == [api_key.split("_")[1]]


def test_rotating_twice_keeps_the_first_keys_earlier_end(app, api_key, actor):
    with time_machine.travel(T0, tick=False) as clock:
        first = api_key_rotate(app=app, overlap=timedelta(hours=1), actor=actor)
        clock.move_to(T0 + timedelta(minutes=30))
        second = api_key_rotate(app=app, overlap=timedelta(hours=1), actor=actor)

    original = ApiKey.objects.get(prefix=api_key.split("_")[1])
    assert original.expires_at == T0 + timedelta(hours=1)
    assert first.key.prefix in second.expiring
    assert ApiKey.objects.get(pk=first.key.pk).expires_at == T0 + timedelta(minutes=90)
    assert ApiKey.objects.usable(T0 + timedelta(minutes=95)).filter(app=app).get() == second.key


def test_an_expired_key_is_not_rotated_again(app, api_key, actor):
    with time_machine.travel(T0, tick=False) as clock:
        api_key_rotate(app=app, overlap=timedelta(minutes=5), actor=actor)
        clock.move_to(T0 + timedelta(hours=1))
        rotation = api_key_rotate(app=app, overlap=timedelta(hours=1), actor=actor)
    assert api_key.split("_")[1] not in rotation.expiring
    assert ApiKey.objects.get(prefix=api_key.split("_")[1]).expires_at == T0 + timedelta(minutes=5)


def test_the_new_key_inherits_the_rate_limit(app, actor):
    api_key_create(app=app, rate_limit="30/minute", actor=actor)
    assert api_key_rotate(app=app, actor=actor).key.rate_limit == "30/minute"


def test_a_negative_overlap_is_refused_by_name(app, api_key, actor):
    with pytest.raises(InvalidInput) as error:
        api_key_rotate(app=app, overlap=timedelta(seconds=-1), actor=actor)
    assert error.value.field == "overlap"
    assert ApiKey.objects.filter(app=app).count() == 1


def test_rotation_is_audited(app, api_key, actor):
    with time_machine.travel(T0, tick=False):
        rotation = api_key_rotate(app=app, overlap=timedelta(hours=1), actor=actor)
    event = AuditEvent.objects.get(action="api_key.rotated", app=app)
    assert event.object_id == rotation.key.prefix
    assert event.data == {
        "revoked": [],
        "expiring": [api_key.split("_")[1]],
        "expires_at": "2026-03-02T10:00:00+00:00",
    }


def test_rotatekey_prints_the_new_key_once_and_when_the_old_ones_stop(app, subject, api_key):
    out = StringIO()
    with time_machine.travel(T0, tick=False):
        call_command("rotatekey", app.name, "--overlap", "3600", stdout=out)
        text = out.getvalue()
        raw_key = text.split("store it now): ")[1].split()[0]
        assert (_status(api_key), _status(raw_key)) == (200, 200)

    assert ApiKey.objects.get(prefix=raw_key.split("_")[1]).key_hash == ApiKey.hash_secret(raw_key)
    assert f"old keys {api_key.split('_')[1]} keep working until 2026-03-02 10:00:00 UTC" in text


def test_rotatekey_with_no_overlap_revokes_now(app, subject, api_key):
    out = StringIO()
    call_command("rotatekey", app.name, "--overlap", "0", stdout=out)
    assert "revoked now" in out.getvalue()
    assert _status(api_key) == 401


def test_rotatekey_refuses_an_unknown_app_and_a_negative_overlap(app):
    with pytest.raises(CommandError, match="no app named 'nope'"):
        call_command("rotatekey", "nope")
    with pytest.raises(CommandError, match="negative"):
        call_command("rotatekey", app.name, "--overlap", "-5")
    assert not ApiKey.objects.filter(app=app).exists()
