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

Modes are `retrieve.mode` values (fts, vector, hybrid, full). Every mode but fts runs with the
`local` embedding provider (all-MiniLM-L6-v2 on onnxruntime): before its first use the App's
notes are embedded in batches, as `manage.py memory reembed` would (notes whose text another
bench App already embedded under the same model get a copy of that vector: same model, same
text, same vector), and the embedding rate is reported. In those modes each question is first
embedded on its own (`query_vector`, uncached: the per-query embedding cost, reported apart),
then the context is built with that vector in the query cache, so the context latency is the
build alone. Latencies are wall-clock; the `cpu` columns are the process's CPU time over the
same builds, which a machine shared with other work does not inflate.
"""

import contextlib
import itertools
import math
import time
from collections.abc import Callable

import httpx
import numpy as np
from django.db import connection, transaction
from django.db.models import Exists, OuterRef

from memory.api.timing import server_timing_parse
from memory.config import get_config
from memory.context import context_build
from memory.embeddings import get_embedder
from memory.models import App, AuditEvent, Embedding, ItemKind, Note, Origin
from memory.search.lexical import RANK_BUDGET
from memory.search.vectors.query import provider_reset, query_vector
from memory.services import Actor, api_key_create, app_create, audit_record, note_store, subject_get_or_create
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.embeddings import content_sha256, embed_notes, embeddings_write
from memoryweb.bench import synthetic
from memoryweb.bench.report import latency_summary, mean, percentile, rounded, table
from memoryweb.bench.server import BenchServer, quiet_http_log

FILLED = "bench.context.filled"
BULK_BATCH = 5000
EMBED_BATCH = 1024
WARMUP = 5
MODES = ("fts", "vector", "hybrid", "full")


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
    # eviction would otherwise cap every subject at the default notes.maxEntries; the API (the
    # HTTP measurement) searches in fts mode, without embeddings
    config_doc = {
        "memory": {"notes": {"maxEntries": max(10_000, per_subject + 10)}, "retrieve": {"mode": "fts"}}
    }
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


def mode_config(config, mode: str):
    """The App's configuration in this retrieval mode: local embeddings for every mode but fts."""
    return config.with_overrides(
        {"retrieve": {"mode": mode}, "embeddings": {"provider": "none" if mode == "fts" else "local"}}
    )


def _timings(values: list[float]) -> dict[str, float | None]:
    summary = latency_summary(values)
    summary["p99"] = round(percentile(values, 99), 3) if values else None
    return summary


def embed_app(app: App, *, out: Callable) -> dict:
    """Give every note of the App a local-model vector (resumable); returns the rates."""

    config = mode_config(get_config(app), "hybrid")
    embedder = get_embedder(config)
    assert embedder is not None
    model_id = embedder.model_id
    vectors = Embedding.objects.filter(kind=ItemKind.NOTE, model_id=model_id)
    missing = (
        Note.objects.filter(subject__app=app)
        .exclude(Exists(vectors.filter(item_id=OuterRef("pk"))))
        .order_by("id")
    )
    todo = list(missing.values_list("id", flat=True))
    if not todo:
        out(f"  every note of {app.name} has a {model_id} vector")
        return {"embedded": 0, "copied": 0, "embed_notes_per_s": None}
    out(f"  embedding {len(todo)} notes with {model_id}")
    embedded = copied = 0
    embed_s = 0.0
    for start in range(0, len(todo), EMBED_BATCH):
        notes = list(Note.objects.filter(pk__in=todo[start : start + EMBED_BATCH]).order_by("id"))
        hashes = {note.pk: content_sha256(note.content) for note in notes}
        known = dict(
            vectors.filter(content_sha256__in=set(hashes.values())).values_list("content_sha256", "vector")
        )
        reuse = [note for note in notes if hashes[note.pk] in known]
        if reuse:
            matrix = np.stack([np.frombuffer(bytes(known[hashes[n.pk]]), dtype="<f4") for n in reuse])
            rows = [(n.subject_id, n.pk, hashes[n.pk]) for n in reuse]
            copied += len(embeddings_write(kind=ItemKind.NOTE, model_id=model_id, rows=rows, matrix=matrix))
        fresh = [note for note in notes if hashes[note.pk] not in known]
        started = time.perf_counter()
        embedded += embed_notes(fresh, config=config, embedder=embedder)
        embed_s += time.perf_counter() - started
        done = start + len(notes)
        if done % (EMBED_BATCH * 10) == 0 or done == len(todo):
            rate = f"{embedded / embed_s:,.0f} notes/s" if embed_s else "-"
            out(f"    {done}/{len(todo)}: {embedded} embedded ({rate}), {copied} copied")
    return {
        "embedded": embedded,
        "copied": copied,
        "embed_notes_per_s": round(embedded / embed_s, 1) if embedded else None,
    }


