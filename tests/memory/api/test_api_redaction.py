"""No secret a request brings in is kept: the corpus of tests/memory/secret_corpus.py goes
through every endpoint of the sidecar (the table of test_api_auth.py), in bodies and query
strings, with background tasks run as they are started; then every text column of every
table, every log line and every task's arguments are searched for each secret."""

import io
import json
import logging
from urllib.parse import quote, quote_plus, urlencode

import pytest
from celery.signals import before_task_publish, task_prerun
from django.apps import apps
from django.conf import settings

from memoryweb.models import Counter
from tests.memory.api.test_api_auth import API, ENDPOINTS, _fill, world  # noqa: F401  (a fixture)
from tests.memory.secret_corpus import SECRETS

# the body fields that carry free text; the others (ids, enums, item refs) stay valid
TEXT_FIELDS = {"message", "text", "value", "content", "title", "external_id"}
# deleting the subject would erase what the scan looks for; its path carries no text
SKIPPED = {"subject-delete"}
CHUNK_CHARS = 180  # a procedure's title takes 200


def chunks() -> list[str]:
    """The corpus in pieces short enough for every text field."""
    out: list[str] = []
    for text, _ in SECRETS:
        if out and len(out[-1]) + len(text) + 3 <= CHUNK_CHARS:
            out[-1] += " ; " + text
        else:
            out.append(text)
    return out


def with_secrets(method, path, body, chunk):
    if body is not None:
        body = {k: f"{v} {chunk}" if k in TEXT_FIELDS else v for k, v in body.items()}
    if "query=" in path:
        base, _, _ = path.partition("?")
        path = f"{base}?{urlencode({'query': chunk})}"
    return method, path, body


@pytest.fixture
def log_lines():
    """What the console handler of settings' LOGGING writes, with its formatter."""
    console = next(h for h in logging.getLogger().handlers if h.get_name() == "console")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(console.formatter)
    root = logging.getLogger()
    root.addHandler(handler)
    yield stream
    root.removeHandler(handler)


@pytest.fixture
def task_messages():
    """The serialized arguments of every task started (eager or sent to the broker)."""
    sent: list[str] = []

    def on_prerun(task_id=None, task=None, args=None, kwargs=None, **_):
        sent.append(json.dumps([task.name, args, kwargs], default=str))

    def on_publish(body=None, headers=None, **_):
        sent.append(json.dumps([headers, body], default=str))

    task_prerun.connect(on_prerun, weak=False)
    before_task_publish.connect(on_publish, weak=False)
    yield sent
    task_prerun.disconnect(on_prerun)
    before_task_publish.disconnect(on_publish)


def database_text() -> list[str]:
    """Every row of every model (auto-created through tables too), as text."""
    rows = []
    for model in apps.get_models(include_auto_created=True):
        columns = [f.attname for f in model._meta.concrete_fields]
        rows.extend(repr(row) for row in model._base_manager.values_list(*columns))
    return rows


def broker_text() -> list[str]:
    return [path.read_text(errors="replace") for path in settings.BROKER_DIR.rglob("*") if path.is_file()]


def found(secret: str, texts) -> list[str]:
    forms = {secret, quote(secret), quote_plus(secret), json.dumps(secret)[1:-1]}
    return [text[:200] for text in texts if any(form in text for form in forms)]


@pytest.mark.slow
@pytest.mark.django_db
def test_no_secret_sent_to_any_endpoint_is_stored_logged_or_queued(
    client,
    world,  # noqa: F811
    eager_tasks,
    log_lines,
    task_messages,
    django_capture_on_commit_callbacks,
):
    statuses: dict[str, set[int]] = {}

    def send(name, chunk):
        method, path, body = with_secrets(*ENDPOINTS[name][1:], chunk)
        with django_capture_on_commit_callbacks(execute=True):
            url = API + _fill(path, world)
            call = getattr(client, method)
            response = call(url) if body is None else call(url, _fill(body, world), format="json")
        statuses.setdefault(name, set()).add(response.status_code)

    # the deletes once, at the end, so every piece finds the objects of the others
    names = [name for name in ENDPOINTS if name not in SKIPPED]
    deletes = [name for name in names if ENDPOINTS[name][1] == "delete"]
    for chunk in chunks():
        for name in names:
            if name not in deletes:
                send(name, chunk)
    for name in deletes:
        send(name, chunks()[0])

    # the secrets reached the places they could be kept: messages, notes, facts, context builds
    assert statuses["messages-post"] == {201} and statuses["notes-store"] == {201}
    assert statuses["note-edit"] == statuses["context"] == statuses["notes-recall"] == {200}
    assert statuses["profile-set"] == {201} and statuses["lesson-edit"] == {200}
    logs = log_lines.getvalue()
    assert "/subjects/alice/notes?query=" in logs
    texts = database_text()
    leaks = {
        secret: where
        for _, secret in SECRETS
        for where in [
            found(secret, texts)
            + found(secret, logs.splitlines())
            + found(secret, task_messages)
            + found(secret, broker_text())
        ]
        if where
    }
    assert leaks == {}
    assert "[REDACTED:url_password]" in logs  # the access line, with the query's secret replaced
    assert Counter.objects.get(name="redaction.request").value >= len(SECRETS)
