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

Modes (`modes`): every question is scored under each retrieval mode (`retrieve.mode`: fts,
vector, hybrid, full; memory/ranking/) on the same ingested notes, side by side. With
`embeddings="local"` the notes are embedded once per subject after ingest (a timed batch
through `embed_notes`, apart from the ingest rate) and the contexts are built with that
provider; with "none" the vector list is empty, so `full` is full-text + signals and `vector`
and `hybrid` are refused. With `bm25`, a plain BM25 baseline (memoryweb/bench/bm25.py:
rank_bm25 over the same notes, term frequency kept, no stemming, no signals) is scored in the
same run: its top k notes are its recalled items, its tokens those k notes rendered as the
recalled section renders them.
The first mode is the primary one: its summary is the top level of the result, the others are
under "modes", the baseline under "bm25".

With `reflect`, each conversation is scored twice. First "turns", exactly as above. Then the
turn reflection runs over every message (memory/bench/reflect.py: one ReflectionRun per message,
`turn_reflect` called synchronously, heuristic path unless a reflection LLM is configured; the
subject's consent policy is "allow" for every category so nothing waits as pending), and the
questions are scored again on "turns+reflection": the same turn notes plus the extracted notes
and profile facts in the same subject, through the same `context_build`. An extracted note maps
to the dia_ids of its source messages (Note.source_message and NoteSource), a fact to its
ProfileFact.source_message; the profile section (pinned facts, keyword-matched contextual facts)
counts as recalled. In this mode both speakers are posted as role "user" (the extractor ignores
most of what an assistant says) with the speaker's name at the start of the message text
("Caroline: …"), because `chat.reflect` calls the extractor without a speaker and the name must
reach the extracted notes; the turn notes are unchanged. Reflection throughput is turns
(LoCoMo utterances) reflected per second of run-row creation + `turn_reflect`, timed apart
from ingest.
"""

import time
from collections.abc import Callable
from pathlib import Path

from django.utils import timezone

from memory.config import MemoryConfig, get_config
from memory.context import context_build, note_line
from memory.embeddings import get_embedder
from memory.models import Note
from memory.services import Actor, app_create, note_store, subject_get_or_create
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.embeddings import embed_notes
from memory.tokens import estimate_tokens
from memoryweb.bench import reflect as reflection
from memoryweb.bench.bm25 import Bm25Index
from memoryweb.bench.locomo_data import (
    CATEGORIES,
    CATEGORY_NAMES,
    Question,
    Sample,
    load,
    normalise_evidence,
    parse_sample,
    parse_session_date,
)
from memoryweb.bench.report import fmt, latency_summary, mean, rounded, table

__all__ = ["load", "normalise_evidence", "parse_sample", "parse_session_date", "render", "run"]


def ingest(sample: Sample, *, app, actor: Actor, config, reflect: bool = False) -> tuple[object, list, dict]:
    """Store every turn as a message and a note; returns the subject, the messages in order, and stats.

    With `reflect` both speakers post as "user" and the message text starts with the speaker's
    name (see the module docstring); the notes are the same either way.
    """
    subject = subject_get_or_create(app=app, external_id=sample.sample_id)
    roles = {sample.speaker_a: "user", sample.speaker_b: "user" if reflect else "assistant"}
    turns = merged = 0
    messages = []
    started = time.perf_counter()
    for session in sample.sessions:
        conversation, _ = conversation_get_or_create(
            subject=subject, external_id=f"session_{session.number}", actor=actor
        )
        for turn in session.turns:
            message, _ = message_add(
                conversation=conversation,
                role=roles.get(turn.speaker, "user"),
                text=turn.note_content if reflect else turn.message_text,
                occurred_at=session.date,
                external_id=turn.dia_id,
                actor=actor,
            )
            messages.append(message)
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
    return subject, messages, {"turns": turns, "merged": merged, "seconds": seconds}


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


def _covered(
    items, note_dia: dict[int, set[str]], sections: set[str], fact_dia: dict[int, set[str]] | None = None
) -> set[str]:
    """The dia_ids the context's notes in `sections` come from, plus its profile facts' with `fact_dia`."""
    covered: set[str] = set()
    for item in items:
        number = int(item.id.split(":", 1)[1])
        if item.kind == "note" and item.section in sections:
            covered |= note_dia.get(number, set())
        elif item.kind == "fact" and fact_dia is not None:
            covered |= fact_dia.get(number, set())
    return covered


def score_question(
    subject,
    question: Question,
    note_dia,
    configs: dict[int, MemoryConfig],
    record: bool,
    fact_dia: dict[int, set[str]] | None = None,
) -> dict:
    """Build the context at each k and measure evidence coverage; one row per question.

    With `fact_dia` the profile section's facts count too, and `recall_notes`/`hit_notes` keep
    the coverage of the recalled notes alone."""
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
        recalled = _covered(context.items, note_dia, {"recalled"}, fact_dia) & evidence
        indexed = _covered(context.items, note_dia, {"recalled", "memory-index"}, fact_dia) & evidence
        row["by_k"][k] = {
            "recall": len(recalled) / len(evidence),
            "hit": 1.0 if recalled else 0.0,
            "recall_index": len(indexed) / len(evidence),
            "hit_index": 1.0 if indexed else 0.0,
            "tokens": context.tokens()["total"],
            "latency_ms": latency,
        }
        if fact_dia is not None:
            notes_only = _covered(context.items, note_dia, {"recalled"}) & evidence
            row["by_k"][k]["recall_notes"] = len(notes_only) / len(evidence)
            row["by_k"][k]["hit_notes"] = 1.0 if notes_only else 0.0
    return row


def score_bm25(index: Bm25Index, question: Question, note_dia, ks: list[int]) -> dict:
    """The baseline's row, shaped like `score_question`'s: its top k notes are its recalled
    items; tokens are those notes rendered as `### recalled` lines (no other section)."""
    evidence = set(question.evidence)
    row: dict = {"question": question.text, "category": question.category, "evidence": question.evidence}
    best, latency = index.top(question.text, max(ks))
    notes = Note.objects.in_bulk(best)
    row["by_k"] = {}
    for k in ks:
        covered: set[str] = set()
        for note_id in best[:k]:
            covered |= note_dia.get(note_id, set())
        covered &= evidence
        tokens = sum(estimate_tokens(note_line(notes[i])) for i in best[:k] if i in notes)
        row["by_k"][k] = {
            "recall": len(covered) / len(evidence),
            "hit": 1.0 if covered else 0.0,
            "recall_index": len(covered) / len(evidence),
            "hit_index": 1.0 if covered else 0.0,
            "tokens": tokens,
            "latency_ms": latency,
        }
    return row


def _aggregate(rows: list[dict], ks: list[int], *, index: bool, suffix: str | None = None) -> dict:
    suffix = suffix if suffix is not None else ("_index" if index else "")
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
    groups = {
        **{c: [r for r in rows if r["category"] == c] for c in CATEGORIES},
        "overall_1_4": [r for r in rows if r["category"] in {"1", "2", "3", "4"}],
        "overall_1_5": rows,
    }
    cost = {
        name: {
            "tokens_mean": rounded(mean([r["by_k"][main_k]["tokens"] for r in group]), 1),
            "latency_p50_ms": latency_summary([r["by_k"][main_k]["latency_ms"] for r in group])["p50"],
        }
        for name, group in groups.items()
    }
    return {
        **block(index=False),
        "cost_at_main_k": cost,
        "tokens_mean": tokens_by_k[str(main_k)],
        "tokens_mean_by_k": tokens_by_k,
        "latency_ms": {key: latency_by_k[str(main_k)][key] for key in ("p50", "p95")},
        "latency_ms_by_k": latency_by_k,
        "questions": len(rows),
        "skipped": skipped,
        "with_memory_index": block(index=True),
        "main_k": main_k,
    }


def _reflection_summary(rows: list[dict], ks: list[int], *, skipped: int, stats: dict, stored: dict) -> dict:
    block = summarise(rows, ks, skipped=skipped)
    block["without_profile"] = {
        "overall_1_4": _aggregate(
            [r for r in rows if r["category"] in {"1", "2", "3", "4"}], ks, index=False, suffix="_notes"
        ),
        "overall_1_5": _aggregate(rows, ks, index=False, suffix="_notes"),
    }
    block["extracted"] = {
        "facts": stats["facts"],
        "notes": stats["notes"],
        "pending": stats["pending"],
        "denied": stats["denied"],
        "evolved": stats["evolved"],
        "retracted": stats["retracted"],
        **stored,
    }
    block["reflection_turns"] = stats["turns"]
    block["reflection_seconds"] = rounded(stats["seconds"], 3)
    block["reflection_turns_per_s"] = (
        rounded(stats["turns"] / stats["seconds"], 2) if stats["seconds"] else None
    )
    block["reflection_warmup_seconds"] = rounded(stats["warmup_seconds"], 3)  # imports, not timed
    block["reflection_sources"] = stats["sources"]
    block["reflection_skipped_runs"] = stats["skipped"]
    block["consent"] = "allow for every category (set per subject by the benchmark)"
    block["ingest_mode"] = (
        'both speakers posted as role "user", message text prefixed with the speaker name; '
        "one ReflectionRun per message, turn_reflect called synchronously (no Celery)"
    )
    return block


MODES = ("fts", "vector", "hybrid", "full")
VECTOR_MODES = {"vector", "hybrid"}


class BenchError(Exception):
    """The benchmark cannot run as asked (the message says why)."""


def _embed_subject(subject, config: MemoryConfig) -> tuple[int, float]:
    """Embed the subject's notes in batches (already embedded ones are skipped); (written, s)."""

    started = time.perf_counter()
    written = embed_notes(Note.objects.filter(subject=subject).order_by("pk"), config=config)
    return written, time.perf_counter() - started


def _check_embedder(config: MemoryConfig) -> str:
    """The embedder's model id, after one probe; BenchError when it cannot run."""

    try:
        embedder = get_embedder(config)
        if embedder is None:
            raise BenchError("embeddings are off")
        embedder.embed(["probe"])
    except BenchError:
        raise
    except Exception as exc:
        raise BenchError(f"the embedding provider cannot run: {exc}") from exc
    return embedder.model_id


def run(
    data: list[dict] | str | Path,
    *,
    ks: list[int],
    modes: list[str] | tuple[str, ...] = ("full",),
    embeddings: str = "none",
    bm25: bool = False,
    limit_conversations: int | None = None,
    record: bool = False,
    details: bool = False,
    reflect: bool = False,
    out: Callable[[str], None] = print,
) -> dict:
    """Ingest each conversation into its own subject of a fresh App and score every question
    under each of `modes` (the first is the primary one), and with `bm25` the baseline too.

    With `reflect`, also reflect on every turn and score again over turns + extracted memories
    (the summary's "reflection" key; primary mode only)."""
    modes = list(dict.fromkeys(modes))
    unknown = [m for m in modes if m not in MODES]
    if not modes or unknown:
        raise BenchError(f"unknown retrieval mode {unknown[0] if unknown else ''!r}: use {', '.join(MODES)}")
    if embeddings == "none" and VECTOR_MODES & set(modes):
        raise BenchError("modes vector and hybrid need embeddings: use embeddings local")
    raw = load(data) if isinstance(data, (str, Path)) else data
    samples = [parse_sample(s) for s in raw[:limit_conversations]]
    actor = Actor.system("bench")
    # the heuristic path, whatever the environment configures for the reflection LLM; notes
    # are embedded in batches after ingest, not one by one as note_store would
    memory_config: dict = {"embeddings": {"provider": "none"}}
    if reflect:
        memory_config |= {"reflection": {"enabled": True}, "llm": {"reflection": "none"}}
    app = app_create(
        name=f"bench-locomo-{timezone.now():%Y%m%d-%H%M%S-%f}", config={"memory": memory_config}, actor=actor
    )
    base = get_config(app)
    searching = base.with_overrides({"embeddings": {"provider": embeddings}})
    model_id = _check_embedder(searching) if embeddings != "none" else None
    configs = {
        mode: {k: config_for_k(searching.with_overrides({"retrieve": {"mode": mode}}), k) for k in ks}
        for mode in modes
    }
    primary = modes[0]
    rows: dict[str, list[dict]] = {mode: [] for mode in modes}
    bm25_rows: list[dict] = []
    skipped, dropped, ingest_stats = 0, 0, {"turns": 0, "merged": 0, "seconds": 0.0}
    embed_stats = {"notes": 0, "seconds": 0.0}
    reflected_rows: list[dict] = []
    reflect_stats: dict = {"turns": 0, "seconds": 0.0, "skipped": 0, "sources": {}}
    reflect_stats |= dict.fromkeys(reflection.STAT_KEYS, 0)
    stored: dict[str, int] = {}
    if reflect:
        reflect_stats["warmup_seconds"] = reflection.warm_up()
    for sample in samples:
        subject, messages, stats = ingest(sample, app=app, actor=actor, config=base, reflect=reflect)
        for key in ingest_stats:
            ingest_stats[key] += stats[key]
        out(
            f"{sample.sample_id}: {stats['turns']} turns in {stats['seconds']:.1f} s "
            f"({stats['merged']} merged by dedup), {len(sample.questions)} questions"
        )
        if model_id is not None:
            written, seconds = _embed_subject(subject, searching)
            embed_stats["notes"] += written
            embed_stats["seconds"] += seconds
            out(f"{sample.sample_id}: embedded {written} notes in {seconds:.1f} s ({model_id})")
        note_dia = reflection.note_dia_ids(subject)
        index = Bm25Index.for_subject(subject) if bm25 else None
        scored = []
        for question in sample.questions:
            dropped += len(question.dropped)
            if not question.evidence:
                skipped += 1
                continue
            scored.append(question)
            for mode in modes:
                rows[mode].append(score_question(subject, question, note_dia, configs[mode], record))
            if index is not None:
                bm25_rows.append(score_bm25(index, question, note_dia, ks))
        if not reflect:
            continue
        reflection.allow_every_category(subject=subject, actor=actor)
        result = reflection.reflect_messages(messages)
        for key in ("turns", "seconds", "skipped", *reflection.STAT_KEYS):
            reflect_stats[key] += result[key]
        for source, count in result["sources"].items():
            reflect_stats["sources"][source] = reflect_stats["sources"].get(source, 0) + count
        for key, count in reflection.stored_counts(subject).items():
            stored[key] = stored.get(key, 0) + count
        out(
            f"{sample.sample_id}: reflected {result['turns']} turns in {result['seconds']:.1f} s "
            f"({result['facts']} facts, {result['notes']} notes, {result['pending']} pending)"
        )
        if model_id is not None:
            _embed_subject(subject, searching)  # the extracted notes
        note_dia = reflection.note_dia_ids(subject)
        fact_dia = reflection.fact_dia_ids(subject)
        for question in scored:
            reflected_rows.append(
                score_question(subject, question, note_dia, configs[primary], record, fact_dia)
            )
    summary = summarise(rows[primary], ks, skipped=skipped)
    summary["mode"] = primary
    summary["embeddings"] = model_id or "none"
    summary["modes"] = {mode: summarise(rows[mode], ks, skipped=skipped) for mode in modes}
    if bm25:
        summary["bm25"] = summarise(bm25_rows, ks, skipped=skipped)
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
    if model_id is not None:
        summary["embedding"] = {
            "model": model_id,
            "notes": embed_stats["notes"],
            "notes_per_s": rounded(embed_stats["notes"] / embed_stats["seconds"], 2)
            if embed_stats["seconds"]
            else None,
        }
    if reflect:
        summary["reflection"] = _reflection_summary(
            reflected_rows, ks, skipped=skipped, stats=reflect_stats, stored=stored
        )
    if details:
        summary["details"] = _details(rows[primary])
        if reflect:
            summary["reflection"]["details"] = _details(reflected_rows)
    return summary


def _details(rows: list[dict]) -> list[dict]:
    return [{**r, "by_k": {str(k): v for k, v in r["by_k"].items()}} for r in rows]


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
        f"mode {summary.get('mode', 'full')} (embeddings: {summary.get('embeddings', 'none')}), recalled section:",
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
    if "embedding" in summary:
        emb = summary["embedding"]
        parts.append(
            f"embedding: {emb['notes']} notes at {fmt(emb['notes_per_s'], 1)} notes/s ({emb['model']}, batched)"
        )
    if len(summary.get("modes", {})) > 1 or "bm25" in summary:
        parts += ["", *render_side_by_side(summary, ks)]
    if "reflection" in summary:
        parts += ["", *_render_reflection(summary, ks, headers, rows_of)]
    return "\n".join(parts)


def render_side_by_side(summary: dict, ks: list[int]) -> list[str]:
    """Every mode and the BM25 baseline, per category: recall@k, hit at the main k, mean context
    tokens and p50 context-build latency at the main k."""
    setups = dict(summary.get("modes", {}))
    if "bm25" in summary:
        setups["bm25 baseline"] = summary["bm25"]
    main_k = summary["main_k"]
    headers = ["category", "setup", "n", *[f"R@{k}" for k in ks], f"H@{main_k}", "tokens", "p50 ms"]
    rows = []
    names = [*[(c, f"{c} {CATEGORY_NAMES[c]}") for c in CATEGORIES], ("overall_1_4", "overall 1-4")]
    names.append(("overall_1_5", "overall 1-5"))
    for key, label in names:
        for setup, block in setups.items():
            agg = block[key] if key.startswith("overall") else block["by_category"][key]
            cost = block["cost_at_main_k"][key]
            rows.append(
                [
                    label,
                    setup,
                    agg["n"],
                    *[agg[f"recall@{k}"] for k in ks],
                    agg[f"hit@{main_k}"],
                    cost["tokens_mean"],
                    cost["latency_p50_ms"],
                ]
            )
    lines = [
        f"side by side (recalled section; tokens and p50 at k={main_k}; the baseline's tokens are its "
        "k notes alone, its latency the BM25 scoring alone):",
        table(headers, rows),
    ]
    primary = summary["modes"][summary["mode"]]["overall_1_4"] if "modes" in summary else None
    if primary is not None and "bm25" in summary and f"recall@{main_k}" in primary:
        ours, base = primary[f"recall@{main_k}"], summary["bm25"]["overall_1_4"][f"recall@{main_k}"]
        lines.append(
            f"{summary['mode']} vs bm25, recall@{main_k} categories 1-4: {fmt(ours)} vs {fmt(base)} "
            f"({(ours - base) * 100:+.1f} points)"
        )
    fts = summary.get("modes", {}).get("fts", {}).get("overall_1_4", {})
    if primary is not None and summary["mode"] != "fts" and f"recall@{main_k}" in fts:
        ours, base = primary[f"recall@{main_k}"], fts[f"recall@{main_k}"]
        lines.append(
            f"{summary['mode']} vs fts, recall@{main_k} categories 1-4: {fmt(ours)} vs {fmt(base)} "
            f"({(ours - base) * 100:+.1f} points)"
        )
    return lines


def _render_reflection(summary: dict, ks: list[int], headers: list[str], rows_of) -> list[str]:
    ref = summary["reflection"]
    extracted = ref["extracted"]
    metrics = [f"{m}@{k}" for k in ks for m in ("recall", "hit")]
    side_by_side = [
        [f"{setup} {name}", block[name]["n"], *[block[name][m] for m in metrics]]
        for name in ("overall_1_4", "overall_1_5")
        for setup, block in (
            ("turns", summary),
            ("turns+reflection", ref),
            ("  notes only", ref["without_profile"]),
        )
    ]
    return [
        "turns+reflection (turn notes + extracted notes and facts; consent allowed for every category),",
        "recalled section + profile facts:",
        table(headers, rows_of(ref)),
        "",
        "turns+reflection, recalled + memory-index + profile facts:",
        table(headers, rows_of(ref["with_memory_index"])),
        "",
        "side by side (notes only = turns+reflection without counting the profile section):",
        table(["setup", "n", *metrics], side_by_side),
        "",
        "tokens (mean total) by k, turns+reflection: "
        + ", ".join(f"k={k}: {fmt(v, 1)}" for k, v in ref["tokens_mean_by_k"].items()),
        f"context_build latency at k={ref['main_k']}, turns+reflection: p50 {fmt(ref['latency_ms']['p50'], 2)} ms, "
        f"p95 {fmt(ref['latency_ms']['p95'], 2)} ms",
        f"reflection: {ref['reflection_turns']} turns in {fmt(ref['reflection_seconds'], 1)} s = "
        f"{fmt(ref['reflection_turns_per_s'], 1)} turns/s (one run per turn, turn_reflect synchronous; "
        f"paths {ref['reflection_sources']})",
        f"extracted: {extracted['facts']} facts, {extracted['notes']} notes, {extracted['pending']} pending, "
        f"{extracted['denied']} denied, {extracted['evolved']} evolved, {extracted['retracted']} retracted; "
        f"stored: {extracted['facts_active']} active facts ({extracted['fact_versions']} versions), "
        f"{extracted['notes_rows']} reflection notes",
    ]
