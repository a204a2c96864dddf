"""`bench locomo`: turn-level retrieval recall on LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0).

The data is read from the path given on the command line and never copied into the project.

Ingest: one subject per LoCoMo conversation, one chat Conversation per session (a session is
one sitting, as a chat app would open a new conversation each time; notes and messages keep
their session in their provenance). Each turn is posted with `message_add` (external id =
dia_id, occurred_at = the session date) and stored as a note with that message as its source.
The default dedup stays on: when it merges a near-identical turn into an earlier note, the note
keeps both sources, and scoring maps the note to every dia_id among its sources.

Scoring: for every question and every k, the context is built with `recallInjection.k = k`
(room for k notes in `maxTokens`, and at least k candidates). recall@k is the fraction of the
question's evidence turns covered by the notes of the `recalled` section, hit@k whether any is;
the same with `memory-index` items counted too is reported under `with_memory_index`.
Questions without evidence after normalisation are skipped and counted.
"""

import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from django.utils import timezone

from chat.services import conversation_get_or_create, message_add
from memory.bench.locomo_data import (
    CATEGORIES,
    CATEGORY_NAMES,
    Question,
    Sample,
    canonical_dia_id,
    load,
    normalise_evidence,
    parse_sample,
    parse_session_date,
)
from memory.bench.report import fmt, latency_summary, mean, rounded, table
from memory.config import MemoryConfig, get_config
from memory.context import context_build
from memory.models import NoteSource
from memory.services import Actor, app_create, note_store, subject_get_or_create

__all__ = ["load", "normalise_evidence", "parse_sample", "parse_session_date", "render", "run"]


def ingest(sample: Sample, *, app, actor: Actor, config) -> tuple[object, dict[int, set[str]], dict]:
    """Store every turn as a message and a note; returns the subject, note → dia_ids, and stats."""
    subject = subject_get_or_create(app=app, external_id=sample.sample_id)
    roles = {sample.speaker_a: "user", sample.speaker_b: "assistant"}
    turns = merged = 0
    started = time.perf_counter()
    for session in sample.sessions:
        conversation, _ = conversation_get_or_create(
            subject=subject, external_id=f"session_{session.number}", actor=actor
        )
        for turn in session.turns:
            message, _ = message_add(
                conversation=conversation,
                role=roles.get(turn.speaker, "user"),
                text=turn.message_text,
                occurred_at=session.date,
                external_id=turn.dia_id,
                actor=actor,
            )
            _, created = note_store(
                subject=subject,
                content=turn.note_content,
                conversation=conversation,
                source_message=message,
                occurred_at=session.date,
                actor=actor,
                config=config,
            )
            turns += 1
            merged += not created
    seconds = time.perf_counter() - started
    note_dia: dict[int, set[str]] = defaultdict(set)
    sources = NoteSource.objects.filter(note__subject=subject, message__isnull=False)
    for note_id, dia_id in sources.values_list("note_id", "message__external_id"):
        if (canonical := canonical_dia_id(dia_id)) is not None:
            note_dia[note_id].add(canonical)
    return subject, dict(note_dia), {"turns": turns, "merged": merged, "seconds": seconds}


def config_for_k(base: MemoryConfig, k: int) -> MemoryConfig:
    return base.with_overrides(
        {
            "recallInjection": {
                "k": k,
                "maxTokens": max(400, 120 * k),
                "candidates": max(k, base["recallInjection.candidates"]),
            }
        }
    )


def _covered(items, note_dia: dict[int, set[str]], sections: set[str]) -> set[str]:
    covered: set[str] = set()
    for item in items:
        if item.kind == "note" and item.section in sections:
            covered |= note_dia.get(int(item.id.split(":", 1)[1]), set())
    return covered


def score_question(
    subject, question: Question, note_dia, configs: dict[int, MemoryConfig], record: bool
) -> dict:
    """Build the context at each k and measure evidence coverage; one row per question."""
    evidence = set(question.evidence)
    row: dict = {
        "question": question.text,
        "category": question.category,
        "evidence": question.evidence,
        "by_k": {},
    }
    for k, config in configs.items():
        started = time.perf_counter()
        context = context_build(subject=subject, message=question.text, config=config, record=record)
        latency = (time.perf_counter() - started) * 1000
        recalled = _covered(context.items, note_dia, {"recalled"}) & evidence
        indexed = _covered(context.items, note_dia, {"recalled", "memory-index"}) & evidence
        row["by_k"][k] = {
            "recall": len(recalled) / len(evidence),
            "hit": 1.0 if recalled else 0.0,
            "recall_index": len(indexed) / len(evidence),
            "hit_index": 1.0 if indexed else 0.0,
            "tokens": context.tokens()["total"],
            "latency_ms": latency,
        }
    return row


def _aggregate(rows: list[dict], ks: list[int], *, index: bool) -> dict:
    suffix = "_index" if index else ""
    result: dict = {}
    for k in ks:
        result[f"recall@{k}"] = rounded(mean([r["by_k"][k]["recall" + suffix] for r in rows]), 4)
        result[f"hit@{k}"] = rounded(mean([r["by_k"][k]["hit" + suffix] for r in rows]), 4)
    result["n"] = len(rows)
    return result


