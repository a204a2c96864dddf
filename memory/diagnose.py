"""`diagnose(app)`: one JSON-able report of what this installation can do and how it is doing.

Read by `manage.py memory diagnose` and the dashboard's jobs page. Reads only; cheap (a few
counts) unless `probe=True`, which embeds one short text to prove the provider answers.
"""

import os
import time

from django.db import connection
from django.db.models import Q

from memory.config import get_config
from memory.embedding_models import model_problem
from memory.embeddings import EmbeddingError, embedding_spec, get_embedder
from memory.models import Embedding, ItemKind, JobRun, Note
from memory.search import vectors
from memory.search.vectors.query import provider_reset
from memoryweb.counters import counter_values
from memoryweb.db.sqlite.base import EXTENSION_STATUS

RECENT_JOBS = 10


def _local_model_status(name: str) -> str:
    """The local model `name`: ready, loaded, or what is missing (without loading onnxruntime)."""
    # imported here: memory.embeddings.local needs the optional `embeddings` extra
    from memory.embeddings.local import local_embedder

    embedder = local_embedder(name)
    if embedder.loaded:
        return "loaded"
    problem = model_problem(embedder.model)
    if problem:
        return f"missing: {problem}"
    try:
        embedder.verify()
    except EmbeddingError as exc:
        return f"error: {exc}"
    return "ready"


def _embeddings(app, *, probe: bool) -> dict:

    config = get_config(app)
    try:
        spec = embedding_spec(config)
    except Exception as exc:
        return {"provider": config["embeddings.provider"], "status": f"misconfigured: {exc}"}
    counters = counter_values("embeddings.")
    report: dict = {
        "enabled": not spec.is_none,
        "provider": spec.provider,
        "model": spec.model,
        "model_id": None if spec.is_none else spec.model_id,
        "failures": counters.get("embeddings.failures", 0),
        "skipped": counters.get("embeddings.skipped", 0),
    }
    if spec.is_none:
        report["status"] = "off"
        return report
    if spec.provider == "local":
        report["status"] = _local_model_status(spec.model)
    else:
        report["base_url"] = spec.base_url
        if spec.api_key_env and not os.environ.get(spec.api_key_env):
            report["status"] = f"error: {spec.api_key_env} is not set"
        else:
            report["status"] = "configured"
    if probe:
        provider_reset()
        started = time.perf_counter()
        try:
            embedder = get_embedder(config)
            assert embedder is not None
            vector = embedder.embed(["diagnose probe"])
            report["status"] = "ok"
            report["dim"] = int(vector.shape[1])
            report["probe_ms"] = round((time.perf_counter() - started) * 1000, 1)
        except Exception as exc:
            report["status"] = f"error: {exc}"

    notes = Note.objects.all()
    stored = Embedding.objects.filter(kind=ItemKind.NOTE, model_id=spec.model_id)
    if app is not None:
        notes = notes.filter(subject__app=app)
        stored = stored.filter(subject__app=app)
    embedded_ids = Embedding.objects.filter(kind=ItemKind.NOTE, model_id=spec.model_id).values("item_id")
    report["vectors_stored"] = stored.count()
    report["notes_missing_vector"] = notes.exclude(pk__in=embedded_ids).count()
    report["search_backend"] = vectors.backend()
    report["index_rows"] = vectors.index_count(spec.model_id)
    return report


def _database() -> dict:

    info: dict = {"vendor": connection.vendor, "vector_search": vectors.backend()}
    if connection.vendor == "sqlite":
        connection.ensure_connection()
        info["sqlite"] = {
            "driver": EXTENSION_STATUS.get("driver"),
            "version": EXTENSION_STATUS.get("sqlite_version"),
            "sqlite_vec": EXTENSION_STATUS.get("vec"),
            "sqlite_vec_error": EXTENSION_STATUS.get("vec_error"),
        }
    else:
        info["pgvector"] = vectors.pgvector_available()
    return info


def _jobs(app) -> list[dict]:

    runs = JobRun.objects.order_by("-started_at")
    if app is not None:
        runs = runs.filter(Q(subject__app=app) | Q(subject__isnull=True))
    return [
        {
            "id": run.pk,
            "kind": run.kind,
            "key": run.key,
            "status": run.status,
            "subject_id": run.subject_id,
            "started_at": run.started_at.isoformat(),
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "stats": run.stats,
            "error": run.error,
        }
        for run in runs[:RECENT_JOBS]
    ]


def _reflection() -> dict:
    """What reflection's per-message caps dropped (counted by chat.reflect, installation-wide:
    the counters are not per app). Each run's own count is in its stats, `dropped`."""

    counters = counter_values("reflection.")
    return {
        "dropped_by_cap": {
            kind: counters.get(f"reflection.dropped.{kind}", 0) for kind in ("facts", "notes")
        },
        "runs_with_drops": counters.get("reflection.runs_with_drops", 0),
        "invalid_operations": counters.get("reflection.invalid_operation", 0),
    }


def diagnose(app=None, *, probe: bool = False) -> dict:
    """What the embeddings, the database, reflection and the background jobs look like, for
    `app` (its configuration and its notes) or the whole installation."""

    return {
        "app": app.name if app is not None else None,
        "embeddings": _embeddings(app, probe=probe),
        "database": _database(),
        "reflection": _reflection(),
        "counters": counter_values(),
        "jobs": _jobs(app),
    }
