"""diagnose() and `manage.py memory reembed|diagnose`."""

import io
import json

import httpx2
import pytest
from django.core.management import CommandError, call_command

from memory.diagnose import diagnose
from memory.embeddings import set_http_client_factory
from memory.models import Embedding, Note
from memory.search import vectors
from memory.search.vectors.query import provider_reset
from memory.services.embeddings import reembed
from memoryweb.counters import counter_add
from tests.embeddings_wire import EmbeddingsWire
from tests.factories import AppFactory, SubjectFactory

LOCAL = {"memory": {"embeddings": {"provider": "local"}}}


@pytest.fixture(autouse=True)
def _fresh_provider_state():
    provider_reset()
    vectors.cache_clear()
    yield
    provider_reset()


@pytest.fixture
def local_app(db, minilm):
    return AppFactory(name="local-app", config=LOCAL)


def notes_for(subject, *texts):
    return Note.objects.bulk_create([Note(subject=subject, content=t) for t in texts])


def test_diagnose_reports_embeddings_off_by_default(db):
    report = diagnose()

    assert report["embeddings"]["status"] == "off" and report["embeddings"]["provider"] == "none"
    assert report["database"]["vendor"] in ("sqlite", "postgresql")
    assert json.loads(json.dumps(report)) == report  # JSON-able as it is


def test_diagnose_counts_vectors_missing_vectors_and_failures(local_app):
    subject = SubjectFactory(app=local_app)
    notes_for(subject, "one note", "another note", "a third")
    reembed(subjects=[subject])
    notes_for(subject, "added later")
    counter_add("embeddings.failures", 2)

    report = diagnose(local_app)["embeddings"]

    assert report["model_id"] == "local/all-MiniLM-L6-v2"
    assert report["vectors_stored"] == 3 and report["notes_missing_vector"] == 1
    assert report["failures"] == 2
    assert report["status"] in ("ready", "loaded")
    if report["search_backend"] != "numpy":
        assert report["index_rows"] == 3


@pytest.mark.django_db(databases=["default"])
def test_diagnose_lists_the_latest_job_runs(local_app):
    from datetime import timedelta

    from django.utils import timezone

    from memory.models import JobRun

    now = timezone.now()
    JobRun.objects.create(
        kind="consolidate",
        key="consolidate:x",
        lease_owner="h:1:t",
        lease_seconds=60,
        lease_expires_at=now + timedelta(minutes=1),
    )

    jobs = diagnose()["jobs"]

    assert jobs[0]["kind"] == "consolidate" and jobs[0]["status"] == "running"


def test_diagnose_probe_reports_an_unreachable_provider(db):
    wire = EmbeddingsWire()
    wire.fail_with = httpx2.ConnectError("connection refused")
    previous = set_http_client_factory(wire.client)
    try:
        app = AppFactory(
            config={
                "memory": {
                    "embeddings": {
                        "provider": "openai-compatible",
                        "baseUrl": "http://127.0.0.1:9",
                        "model": "m",
                    }
                }
            }
        )
        report = diagnose(app, probe=True)["embeddings"]
    finally:
        set_http_client_factory(previous)

    assert report["status"].startswith("error:") and "unreachable" in report["status"]


def test_reembed_backfills_only_what_is_missing_or_changed(local_app):
    subject = SubjectFactory(app=local_app)
    first, second = notes_for(subject, "I adopted a puppy", "I like green tea")
    assert reembed(subjects=[subject])["embedded"] == 2
    Note.objects.filter(pk=second.pk).update(content="I like black coffee")

    result = reembed(subjects=[subject])

    assert (result["embedded"], result["unchanged"], result["errors"]) == (1, 1, [])
    assert Embedding.objects.filter(item_id__in=[first.pk, second.pk]).count() == 2


def test_reembed_skips_apps_with_embeddings_off_and_removes_orphans(local_app):
    off = SubjectFactory(app=AppFactory())
    notes_for(off, "not embedded")
    on = SubjectFactory(app=local_app)
    gone = notes_for(on, "soon gone")[0]
    reembed()
    Note.objects.filter(pk=gone.pk).delete()  # deleted behind the services' back

    result = reembed()

    assert result["subjects"] == 1 and result["orphans_removed"] == 1
    assert not Embedding.objects.exists()


def test_the_reembed_command_draws_a_progress_bar_on_stderr(local_app):
    subject = SubjectFactory(app=local_app, external_id="alice")
    notes_for(subject, "I adopted a puppy", "I like green tea")
    out, err = io.StringIO(), io.StringIO()

    call_command("memory", "reembed", "--subject", "local-app/alice", stdout=out, stderr=err)

    assert json.loads(out.getvalue())["embedded"] == 2
    assert "re-embedding [" in err.getvalue() and "2/2" in err.getvalue()
    assert Embedding.objects.filter(subject=subject).count() == 2


def test_the_reembed_command_needs_a_target(db):
    with pytest.raises(CommandError, match="--all"):
        call_command("memory", "reembed")
    with pytest.raises(CommandError, match="no app named"):
        call_command("memory", "reembed", "--app", "nope")


def test_the_reembed_command_fails_loudly_when_the_provider_does(db):
    wire = EmbeddingsWire()
    wire.fail_with = httpx2.ConnectError("connection refused")
    previous = set_http_client_factory(wire.client)
    app = AppFactory(
        name="remote",
        config={
            "memory": {
                "embeddings": {"provider": "openai-compatible", "baseUrl": "http://127.0.0.1:9", "model": "m"}
            }
        },
    )
    notes_for(SubjectFactory(app=app), "a note")
    try:
        with pytest.raises(CommandError, match="unreachable"):
            call_command("memory", "reembed", "--app", "remote", "--no-progress", stdout=io.StringIO())
    finally:
        set_http_client_factory(previous)


def test_the_diagnose_command_prints_json(db):
    out = io.StringIO()

    call_command("memory", "diagnose", stdout=out)

    assert json.loads(out.getvalue())["embeddings"]["status"] == "off"