def summarise(rows: list[dict], ks: list[int], *, skipped: int) -> dict:
    def block(index: bool) -> dict:
        return {
            "overall_1_4": _aggregate(
                [r for r in rows if r["category"] in {"1", "2", "3", "4"}], ks, index=index
            ),
            "overall_1_5": _aggregate(rows, ks, index=index),
            "by_category": {
                c: _aggregate([r for r in rows if r["category"] == c], ks, index=index) for c in CATEGORIES
            },
        }

    main_k = 10 if 10 in ks else min(ks, key=lambda k: abs(k - 10))
    tokens_by_k = {str(k): rounded(mean([r["by_k"][k]["tokens"] for r in rows]), 4) for k in ks}
    latency_by_k = {str(k): latency_summary([r["by_k"][k]["latency_ms"] for r in rows]) for k in ks}
    return {
        **block(index=False),
        "tokens_mean": tokens_by_k[str(main_k)],
        "tokens_mean_by_k": tokens_by_k,
        "latency_ms": {key: latency_by_k[str(main_k)][key] for key in ("p50", "p95")},
        "latency_ms_by_k": latency_by_k,
        "questions": len(rows),
        "skipped": skipped,
        "with_memory_index": block(index=True),
        "main_k": main_k,
    }


def run(
    data: list[dict] | str | Path,
    *,
    ks: list[int],
    limit_conversations: int | None = None,
    record: bool = False,
    details: bool = False,
    out: Callable[[str], None] = print,
) -> dict:
    """Ingest each conversation into its own subject of a fresh App and score every question."""
    raw = load(data) if isinstance(data, (str, Path)) else data
    samples = [parse_sample(s) for s in raw[:limit_conversations]]
    actor = Actor.system("bench")
    app = app_create(name=f"bench-locomo-{timezone.now():%Y%m%d-%H%M%S-%f}", actor=actor)
    base = get_config(app)
    configs = {k: config_for_k(base, k) for k in ks}
    rows, skipped, dropped, ingest_stats = [], 0, 0, {"turns": 0, "merged": 0, "seconds": 0.0}
    for sample in samples:
        subject, note_dia, stats = ingest(sample, app=app, actor=actor, config=base)
        for key in ingest_stats:
            ingest_stats[key] += stats[key]
        out(
            f"{sample.sample_id}: {stats['turns']} turns in {stats['seconds']:.1f} s "
            f"({stats['merged']} merged by dedup), {len(sample.questions)} questions"
        )
        for question in sample.questions:
            dropped += len(question.dropped)
            if not question.evidence:
                skipped += 1
                continue
            rows.append(score_question(subject, question, note_dia, configs, record))
    summary = summarise(rows, ks, skipped=skipped)
    summary["app"] = app.name
    summary["conversations"] = len(samples)
    summary["dropped_evidence_refs"] = dropped
    summary["ingest"] = {
        "turns": ingest_stats["turns"],
        "merged_notes": ingest_stats["merged"],
        "turns_per_s": rounded(ingest_stats["turns"] / ingest_stats["seconds"], 4)
        if ingest_stats["seconds"]
        else None,
    }
    if details:
        summary["details"] = [{**r, "by_k": {str(k): v for k, v in r["by_k"].items()}} for r in rows]
    return summary


def render(summary: dict, ks: list[int]) -> str:
    def rows_of(block: dict) -> list[list]:
        rows = []
        for c in CATEGORIES:
            agg = block["by_category"][c]
            rows.append(
                [
                    f"{c} {CATEGORY_NAMES[c]}",
                    agg["n"],
                    *[agg[f"{m}@{k}"] for k in ks for m in ("recall", "hit")],
                ]
            )
        for name in ("overall_1_4", "overall_1_5"):
            agg = block[name]
            rows.append([name, agg["n"], *[agg[f"{m}@{k}"] for k in ks for m in ("recall", "hit")]])
        return rows

    headers = ["category", "n", *[f"{m}@{k}" for k in ks for m in ("recall", "hit")]]
    parts = [
        "recalled section:",
        table(headers, rows_of(summary)),
        "",
        "recalled + memory-index:",
        table(headers, rows_of(summary["with_memory_index"])),
        "",
        f"questions {summary['questions']}, skipped (no evidence) {summary['skipped']}, "
        f"dropped evidence refs {summary['dropped_evidence_refs']}",
        "tokens (mean total) by k: "
        + ", ".join(f"k={k}: {fmt(v, 1)}" for k, v in summary["tokens_mean_by_k"].items()),
        f"context_build latency at k={summary['main_k']}: p50 {fmt(summary['latency_ms']['p50'], 2)} ms, "
        f"p95 {fmt(summary['latency_ms']['p95'], 2)} ms",
        f"ingest: {summary['ingest']['turns']} turns, {fmt(summary['ingest']['turns_per_s'], 1)} turns/s "
        f"(message + note each), {summary['ingest']['merged_notes']} merged by dedup",
    ]
    return "\n".join(parts)
