"""`bench context`: ingest throughput and context-build latency at growing note counts.

For each size N an App `bench-context-n<N>-s<S>-seed<seed>` holds N synthetic notes spread
round-robin over S subjects. Most notes are bulk-inserted with `Note.objects.bulk_create`
(the FTS5 triggers, or the PostgreSQL GIN expression index, index every inserted row, so the
search sees exactly what `note_store` would have written, minus versions and audit rows). The
last `ingest_sample` notes, and as many chat messages, go through the real services
(`message_add`, then `note_store` with that message as source, dedup and eviction included),
so the ingest rates are measured on a subject that already holds almost N notes.

A completed fill is marked by an AuditEvent `bench.context.filled`, so a second run at the same
size, subjects and seed reuses it (and reports no ingest rates); a half-filled App is deleted
and filled again.
"""

import contextlib
import itertools
import math
import time
from collections.abc import Callable

import httpx
from django.db import connection, transaction

from chat.services import conversation_get_or_create, message_add
from memory.bench import synthetic
from memory.bench.report import latency_summary, mean, rounded, table
from memory.bench.server import BenchServer, quiet_http_log
from memory.config import get_config
from memory.context import context_build
from memory.models import App, AuditEvent, Note, Origin
from memory.services import Actor, api_key_create, app_create, audit_record, note_store, subject_get_or_create

FILLED = "bench.context.filled"
BULK_BATCH = 5000
WARMUP = 5


def app_name(size: int, subjects: int, seed: int) -> str:
    return f"bench-context-n{size}-s{subjects}-seed{seed}"


def _subjects(app: App, count: int) -> list:
    return [subject_get_or_create(app=app, external_id=f"bench-user-{i}") for i in range(count)]


def _bulk_fill(subjects: list, stream, count: int) -> float:
    """Insert `count` notes from `stream` round-robin over `subjects`; returns seconds taken."""
    started = time.perf_counter()
    done = 0
    while done < count:
        batch = []
        for content, tags, when in itertools.islice(stream, min(BULK_BATCH, count - done)):
            subject = subjects[done % len(subjects)]
            batch.append(
                Note(
                    subject=subject,
                    content=content,
                    tags=tags,
                    occurred_at=when,
                    origin=Origin.IMPORT,
                    created_at=when,
                    updated_at=when,
                )
            )
            done += 1
        if not batch:
            break  # the stream ran dry
        with transaction.atomic():
            Note.objects.bulk_create(batch, batch_size=1000)
    return time.perf_counter() - started


def fill(*, size: int, subjects: int, seed: int, ingest_sample: int, actor: Actor, out: Callable) -> dict:
    """Create and fill the App for this size; returns the ingest measurements."""
    per_subject = math.ceil(size / subjects)
    # eviction would otherwise cap every subject at the default notes.maxEntries
    config_doc = {"memory": {"notes": {"maxEntries": max(10_000, per_subject + 10)}}}
    app = app_create(name=app_name(size, subjects, seed), config=config_doc, actor=actor)
    config = get_config(app)
    people = _subjects(app, subjects)
    sample = min(size, ingest_sample)
    stream = synthetic.notes(size, seed=seed)

    fill_s = _bulk_fill(people, stream, size - sample)
    if size - sample:
        out(f"  bulk-inserted {size - sample} notes in {fill_s:.1f} s ({(size - sample) / fill_s:,.0f}/s)")

    conversations = [
        conversation_get_or_create(subject=s, external_id="bench", actor=actor)[0] for s in people
    ]
    texts = synthetic.chat_messages(sample, seed=seed)
    messages = []
    started = time.perf_counter()
    for i, text in enumerate(texts):
        # message i feeds note size-sample+i, which belongs to subject (size-sample+i) % S
        conversation = conversations[(size - sample + i) % subjects]
        messages.append(message_add(conversation=conversation, role="user", text=text, actor=actor)[0])
    messages_s = time.perf_counter() - started

    merged = 0
    started = time.perf_counter()
    for i, (content, tags, when) in enumerate(stream):
        message = messages[i]
        subject = people[(size - sample + i) % subjects]
        _, created = note_store(
            subject=subject,
            content=content,
            tags=tags,
            source_message=message,
            occurred_at=when,
            actor=actor,
            config=config,
        )
        merged += not created
    notes_s = time.perf_counter() - started
    audit_record(
        actor=actor,
        action=FILLED,
        app=app,
        object_kind="app",
        object_id=app.pk,
        data={"notes": size, "subjects": subjects, "seed": seed},
    )
    return {
        "reused": False,
        "bulk_notes_per_s": round((size - sample) / fill_s, 1) if size - sample else None,
        "ingest_sample": sample,
        "ingest_merged": merged,
        "ingest_notes_per_s": round(sample / notes_s, 1) if sample else None,
        "ingest_messages_per_s": round(sample / messages_s, 1) if sample else None,
    }