def measure_in_process(app: App, questions: list[str], *, k, record: bool, mode: str = "fts") -> dict:

    config = mode_config(get_config(app), mode)
    people = _subjects(app, app.subjects.count())
    people.sort(key=lambda s: int(s.external_id.rsplit("-", 1)[1]))
    latencies, cpu, embedding, tokens, recalled, indexed, writes = [], [], [], [], [], [], []
    # distinct warm-up texts, so no measured question finds its vector already cached
    asked = [*(f"warm-up: {q}" for q in questions[:WARMUP]), *questions]
    block = 200  # questions embedded ahead of their builds (the query cache holds 256)
    provider_reset()
    for first in range(0, len(asked), block):
        if mode != "fts":
            # embedding first, in its own phase: the model's threads are idle during the builds
            for i, question in enumerate(asked[first : first + block], first):
                started = time.perf_counter()
                if query_vector(config, question) is None:
                    raise RuntimeError("the local embedding provider failed; see the log")
                if i >= WARMUP:
                    embedding.append((time.perf_counter() - started) * 1000)
        for i, question in enumerate(asked[first : first + block], first):
            subject = people[i % len(people)]
            started, started_cpu = time.perf_counter(), time.process_time()
            context = context_build(subject=subject, message=question, config=config, k=k, record=record)
            elapsed = (time.perf_counter() - started) * 1000
            elapsed_cpu = (time.process_time() - started_cpu) * 1000
            if i < WARMUP:
                continue
            latencies.append(elapsed)
            cpu.append(elapsed_cpu)
            # the build's writes (the RetrievalEvent, recalls; the cache entry) come after latency_ms
            writes.append(max(0.0, elapsed - (context.latency_ms or elapsed)))
            tokens.append(context.tokens()["total"])
            recalled.append(sum(1 for item in context.items if item.section == "recalled"))
            indexed.append(sum(1 for item in context.items if item.section == "memory-index"))
    return {
        "context_ms": _timings(latencies),
        "context_cpu_ms": _timings(cpu),
        "event_ms": latency_summary(writes),
        "query_embedding_ms": _timings(embedding) if embedding else None,
        "tokens_mean": rounded(mean(tokens), 1),
        "recalled_mean": rounded(mean(recalled), 2),
        "index_mean": rounded(mean(indexed), 2),
    }


# the parts of a request's time POST /api/v1/context reports in `Server-Timing`
# (memory/api/timing.py); `transport` is what the client measured beyond their sum
BREAKDOWN = ("auth", "lookup", "build", "event", "serialise", "transport")


def breakdown_of(elapsed_ms: float, header: str) -> dict[str, float]:
    """One request's split: the server's parts from its `Server-Timing`, and the transport."""
    parts = server_timing_parse(header)
    split = {name: parts.get(name, 0.0) for name in BREAKDOWN if name != "transport"}
    split["transport"] = max(0.0, elapsed_ms - sum(split.values()))
    return split


