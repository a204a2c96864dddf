"""The ASGI application (memoryweb/asgi.py) serves HTTP through Django's synchronous chain, run in
one worker thread per request: middleware, authentication and views behave as over WSGI."""

import json

import pytest
from asgiref.sync import async_to_sync
from channels.testing import HttpCommunicator

from memory.models import AuditEvent, Subject
from memoryweb.asgi import application

pytestmark = pytest.mark.django_db(
    transaction=True, serialized_rollback=True
)  # the request runs in a thread of its own


def call(method, path, *, body=b"", headers=()):
    headers = [(b"host", b"testserver"), (b"content-length", str(len(body)).encode()), *headers]
    communicator = HttpCommunicator(application, method, path, body=body, headers=headers)
    response = async_to_sync(communicator.get_response)(timeout=30)
    return response["status"], {k.lower(): v for k, v in response["headers"]}, response["body"]


def bearer(key):
    return (b"authorization", f"Bearer {key}".encode())


def test_an_api_request_is_authenticated_and_served(api_key):
    status, headers, body = call("GET", "/api/v1/consent/categories", headers=[bearer(api_key)])

    assert status == 200
    assert json.loads(body)["categories"]
    assert headers[b"x-frame-options"] == b"DENY"  # the middleware ran on the response


def test_a_request_without_a_key_gets_401(db):
    status, _, body = call("GET", "/api/v1/consent/categories")

    assert status == 401
    assert json.loads(body)["error"]["code"] == "not_authenticated"


def test_a_write_goes_through_and_a_bad_one_names_its_field(api_key, app):
    payload = json.dumps({"subject": "asgi-person", "message": "what do I like?"}).encode()
    headers = [bearer(api_key), (b"content-type", b"application/json")]

    status, _, body = call("POST", "/api/v1/context", body=payload, headers=headers)
    bad, _, error = call("POST", "/api/v1/context", body=b'{"subject": "x"}', headers=headers)

    assert status == 200 and "tail" in json.loads(body)
    assert Subject.objects.filter(app=app, external_id="asgi-person").exists()
    assert bad == 400 and json.loads(error)["error"]["field"] == "message"


def test_a_dashboard_post_without_a_csrf_token_is_refused(db):
    status, _, _ = call(
        "POST",
        "/accounts/login/",
        body=b"username=a&password=b",
        headers=[(b"content-type", b"application/x-www-form-urlencoded")],
    )

    assert status == 403
    assert not AuditEvent.objects.filter(action__startswith="login").exists()


@pytest.mark.postgres
def test_the_web_process_closes_each_database_connection_at_the_end_of_its_request():
    from django.db import connections

    # a connection per request thread: kept open, each would linger until garbage collection
    assert all(connections[alias].settings_dict["CONN_MAX_AGE"] == 0 for alias in connections)
