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

With `reflect`, every conversation is also posted the way a chat app posts it, into a second
App with the default pipeline (memoryweb/bench/reflect.py): each turn through
`chat.services.messages_add` (the service of the REST `messages` and `responses` endpoints),
first speaker "user", second "assistant", each with its speaker's name (the message's `name`),
no note stored by the benchmark; every assistant
message queues the turn's reflection, run inline (background tasks are eager: the caller sets
it, as `manage.py bench` does for its in-process benches; `run` refuses otherwise), on the
heuristic path (`llm.reflection` "none"), with the default consent policy (sensitive memories
wait as pending). The questions are scored again, in the primary mode, on what the pipeline
left ("reflect"): an item of the context counts for the dia_ids of its source messages
whatever its kind (a note's source message and NoteSource rows, a fact's source message, an
evidence unit's message, …: `reflect.Provenance`), every section but `memory-index` counted
(with it: `with_memory_index`); `by_kind` gives the recall of each kind's items alone. The
harness figures are unchanged by `reflect` (the pipeline posts only after every harness
conversation is scored, as the full-text statistics are table-wide); the two are printed side
by side.
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
from memoryweb.bench import summaries as session_summaries
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
from memoryweb.celery import app as celery_app

__all__ = ["load", "normalise_evidence", "parse_sample", "parse_session_date", "render", "run"]


def ingest(sample: Sample, *, app, actor: Actor, config) -> tuple[object, list, dict]:
    """Store every turn as a message and a note; returns the subject, the messages in order, and stats."""
    subject = subject_get_or_create(app=app, external_id=sample.sample_id)
    roles = {sample.speaker_a: "user", sample.speaker_b: "assistant"}
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
                text=turn.message_text,
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


def _covered(items, note_dia: dict[int, set[str]], sections: set[str]) -> set[str]:
    """The dia_ids the context's notes in `sections` come from."""
    covered: set[str] = set()
    for item in items:
        if item.kind == "note" and item.section in sections:
            covered |= note_dia.get(int(item.id.split(":", 1)[1]), set())
    return covered


def _question_row(
    subject, question: Question, configs: dict[int, MemoryConfig], record: bool, measure
) -> dict:
    """Build the context at each k and measure evidence coverage; one row per question.
    `measure(items, evidence)` gives the evidence turns recalled, those with the memory-index
    pointers too, and any extra fields of the row."""
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
        recalled, indexed, extra = measure(context.items, evidence)
        row["by_k"][k] = {
            "recall": len(recalled) / len(evidence),
            "hit": 1.0 if recalled else 0.0,
            "recall_index": len(indexed) / len(evidence),
            "hit_index": 1.0 if indexed else 0.0,
            "tokens": context.tokens()["total"],
            "latency_ms": latency,
            **extra,
        }
    return row


def score_question(
    subject, question: Question, note_dia, configs: dict[int, MemoryConfig], record: bool
) -> dict:
    """The harness's row: the notes of `### recalled` (and of the index) count for their turns."""

    def measure(items, evidence):
        recalled = _covered(items, note_dia, {"recalled"}) & evidence
        indexed = _covered(items, note_dia, {"recalled", "memory-index"}) & evidence
        return recalled, indexed, {}

    return _question_row(subject, question, configs, record, measure)


def score_reflect_question(
    subject,
    question: Question,
    provenance: reflection.Provenance,
    configs: dict[int, MemoryConfig],
    record: bool,
) -> dict:
    """`score_question` over what the pipeline stored: every item of the context, whatever its
    kind, counts for the dia_ids of its source messages (all sections but `memory-index`; with
    it for `recall_index`); `by_kind` is the recall of each kind's items alone."""

    def measure(items, evidence):
        by_kind = provenance.dia_ids(items, exclude_sections=POINTER_SECTIONS)
        recalled = set().union(*by_kind.values()) & evidence
        indexed = set().union(*provenance.dia_ids(items).values()) & evidence
        by_kind_recall = {kind: len(ids & evidence) / len(evidence) for kind, ids in by_kind.items()}
        return recalled, indexed, {"recall_by_kind": by_kind_recall}

    return _question_row(subject, question, configs, record, measure)


POINTER_SECTIONS = frozenset({"memory-index"})  # one-line pointers, not the memory itself


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


def _by_kind(rows: list[dict], ks: list[int]) -> dict:
    """Recall of each item kind's items alone, overall 1-4 and 1-5, at every k."""
    kinds = sorted({kind for r in rows for k in ks for kind in r["by_k"][k]["recall_by_kind"]})
    groups = {"overall_1_4": [r for r in rows if r["category"] in {"1", "2", "3", "4"}], "overall_1_5": rows}
    return {
        kind: {
            name: {
                f"recall@{k}": rounded(
                    mean([r["by_k"][k]["recall_by_kind"].get(kind, 0.0) for r in group]), 4
                )
                for k in ks
            }
            for name, group in groups.items()
        }
        for kind in kinds
    }


CONSENT_SETUPS = {
    "default": "the default policy (sensitive categories ask: those memories wait as pending)",
    "allow": "every consent category allowed before posting (what the person gets once they approve all)",
}


def _reflect_summary(rows: list[dict], ks: list[int], *, skipped: int, stats: dict) -> dict:
    block = summarise(rows, ks, skipped=skipped)
    block["by_kind"] = _by_kind(rows, ks)
    block["app"] = stats["app"]
    block["posting"] = {
        "turns": stats["turns"],
        "seconds": rounded(stats["seconds"], 3),
        "turns_per_s": rounded(stats["turns"] / stats["seconds"], 2) if stats["seconds"] else None,
        "warmup_seconds": rounded(stats["warmup_seconds"], 3),  # imports, not timed
        "what": "chat.services.messages_add, one message a call; reflection, links and embeddings inline",
    }
    block["reflection"] = {
        "runs": stats["runs"],
        "sources": stats["sources"],
        "unreflected_messages": stats["unreflected_messages"],
        **{key: stats[key] for key in reflection.STAT_KEYS},
    }
    block["stored"] = stats["stored"]
    block["consent"] = CONSENT_SETUPS[stats["consent"]]
    block["ingest_mode"] = (
        'first speaker role "user", second "assistant", text as said; no note stored by the benchmark; '
        "reflection queued by every assistant message, heuristic path"
    )
    return block


def harness_vs_reflect(summary: dict) -> dict:
    """The two setups' overall and per-category recall/hit, side by side."""
    names = ["overall_1_4", "overall_1_5", *CATEGORIES]

    def pick(block: dict, name: str) -> dict:
        return block[name] if name.startswith("overall") else block["by_category"][name]

    return {
        name: {"harness": pick(summary, name), "reflect": pick(summary["reflect"], name)} for name in names
    }


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
    embedding_model: str = "",
    bm25: bool = False,
    limit_conversations: int | None = None,
    skip_conversations: int = 0,
    record: bool = False,
    details: bool = False,
    reflect: bool = False,
    reflect_consent: str = "default",
    summaries: bool = False,
    out: Callable[[str], None] = print,
) -> dict:
    """Ingest each conversation into its own subject of a fresh App and score every question
    under each of `modes` (the first is the primary one), and with `bm25` the baseline too.

    With `reflect`, also post every conversation through the chat app's path into a second App
    (default pipeline, heuristic reflection) and score it in the primary mode (the summary's
    "reflect" key, and "harness_vs_reflect"). Background tasks must run inline (eager).
    `reflect_consent` "allow" posts into subjects that allow every consent category (the
    default policy asks for each sensitive one).

    With `summaries`, after all of that the session-summary pipeline runs on each harness
    subject and BM25 is scored without and with its extractions' items as extra units
    (memoryweb/bench/summaries.py; the summary's "summaries" key)."""
    modes = list(dict.fromkeys(modes))
    unknown = [m for m in modes if m not in MODES]
    if not modes or unknown:
        raise BenchError(f"unknown retrieval mode {unknown[0] if unknown else ''!r}: use {', '.join(MODES)}")
    if embeddings == "none" and VECTOR_MODES & set(modes):
        raise BenchError("modes vector and hybrid need embeddings: use embeddings local")
    if reflect_consent not in CONSENT_SETUPS:
        raise BenchError(f"unknown reflect consent {reflect_consent!r}: use default or allow")
    if reflect and not celery_app.conf.task_always_eager:
        raise BenchError("reflect needs background tasks run inline (Celery eager), as manage.py bench sets")
    raw = load(data) if isinstance(data, (str, Path)) else data
    # `skip_conversations` first, then at most `limit_conversations`: conversations 3-5 are
    # skip 2, so a change tuned on the first ones can be checked on the others
    chosen_raw = raw[skip_conversations:]
    samples = [parse_sample(s) for s in chosen_raw[:limit_conversations]]
    actor = Actor.system("bench")
    # notes are embedded in batches after ingest, not one by one as note_store would
    stamp = f"{timezone.now():%Y%m%d-%H%M%S-%f}"
    app = app_create(
        name=f"bench-locomo-{stamp}", config={"memory": {"embeddings": {"provider": "none"}}}, actor=actor
    )
    base = get_config(app)
    # embedding_model: one of memory/embedding_models.py's MODELS for the local provider ("" = default)
    chosen = {"provider": embeddings, "model": embedding_model}
    searching = base.with_overrides({"embeddings": chosen})
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
    harnessed: list[tuple[Sample, object, dict]] = []
    reflect_stats: dict = {"turns": 0, "seconds": 0.0, "runs": {}, "sources": {}, "stored": {}}
    reflect_stats |= dict.fromkeys((*reflection.STAT_KEYS, "unreflected_messages"), 0)
    if reflect:
        # the default pipeline: the reflection LLM off whatever the environment says (heuristic
        # path), the notes embedded as they are stored when embeddings are on
        pipeline_app = app_create(
            name=f"bench-locomo-reflect-{stamp}",
            config={"memory": {"llm": {"reflection": "none"}, "embeddings": chosen}},
            actor=actor,
        )
        pipeline = get_config(pipeline_app)
        reflect_configs = {
            k: config_for_k(pipeline.with_overrides({"retrieve": {"mode": primary}}), k) for k in ks
        }
        reflect_stats["app"] = pipeline_app.name
        reflect_stats["consent"] = reflect_consent
        reflect_stats["warmup_seconds"] = reflection.warm_up()
        provenance = reflection.Provenance()
    for sample in samples:
        subject, _, stats = ingest(sample, app=app, actor=actor, config=base)
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
        harnessed.append((sample, subject, note_dia))
        index = Bm25Index.for_subject(subject) if bm25 else None
        for question in sample.questions:
            dropped += len(question.dropped)
            if not question.evidence:
                skipped += 1
                continue
            for mode in modes:
                rows[mode].append(score_question(subject, question, note_dia, configs[mode], record))
            if index is not None:
                bm25_rows.append(score_bm25(index, question, note_dia, ks))
    # the pipeline after every harness conversation: full-text statistics are table-wide, so its
    # memories would otherwise shift the later harness scores away from a plain run's
    for sample in samples if reflect else []:
        posted, posting = reflection.post_sample(
            sample, app=pipeline_app, actor=actor, allow_all=reflect_consent == "allow"
        )
        result = reflection.reflection_stats(posted)
        stored = reflection.stored_counts(posted)
        for key in ("turns", "seconds"):
            reflect_stats[key] += posting[key]
        for key in (*reflection.STAT_KEYS, "unreflected_messages"):
            reflect_stats[key] += result[key]
        for name, counts in (("runs", result["runs"]), ("sources", result["sources"]), ("stored", stored)):
            for key, count in counts.items():
                reflect_stats[name][key] = reflect_stats[name].get(key, 0) + count
        out(
            f"{sample.sample_id}: posted {posting['turns']} turns through messages_add in "
            f"{posting['seconds']:.1f} s with reflection inline ({result['facts']} facts, {result['notes']} "
            f"notes, {result['pending']} pending, {result['unreflected_messages']} turns never reflected)"
        )
        for question in (q for q in sample.questions if q.evidence):
            reflected_rows.append(
                score_reflect_question(posted, question, provenance, reflect_configs, record)
            )
    summaries_block = _summaries(harnessed, app=app, actor=actor, ks=ks, out=out) if summaries else None
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
        summary["reflect"] = _reflect_summary(reflected_rows, ks, skipped=skipped, stats=reflect_stats)
        summary["harness_vs_reflect"] = harness_vs_reflect(summary)
    if summaries_block is not None:
        summary["summaries"] = summaries_block
    if details:
        summary["details"] = _details(rows[primary])
        if reflect:
            summary["reflect"]["details"] = _details(reflected_rows)
    return summary