def measure_http(server: BenchServer, app: App, questions: list[str], *, k, actor) -> dict:
    _, raw_key = api_key_create(app=app, name="bench", actor=actor)
    externals = sorted(
        app.subjects.values_list("external_id", flat=True), key=lambda e: int(e.rsplit("-", 1)[1])
    )
    latencies = []
    parts: dict[str, list[float]] = {name: [] for name in BREAKDOWN}
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
                for name, ms in breakdown_of(elapsed, response.headers.get("server-timing", "")).items():
                    parts[name].append(ms)
    summary: dict = latency_summary(latencies)
    summary["breakdown"] = {name: latency_summary(values) for name, values in parts.items()}
    return summary


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
    modes: list[str] | tuple[str, ...] = ("fts",),
    out: Callable[[str], None] = print,
) -> dict:
    """Fill (or reuse) each size, then time `queries` context builds in-process per mode, and
    over HTTP (the App's own configuration: fts mode, no embeddings)."""
    actor = Actor.system("bench")
    questions = synthetic.questions(queries, seed=seed)
    results: dict = {}
    with contextlib.ExitStack() as stack:
        stack.enter_context(quiet_http_log())
        server = None
        for size in sizes:
            out(f"size {size}: {subjects} subject(s), {math.ceil(size / subjects)} notes each")
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
            if any(mode != "fts" for mode in modes):
                ingest.update(embed_app(app, out=out))
            by_mode = {}
            for mode in modes:
                by_mode[mode] = measure_in_process(app, questions, k=k, record=record, mode=mode)
                ms = by_mode[mode]["context_ms"]
                out(
                    f"  {mode}: context p50 {ms['p50']:.1f} ms, p95 {ms['p95']:.1f} ms, p99 {ms['p99']:.1f} ms"
                )
            # the first mode's figures also sit at the top level (the layout before modes existed)
            first = by_mode[modes[0]]
            result = {**ingest, **{key: first[key] for key in ("tokens_mean", "recalled_mean", "index_mean")}}
            result["context_ms"] = {key: first["context_ms"][key] for key in ("p50", "p95", "mean")}
            result["modes"] = by_mode
            if http:
                if server is None:
                    server = stack.enter_context(BenchServer(env={"MEMORYWEB_SERVER_TIMING": "1"}))
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
        "modes": list(modes),
        "rank_budget": RANK_BUDGET,
    }


def render(summary: dict) -> str:
    headers = [
        "notes",
        "per subj",
        "mode",
        "ingest n/s",
        "msgs/s",
        "embed n/s",
        "ctx p50",
        "p95",
        "p99",
        "cpu p50",
        "cpu p95",
        "q-embed p50",
        "q-embed p95",
        "http p50",
        "http p95",
        "tokens",
    ]
    rows = []
    for size, r in summary["sizes"].items():
        http = r["http_ms"] or {}
        for n, (mode, m) in enumerate(r["modes"].items()):
            embed = m["query_embedding_ms"] or {}
            rows.append(
                [
                    int(size),
                    math.ceil(int(size) / summary["subjects"]),
                    mode,
                    r["ingest_notes_per_s"] if n == 0 else None,
                    r["ingest_messages_per_s"] if n == 0 else None,
                    r.get("embed_notes_per_s") if mode != "fts" else None,
                    m["context_ms"]["p50"],
                    m["context_ms"]["p95"],
                    m["context_ms"]["p99"],
                    m["context_cpu_ms"]["p50"],
                    m["context_cpu_ms"]["p95"],
                    embed.get("p50"),
                    embed.get("p95"),
                    http.get("p50") if n == 0 else None,
                    http.get("p95") if n == 0 else None,
                    m["tokens_mean"],
                ]
            )
    text = (
        table(headers, rows)
        + "\n(ms; ctx = one context build in-process, wall clock; cpu = the process's CPU time for it; "
        "q-embed = embedding one question, uncached, apart from the build; http = POST /api/v1/context "
        "in fts mode; tokens = mean context tokens)"
    )
    breakdown = render_breakdown(summary)
    return text + "\n\n" + breakdown if breakdown else text


def render_breakdown(summary: dict) -> str:
    """Where an HTTP request's time goes, per size: the mean of each part (they add up to the
    mean request), from the server's `Server-Timing` (memory/api/timing.py)."""
    rows = []
    for size, r in summary["sizes"].items():
        http = r["http_ms"]
        if not http or "breakdown" not in http:
            continue
        rows.append([int(size), http["mean"], *(http["breakdown"][name]["mean"] for name in BREAKDOWN)])
    if not rows:
        return ""
    return (
        table(["notes", "http mean", *BREAKDOWN], rows)
        + "\n(ms, mean per POST /api/v1/context: auth = key, pause and rate limit; lookup = body and "
        "subject; build = context_build before its writes; event = its writes (RetrievalEvent, "
        "recalls, deliveries) and the cache entry; serialise = as_dict and JSON; transport = the rest "
        "the client waited: ASGI server, Django's handler and middleware, thread hop, socket)"
    )
