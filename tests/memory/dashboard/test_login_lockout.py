"""Sign-in lockout on the dashboard (and the admin): N failures for a username or from an IP
address within the window lock it out for the cool-down; a successful sign-in resets."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from tests.dashboard_helpers import PASSWORD, make_user

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.MEMORYWEB_LOGIN_FAILURES = 3
    settings.MEMORYWEB_LOGIN_IP_FAILURES = 5
    settings.MEMORYWEB_LOGIN_WINDOW = 600
    settings.MEMORYWEB_LOGIN_COOLDOWN = 900


def _sign_in(username: str, password: str, ip: str = "203.0.113.7", client: Client | None = None):
    client = client or Client()
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip)


def _signed_in(response) -> bool:
    return response.status_code == 302 and "_auth_user_id" in response.client.session


def test_the_third_failure_locks_the_username_out_even_with_the_right_password(owner):
    with time_machine.travel(T0, tick=False):
        first = _sign_in(owner.username, "nope")
        _sign_in(owner.username, "nope")
        third = _sign_in(owner.username, "nope")
        locked = _sign_in(owner.username, PASSWORD)

    assert first.status_code == 200
    assert b"Please enter a correct username and password" in first.content
    assert third.status_code == 429
    assert locked.status_code == 429
    assert locked["Retry-After"] == "900"
    assert b"Too many failed sign-ins. Try again in 15 minutes." in locked.content
    assert "_auth_user_id" not in locked.client.session


def test_the_lockout_ends_after_the_cool_down(owner):
    with time_machine.travel(T0, tick=False) as clock:
        for _ in range(3):
            _sign_in(owner.username, "nope")
        clock.move_to(T0 + timedelta(seconds=899))
        assert _sign_in(owner.username, PASSWORD).status_code == 429
        clock.move_to(T0 + timedelta(seconds=900))
        assert _signed_in(_sign_in(owner.username, PASSWORD))


def test_a_successful_sign_in_resets_the_failures(owner):
    with time_machine.travel(T0, tick=False):
        _sign_in(owner.username, "nope")
        _sign_in(owner.username, "nope")
        assert _signed_in(_sign_in(owner.username, PASSWORD))
        _sign_in(owner.username, "nope")
        _sign_in(owner.username, "nope")
        assert _signed_in(_sign_in(owner.username, PASSWORD))


def test_failures_outside_the_window_do_not_add_up(owner):
    with time_machine.travel(T0, tick=False) as clock:
        _sign_in(owner.username, "nope")
        _sign_in(owner.username, "nope")
        clock.move_to(T0 + timedelta(seconds=601))
        _sign_in(owner.username, "nope")
        assert _signed_in(_sign_in(owner.username, PASSWORD))


def test_the_username_is_locked_out_from_every_address_and_other_users_are_not(owner, stranger):
    with time_machine.travel(T0, tick=False):
        for _ in range(3):
            _sign_in(owner.username, "nope", ip="198.51.100.1")
        assert _sign_in(owner.username.upper(), PASSWORD, ip="198.51.100.2").status_code == 429
        assert _signed_in(_sign_in(stranger.username, PASSWORD, ip="198.51.100.2"))


def test_one_address_guessing_many_usernames_is_locked_out(db):
    victims = [make_user(f"user-{i}") for i in range(6)]
    with time_machine.travel(T0, tick=False):
        for victim in victims[:5]:
            _sign_in(victim.username, "nope", ip="192.0.2.9")
        assert _sign_in(victims[5].username, PASSWORD, ip="192.0.2.9").status_code == 429
        assert _signed_in(_sign_in(victims[5].username, PASSWORD, ip="192.0.2.10"))


def test_the_admin_sign_in_is_locked_out_too(db):
    admin = make_user("root", is_staff=True)
    url = reverse("admin:login")
    with time_machine.travel(T0, tick=False):
        for _ in range(3):
            Client().post(url, {"username": admin.username, "password": "nope"}, REMOTE_ADDR="192.0.2.1")
        locked = Client().post(
            url, {"username": admin.username, "password": PASSWORD}, REMOTE_ADDR="192.0.2.1"
        )

    assert b"Too many failed sign-ins" in locked.content
    assert "_auth_user_id" not in locked.client.session