def _summaries(harnessed: list, *, app, actor: Actor, ks: list[int], out) -> dict:
    """BM25 over the harness's notes, without and with the session extractions' items."""
    from memory.models import Subject

    session_summaries.backend_on(app, actor=actor)
    without: list[dict] = []
    with_units: list[dict] = []
    stats: dict = {"extractions": 0, "units": 0, "unmapped_units": 0, "runs": {}}
    for sample, subject, note_dia in harnessed:
        subject = Subject.objects.select_related("app").get(pk=subject.pk)  # the App's new config
        rows_without, rows_with, sample_stats = session_summaries.run_sample(
            sample, subject, note_dia, actor=actor, ks=ks
        )
        without += rows_without
        with_units += rows_with
        for key in ("extractions", "units", "unmapped_units"):
            stats[key] += sample_stats[key]
        stats["runs"][sample_stats["run_status"]] = stats["runs"].get(sample_stats["run_status"], 0) + 1
        out(
            f"{sample.sample_id}: summaries: {sample_stats['extractions']} extractions, "
            f"{sample_stats['units']} units ({sample_stats['unmapped_units']} sharing no word with a turn)"
        )

    def block(rows: list[dict]) -> dict:
        return {
            "overall_1_4": _aggregate(
                [r for r in rows if r["category"] in {"1", "2", "3", "4"}], ks, index=False
            ),
            "overall_1_5": _aggregate(rows, ks, index=False),
            "by_category": {
                c: _aggregate([r for r in rows if r["category"] == c], ks, index=False) for c in CATEGORIES
            },
        }

    main_k = 10 if 10 in ks else min(ks, key=lambda k: abs(k - 10))
    units_in_top = mean([r["by_k"][main_k]["summary_units"] for r in with_units])
    return {
        "ranker": "bm25 (rank_bm25) over notes, then notes + extraction units",
        "mapping": f"a unit counts for the <= {session_summaries.MAP_TURNS} turns of its session sharing most words",
        "without": block(without),
        "with": block(with_units),
        "main_k": main_k,
        "summary_units_in_top_main_k": rounded(units_in_top, 3),
        **stats,
    }


