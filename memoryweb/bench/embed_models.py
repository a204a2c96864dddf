"""`manage.py bench embeddings`: the local embedding models side by side (issue 15).

For each model of memory/embedding_models.py that can run here: the load (weights and
tokenizer checked by sha256, the session built), a warm-up, then the query-embedding latency
(each LoCoMo question embedded alone as a query, uncached, in process) and the batch
throughput (the dialogue turns in batches, as `embed_notes` stores them). The models take
turns on every question, so a machine shared with other work weighs on them alike; the
figures are still only comparable within one run. Recall is `bench locomo --embedding-model`.
It touches no database.
"""

import time
from collections.abc import Callable
from pathlib import Path

from memory.embedding_models import MODELS, model_problem
from memory.embeddings.local import LocalEmbedder
from memoryweb.bench.locomo_data import load, parse_sample
from memoryweb.bench.report import latency_summary, rounded, table

WARMUP = 10


def run(
    path: str | Path,
    *,
    models: list[str] | None = None,
    queries: int = 300,
    turns: int = 500,
    out: Callable[[str], None] = print,
) -> dict:
    samples = [parse_sample(raw) for raw in load(path)]
    questions = [q.text for s in samples for q in s.questions][:queries]
    texts = [t.text for s in samples for session in s.sessions for t in session.turns][:turns]
    names = models or list(MODELS)
    summary: dict = {"queries": len(questions), "turns": len(texts), "models": {}}
    embedders: dict[str, LocalEmbedder] = {}
    for name in names:
        model = MODELS[name]
        problem = model_problem(model)
        if problem:
            out(f"{name}: skipped ({problem})")
            summary["models"][name] = {"skipped": problem}
            continue
        embedder = LocalEmbedder(model)  # its own instance: the load is measured
        started = time.perf_counter()
        embedder.load()
        load_s = time.perf_counter() - started
        for text in questions[:WARMUP]:
            embedder.embed([text], query=True)
        embedders[name] = embedder
        summary["models"][name] = {"dim": model.dim, "load_s": rounded(load_s, 3), "wheel_mb": model.wheel_mb}
        out(f"{name}: loaded in {load_s:.2f} s")
    timings: dict[str, list[float]] = {name: [] for name in embedders}
    for text in questions:
        for name, embedder in embedders.items():
            started = time.perf_counter()
            embedder.embed([text], query=True)
            timings[name].append((time.perf_counter() - started) * 1000)
    for name, embedder in embedders.items():
        started = time.perf_counter()
        embedder.embed(texts)
        seconds = time.perf_counter() - started
        row = summary["models"][name]
        row["query_ms"] = latency_summary(timings[name])
        row["batch_texts_per_s"] = rounded(len(texts) / seconds, 1) if seconds else None
        out(f"{name}: {len(texts)} turns in {seconds:.1f} s")
    return summary


def render(summary: dict) -> str:
    rows = []
    for name, row in summary["models"].items():
        if "skipped" in row:
            rows.append([name, "-", "-", "-", "-", "-", "-"])
            continue
        q = row["query_ms"]
        rows.append(
            [
                name,
                row["dim"],
                f"{row['wheel_mb']:.1f}",
                f"{row['load_s']:.2f}",
                q["p50"],
                q["p95"],
                row["batch_texts_per_s"],
            ]
        )
    head = (
        f"query embedding: {summary['queries']} LoCoMo questions, each alone, models taking turns; "
        f"batch: {summary['turns']} turns"
    )
    return (
        head + "\n" + table(["model", "dim", "wheel MB", "load s", "q p50 ms", "q p95 ms", "batch/s"], rows)
    )