def prepare(*, size: int, subjects: int, seed: int, ingest_sample: int, fresh: bool, actor, out) -> tuple:
    """The filled App for this size (reused when complete) and its ingest measurements."""
    name = app_name(size, subjects, seed)
    app = App.objects.filter(name=name).first()
    if app is not None:
        complete = AuditEvent.objects.filter(app=app, action=FILLED).exists()
        if complete and not fresh:
            out(f"  reusing app {name} (already filled; ingest not measured again, use --fresh)")
            return app, {
                "reused": True,
                "bulk_notes_per_s": None,
                "ingest_sample": 0,
                "ingest_merged": 0,
                "ingest_notes_per_s": None,
                "ingest_messages_per_s": None,
            }
        out(f"  deleting {'stale' if fresh else 'half-filled'} app {name}")
        app.delete()
    ingest = fill(size=size, subjects=subjects, seed=seed, ingest_sample=ingest_sample, actor=actor, out=out)
    return App.objects.get(name=name), ingest


def measure_in_process(app: App, questions: list[str], *, k, record: bool) -> dict:
    config = get_config(app)
    people = _subjects(app, app.subjects.count())
    people.sort(key=lambda s: int(s.external_id.rsplit("-", 1)[1]))
    latencies, tokens, recalled, indexed = [], [], [], []
    for i, question in enumerate([*questions[:WARMUP], *questions]):
        subject = people[i % len(people)]
        started = time.perf_counter()
        context = context_build(subject=subject, message=question, config=config, k=k, record=record)
        elapsed = (time.perf_counter() - started) * 1000
        if i < WARMUP:
            continue
        latencies.append(elapsed)
        tokens.append(context.tokens()["total"])
        recalled.append(sum(1 for item in context.items if item.section == "recalled"))
        indexed.append(sum(1 for item in context.items if item.section == "memory-index"))
    return {
        "context_ms": latency_summary(latencies),
        "tokens_mean": rounded(mean(tokens), 1),
        "recalled_mean": rounded(mean(recalled), 2),
        "index_mean": rounded(mean(indexed), 2),
    }


def measure_http(server: BenchServer, app: App, questions: list[str], *, k, actor) -> dict:
    _, raw_key = api_key_create(app=app, name="bench", actor=actor)
    externals = sorted(
        app.subjects.values_list("external_id", flat=True), key=lambda e: int(e.rsplit("-", 1)[1])
    )
    latencies = []
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {raw_key}"}, timeout=60
    ) as client:
        for i, question in enumerate([*questions[:WARMUP], *questions]):
            payload = {"subject": externals[i % len(externals)], "message": question}
            if k is not None:
                payload["k"] = k
            started = time.perf_counter()
            response = client.post("/api/v1/context", json=payload)
            elapsed = (time.perf_counter() - started) * 1000
            if response.status_code != 200:
                raise RuntimeError(
                    f"POST /api/v1/context answered {response.status_code}: {response.text[:300]}"
                )
            if i >= WARMUP:
                latencies.append(elapsed)
    return latency_summary(latencies)


def describe_db() -> str:
    settings = connection.settings_dict
    return f"{connection.vendor} ({settings['NAME']})"


def run(
    *,
    sizes: list[int],
    queries: int,
    subjects: int = 1,
    seed: int = 1,
    ingest_sample: int = 2000,
    http: bool = True,
    k: int | None = None,
    record: bool = True,
    fresh: bool = False,
    out: Callable[[str], None] = print,
) -> dict:
    """Fill (or reuse) each size, then time `queries` context builds in-process and over HTTP."""
    actor = Actor.system("bench")
    questions = synthetic.questions(queries, seed=seed)
    results: dict = {}
    with contextlib.ExitStack() as stack:
        stack.enter_context(quiet_http_log())
        server = None
        for size in sizes:
            out(f"size {size}: {subjects} subject(s)")
            started = time.perf_counter()
            app, ingest = prepare(
                size=size,
                subjects=subjects,
                seed=seed,
                ingest_sample=ingest_sample,
                fresh=fresh,
                actor=actor,
                out=out,
            )
            ingest["prepare_s"] = round(time.perf_counter() - started, 1)
            result = {**ingest, **measure_in_process(app, questions, k=k, record=record)}
            if http:
                if server is None:
                    server = stack.enter_context(BenchServer())
                    out(f"  daphne serving the same database at {server.url} (pid {server.pid})")
                result["http_ms"] = measure_http(server, app, questions, k=k, actor=actor)
            else:
                result["http_ms"] = None
            results[str(size)] = result
            out(f"  done in {time.perf_counter() - started:.1f} s")
    return {
        "sizes": results,
        "db": connection.vendor,
        "queries": queries,
        "subjects": subjects,
        "seed": seed,
        "k": k,
        "record": record,
    }


def render(summary: dict) -> str:
    headers = [
        "notes",
        "ingest notes/s",
        "ingest msgs/s",
        "bulk notes/s",
        "ctx p50",
        "ctx p95",
        "ctx mean",
        "http p50",
        "http p95",
        "http mean",
        "tokens",
        "recalled",
    ]
    rows = []
    for size, r in summary["sizes"].items():
        http = r["http_ms"] or {}
        rows.append(
            [
                int(size),
                r["ingest_notes_per_s"],
                r["ingest_messages_per_s"],
                r["bulk_notes_per_s"],
                r["context_ms"]["p50"],
                r["context_ms"]["p95"],
                r["context_ms"]["mean"],
                http.get("p50"),
                http.get("p95"),
                http.get("mean"),
                r["tokens_mean"],
                r["recalled_mean"],
            ]
        )
    return (
        table(headers, rows)
        + "\n(latencies in ms; tokens = mean total context tokens; bulk notes/s includes generating them)"
    )