def _render_summaries(block: dict, ks: list[int]) -> list[str]:
    headers = ["category", "n", *[f"R@{k} without" for k in ks], *[f"R@{k} with" for k in ks]]
    rows = []
    names = [*[(c, f"{c} {CATEGORY_NAMES[c]}") for c in CATEGORIES], ("overall_1_4", "overall 1-4")]
    for key, label in names:
        a = block["without"][key] if key.startswith("overall") else block["without"]["by_category"][key]
        b = block["with"][key] if key.startswith("overall") else block["with"]["by_category"][key]
        rows.append([label, a["n"], *[a[f"recall@{k}"] for k in ks], *[b[f"recall@{k}"] for k in ks]])
    k = block["main_k"]
    multi_without = block["without"]["by_category"]["1"][f"recall@{k}"]
    multi_with = block["with"]["by_category"]["1"][f"recall@{k}"]
    return [
        f"session summaries as extra units ({block['ranker']}; {block['mapping']}): {block['extractions']} "
        f"extractions, {block['units']} units, {block['unmapped_units']} mapped to no turn; "
        f"{fmt(block['summary_units_in_top_main_k'], 2)} units in a question's top {k} on average",
        table(headers, rows),
        f"multi-hop (category 1) recall@{k}: {fmt(multi_without)} without, {fmt(multi_with)} with"
        + (
            f" ({(multi_with - multi_without) * 100:+.1f} points)"
            if multi_with is not None and multi_without is not None
            else ""
        ),
    ]


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
    if "reflect" in summary:
        parts += ["", *_render_reflect(summary, ks)]
    if "summaries" in summary:
        parts += ["", *_render_summaries(summary["summaries"], ks)]
    return "\n".join(parts)


