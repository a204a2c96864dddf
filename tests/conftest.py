import os

# The suite runs without vectors unless a test asks for them (an App config naming provider
# "local", or a recorded wire): the shipped default (local, when installed) would embed every
# note of every test and make full-text ranking tests depend on the model. Processes the tests
# start inherit this; tests/memory/test_config.py checks the shipped default itself.
os.environ.setdefault("MEMORY__EMBEDDINGS__PROVIDER", "none")

import pytest  # noqa: E402
from django.db import connection
from rest_framework.test import APIClient

from memory.config import get_config, reset_cache
from memory.services import Actor, api_key_create
from tests.factories import AppFactory, SubjectFactory
from tests.support import in_ci, redis_unreachable

# owner_client, stranger_client, staff_client, … for the dashboard tests
pytest_plugins = ["tests.dashboard_helpers"]


def _postgres_unreachable_reason() -> str | None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        return None
    try:
        import psycopg

        from memoryweb.settings import parse_database_url

        db = parse_database_url(url)
        psycopg.connect(
            host=db["HOST"],
            port=db["PORT"] or 5432,
            user=db["USER"] or None,
            dbname=db["NAME"],
            connect_timeout=3,
        ).close()
    except Exception as exc:
        return f"PostgreSQL at {url} is not reachable: {exc}"
    return None


def pytest_collection_modifyitems(config, items):
    # A transactional test without serialized_rollback flushes the database and lets Django
    # recreate content types with new ids; the next serialized test then fails to restore
    # (UNIQUE constraint on django_content_type), and the seeded consent categories are gone.
    for item in items:
        marker = item.get_closest_marker("django_db")
        if marker and marker.kwargs.get("transaction") and not marker.kwargs.get("serialized_rollback"):
            raise pytest.UsageError(
                f"{item.nodeid}: use @pytest.mark.django_db(transaction=True, serialized_rollback=True)"
            )
    if os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        # what starts its own stack on its own database runs the same whatever DATABASE_URL says:
        # the SQLite pass ran it, so the PostgreSQL pass does not run it twice
        again = pytest.mark.skip(
            reason="own_stack: its own database, whatever DATABASE_URL says; the SQLite pass ran it"
        )
        for item in items:
            if item.get_closest_marker("own_stack"):
                item.add_marker(again)
    reason = _postgres_unreachable_reason()
    if reason and in_ci():
        raise pytest.UsageError(f"CI is set, so the PostgreSQL pass must run, but {reason}")
    if reason:
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            item.add_marker(skip)


@pytest.fixture
def redis_server():
    """A Redis server on 127.0.0.1:6379: skips without one, except in CI, where that fails."""
    reason = redis_unreachable()
    if reason and in_ci():
        pytest.fail(f"CI is set, so the Redis-backed tests must run, but {reason}", pytrace=False)
    if reason:
        pytest.skip(reason)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Logins in tests hash with MD5: the production hasher spends about a second per password
    by design, which the dashboard tests paid once per login fixture."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _own_cache(settings, request):
    """Each test counts rate limits and sign-in failures in a cache of its own: the configured
    one is on disk (var/cache/) and outlives the test run."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": request.node.nodeid,
        }
    }


@pytest.fixture(autouse=True)
def _fresh_config():
    reset_cache()
    yield
    reset_cache()


@pytest.fixture
def actor():
    return Actor.system("test")


@pytest.fixture
def app(db):
    return AppFactory()


@pytest.fixture
def subject(app):
    return SubjectFactory(app=app, external_id="alice")


@pytest.fixture
def config(app):
    return get_config(app)


@pytest.fixture
def api_key(app, actor):
    _, raw = api_key_create(app=app, actor=actor)
    return raw


@pytest.fixture
def client(api_key):
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key}")
    return c


@pytest.fixture
def anon_client():
    return APIClient()


@pytest.fixture
def other_app(db):
    return AppFactory(name="other-app")


@pytest.fixture
def other_client(other_app, actor):
    _, raw = api_key_create(app=other_app, actor=actor)
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return c


@pytest.fixture(scope="session")
def minilm():
    """The local embedding model, loaded (and sha256-checked) once for the whole session."""
    from memory.embeddings.local import local_embedder

    embedder = local_embedder()
    embedder.load()
    return embedder


@pytest.fixture
def eager_tasks():
    """Celery runs a task in-process when it is started (after the commit that starts it)."""
    from memoryweb.celery import app as celery_app

    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


@pytest.fixture
def openai_wire(monkeypatch):
    """Every LLM client talks to a fake OpenAI (tests/llm_wire.py) instead of the network."""
    import httpx2

    from memoryweb.llm import set_http_client_factory
    from tests.llm_wire import Wire

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    wire = Wire()
    previous = set_http_client_factory(
        lambda spec: httpx2.Client(transport=httpx2.MockTransport(wire.handler))
    )
    yield wire
    set_http_client_factory(previous)


@pytest.fixture
def vendor():
    return connection.vendor


@pytest.fixture
def summaries(subject, actor):
    """The subject with one session extraction, a MEMORY.md, a summary and the built-in mental
    models; returns the extraction's conversation."""
    from chat.summaries.mental_models import mental_models_seed
    from memory.documents import SUMMARY_MD
    from memory.services.documents import document_write
    from tests.factories import extraction_for

    conversation = extraction_for(
        subject,
        scope="billing-api",
        title="Webhook retries",
        raw_memory="### Decisions\n- Retries back off exponentially.",
    ).conversation
    document_write(subject=subject, path="MEMORY.md", content="# Memory\n- Retries back off.", actor=actor)
    document_write(subject=subject, path=SUMMARY_MD, content="Billing: retries back off.", actor=actor)
    mental_models_seed(subject=subject, actor=actor)
    return conversation
