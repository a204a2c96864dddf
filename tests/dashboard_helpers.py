"""Fixtures and helpers for dashboard tests.

tests/conftest.py loads them (`pytest_plugins`), so every test module can use the fixtures.

- `owner` owns the conftest `subject` ("alice"); `owner_client` is logged in as them.
- `stranger` owns another subject (`stranger_subject`, in another app) and nothing else;
  `stranger_client` is logged in as them: every URL of alice's must answer 404.
- `staff_client`: a staff user who owns nothing but may open every subject.
- `hx(client, method, url, data)`: the request as htmx sends it (HX-Request header).
"""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.factories import AppFactory, SubjectFactory

PASSWORD = "correct horse battery staple"


def make_user(username: str, *, is_staff: bool = False):
    return get_user_model().objects.create_user(username=username, password=PASSWORD, is_staff=is_staff)


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def hx(client: Client, method: str, url: str, data: dict | None = None, **headers):
    """Send `method` to `url` as htmx does (it then answers a fragment)."""
    send = getattr(client, method.lower())
    return send(url, data or {}, headers={"HX-Request": "true", **headers})


@pytest.fixture
def owner(db):
    return make_user("alice-login")


@pytest.fixture
def owned_subject(subject, owner):
    subject.owner = owner
    subject.display_name = "Alice"
    subject.save(update_fields=["owner", "display_name"])
    return subject


@pytest.fixture
def owner_client(owner, owned_subject) -> Client:
    return logged_in(owner)


@pytest.fixture
def stranger(db):
    return make_user("bob-login")


@pytest.fixture
def stranger_subject(stranger):
    return SubjectFactory(app=AppFactory(name="bobs-app"), external_id="bob", owner=stranger)


@pytest.fixture
def stranger_client(stranger, stranger_subject) -> Client:
    return logged_in(stranger)


@pytest.fixture
def staff_user(db):
    return make_user("operator", is_staff=True)


@pytest.fixture
def staff_client(staff_user) -> Client:
    return logged_in(staff_user)


@pytest.fixture
def web_client() -> Client:
    """Not logged in."""
    return Client()