def _setups_table(setups: dict[str, dict], ks: list[int], main_k: int) -> tuple[list[str], list[list]]:
    """Per category and overall, one row per setup: recall@k, hit at the main k, mean context
    tokens and p50 context-build latency at the main k."""
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
    return headers, rows


def render_side_by_side(summary: dict, ks: list[int]) -> list[str]:
    """Every mode and the BM25 baseline, per category: recall@k, hit at the main k, mean context
    tokens and p50 context-build latency at the main k."""
    setups = dict(summary.get("modes", {}))
    if "bm25" in summary:
        setups["bm25 baseline"] = summary["bm25"]
    main_k = summary["main_k"]
    headers, rows = _setups_table(setups, ks, main_k)
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


def _render_reflect(summary: dict, ks: list[int]) -> list[str]:
    ref = summary["reflect"]
    main_k = summary["main_k"]
    headers, rows = _setups_table({"harness": summary, "reflect": ref}, ks, main_k)
    kinds = [
        [kind, name, *[block[name][f"recall@{k}"] for k in ks]]
        for kind, block in ref["by_kind"].items()
        for name in ("overall_1_4", "overall_1_5")
    ]
    posting, refl, stored = ref["posting"], ref["reflection"], ref["stored"]
    lines = [
        f"harness vs reflect, mode {summary['mode']} (harness: a note stored per turn, recalled section; "
        "reflect: the turns posted through messages_add with the default pipeline, every item outside "
        f"memory-index counted for its source turns; tokens and p50 at k={main_k}):",
        table(headers, rows),
        "",
        "reflect, recall of each item kind alone:",
        table(["kind", "group", *[f"R@{k}" for k in ks]], kinds) if kinds else "(no item reached a context)",
        "",
        "reflect, counting memory-index pointers too: "
        + ", ".join(f"R@{k} {fmt(ref['with_memory_index']['overall_1_4'][f'recall@{k}'])}" for k in ks)
        + " (categories 1-4)",
        f"posting: {posting['turns']} turns in {fmt(posting['seconds'], 1)} s = {fmt(posting['turns_per_s'], 1)} "
        "turns/s (messages_add one message a call; reflection, links and embeddings inline)",
        f"reflection: runs {refl['runs']}, paths {refl['sources']}, {refl['facts']} facts, {refl['notes']} notes, "
        f"{refl['pending']} pending (consent: {ref['consent']}), {refl['denied']} denied, {refl['evolved']} evolved, "
        f"{refl['retracted']} retracted; {refl['unreflected_messages']} turns never reflected (no reply after them)",
        "stored: " + ", ".join(f"{key} {value}" for key, value in stored.items()),
    ]
    return lines
