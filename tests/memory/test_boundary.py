"""The redaction boundary (memory/boundary.py): form fields, query strings and websocket
messages arrive redacted; the sign-in password does not; log lines carry no secret."""

import io
import logging
from urllib.parse import quote_plus

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from memory.models import Message, ProfileFact, RetrievalEvent
from memory.redaction import RedactingFormatter
from memoryweb.management.commands.runall import web_argv
from memoryweb.models import Counter
from tests.chat.test_playground import converse, in_memory_layer, playground_socket  # noqa: F401
from tests.dashboard_helpers import make_user
from tests.factories import SubjectFactory

STRIPE = "sk_live_Zt8Qw2Er4Ty6Ui8Op0As"
REDIS = "redis://:Rz9pQ2wX7v@cache.internal:6379/0"


def test_a_form_field_is_redacted_before_the_view_reads_it(owned_subject, owner_client):
    url = reverse("dashboard:fact_add", args=[owned_subject.pk])

    response = owner_client.post(
        url, {"key": "billing", "value": "card on file", "keywords": f"stripe {STRIPE}"}
    )

    assert response.status_code == 302
    fact = ProfileFact.objects.get(subject=owned_subject, key="billing")
    assert fact.keywords == ["stripe [redacted:stripe_key]"]  # keywords are kept lower-case
    assert Counter.objects.get(name="redaction.request").value == 1


def test_a_query_string_value_is_redacted_before_the_view_reads_it(owned_subject, owner_client):
    response = owner_client.get(reverse("dashboard:notes", args=[owned_subject.pk]), {"q": REDIS})

    assert response.wsgi_request.GET["q"] == "redis://:[REDACTED:url_password]@cache.internal:6379/0"
    assert "Rz9pQ2wX7v" not in response.wsgi_request.get_full_path()
    assert "Rz9pQ2wX7v" not in response.content.decode()


@pytest.mark.django_db
def test_a_password_that_looks_like_a_secret_still_signs_in():
    password = f"password: {STRIPE}"
    get_user_model().objects.create_user(username="sam", password=password)

    response = Client().post(reverse("login"), {"username": "sam", "password": password})

    assert response.status_code == 302 and response["Location"] == reverse("dashboard:home")


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_websocket_message_is_redacted_before_the_turn_is_built_and_stored(in_memory_layer):  # noqa: F811
    owner = make_user("ana-login")
    subject = SubjectFactory(external_id="ana", owner=owner)

    received = converse(playground_socket(owner, subject.pk), f"the cache is at {REDIS}, remember it")

    assert received[-1]["type"] == "done"
    assert "Rz9pQ2wX7v" not in repr(received)
    event = RetrievalEvent.objects.get(subject=subject)
    assert (
        event.query == "the cache is at redis://:[REDACTED:url_password]@cache.internal:6379/0, remember it"
    )
    assert all("Rz9pQ2wX7v" not in text for text in Message.objects.values_list("text", flat=True))


def _format(message, *args) -> str:
    record = logging.LogRecord("django.channels.server", logging.INFO, __file__, 1, message, args, None)
    return RedactingFormatter("%(name)s: %(message)s").format(record)


def test_a_log_line_with_a_url_encoded_secret_in_its_query_is_redacted():
    path = f"/api/v1/subjects/alice/notes?query={quote_plus(REDIS)}&limit=5"

    line = _format("HTTP GET %s 200 [0.01, 127.0.0.1:5000]", path)

    assert "Rz9pQ2wX7v" not in line
    assert "?query=redis://:[REDACTED:url_password]%40cache.internal:6379/0&limit=5" in line


def test_a_log_line_keeps_an_ordinary_query_and_redacts_secrets_in_the_message():
    assert _format("GET %s", "/notes?q=cat&page=2") == "django.channels.server: GET /notes?q=cat&page=2"
    assert _format("failed with %s", STRIPE) == "django.channels.server: failed with [REDACTED:stripe_key]"


def test_a_traceback_in_a_log_line_is_redacted_too():
    try:
        raise ValueError(f"bad url {REDIS}")
    except ValueError:
        stream = io.StringIO()
        handler = logging.StreamHandler(stream)
        handler.setFormatter(RedactingFormatter("%(message)s"))
        logger = logging.getLogger("tests.boundary")
        logger.addHandler(handler)
        try:
            logger.exception("it failed")
        finally:
            logger.removeHandler(handler)

    assert "Traceback" in stream.getvalue() and "Rz9pQ2wX7v" not in stream.getvalue()


def test_runall_turns_daphnes_raw_access_log_off():
    argv = web_argv("127.0.0.1", 8000)

    assert argv[argv.index("--access-log") + 1] == "/dev/null"
