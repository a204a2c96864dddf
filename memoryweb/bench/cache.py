"""`bench cache`: the adaptive context cache (memory/context_cache.py) on LoCoMo replays.

Each LoCoMo conversation is replayed the way a chat app lives it, once with `cache.enabled` on
and once with it off, each pass into a fresh App (the first pass's subjects are deleted before
the second: full-text statistics are table-wide, so its notes would otherwise shift the other
pass's ranking).

Replay: one subject per LoCoMo conversation, one chat Conversation per session. Before each
turn the context for that turn's text is built in its session's conversation (as a chat app
asks for memory before answering), then the turn is posted (`message_add`). When a session
ends, its turns become notes (`note_store`, the message as source), the way a chat app's
memory is extracted after the fact; that write bumps the subject's memory generation, so the
first turn of the next session is always built afresh. Hit rate and build latency (wall clock
around `context_build`, p50/p95) are over the replayed turns.

Recall: after the replay, the conversation's questions are asked in one more conversation,
each as a follow-up turn after its predecessor (built with `recallInjection.k` = 10, then
posted), so a question may be served the context built for the one before it when the cache
judges it fresh enough. recall@10 is the fraction of the question's evidence turns covered by
the notes of the `recalled` section (as `bench locomo` scores it), for the contexts actually
served: with the cache on and off, side by side.
"""

import time
from collections.abc import Callable
from pathlib import Path

from django.utils import timezone

from memory.config import MemoryConfig, get_config
from memory.context import context_build
from memory.models import Subject
from memory.services import Actor, app_create, note_store, subject_delete, subject_get_or_create
from memory.services.conversations import conversation_get_or_create, message_add
from memoryweb.bench.locomo import _covered, config_for_k
from memoryweb.bench.locomo_data import Sample, load, parse_sample
from memoryweb.bench.reflect import note_dia_ids
from memoryweb.bench.report import latency_summary, mean, rounded, table

RECALL_K = 10


def _replay(
    sample: Sample, *, app, actor: Actor, config: MemoryConfig, limit: int | None
) -> tuple[Subject, dict]:
    """Replay the sample's turns (at most `limit`); returns the subject and the per-turn figures."""
    subject = subject_get_or_create(app=app, external_id=sample.sample_id)
    roles = {sample.speaker_a: "user", sample.speaker_b: "assistant"}
    latencies: list[float] = []
    hit_latencies: list[float] = []
    hits = 0
    left = limit
    for session in sample.sessions:
        if left is not None and left <= 0:
            break
        conversation, _ = conversation_get_or_create(
            subject=subject, external_id=f"session_{session.number}", actor=actor
        )
        posted = []
        for turn in session.turns[:left]:
            started = time.perf_counter()
            context = context_build(
                subject=subject, message=turn.message_text, config=config, conversation=conversation
            )
            latencies.append((time.perf_counter() - started) * 1000)
            if context.from_cache:
                hits += 1
                hit_latencies.append(latencies[-1])
            message, _ = message_add(
                conversation=conversation,
                role=roles.get(turn.speaker, "user"),
                text=turn.message_text,
                occurred_at=session.date,
                external_id=turn.dia_id,
                actor=actor,
            )
            posted.append((turn, message))
        if left is not None:
            left -= len(posted)
        for turn, message in posted:  # the session's memory, once it is over
            note_store(
                subject=subject,
                content=turn.note_content,
                conversation=conversation,
                source_message=message,
                occurred_at=session.date,
                actor=actor,
                config=config,
            )
    return subject, {"latencies": latencies, "hits": hits, "hit_latencies": hit_latencies}


def _ask(sample: Sample, subject, *, actor: Actor, config: MemoryConfig, questions: int | None) -> list[dict]:
    """Ask the sample's questions with evidence, each a follow-up turn of one conversation."""
    note_dia = note_dia_ids(subject)
    conversation, _ = conversation_get_or_create(subject=subject, external_id="questions", actor=actor)
    asked = [q for q in sample.questions if q.evidence][:questions]
    rows = []
    for question in asked:
        started = time.perf_counter()
        context = context_build(
            subject=subject, message=question.text, config=config, conversation=conversation
        )
        latency = (time.perf_counter() - started) * 1000
        evidence = set(question.evidence)
        recalled = _covered(context.items, note_dia, {"recalled"}) & evidence
        rows.append(
            {
                "recall": len(recalled) / len(evidence),
                "from_cache": context.from_cache,
                "staleness": context.staleness,
                "latency_ms": latency,
            }
        )
        message_add(conversation=conversation, role="user", text=question.text, actor=actor)
    return rows


def _pass(samples: list[Sample], *, name: str, enabled: bool, limit, questions, actor: Actor, out) -> dict:
    app = app_create(
        name=name,
        config={"memory": {"embeddings": {"provider": "none"}, "cache": {"enabled": enabled}}},
        actor=actor,
    )
    config = get_config(app)
    asking = config_for_k(config, RECALL_K)
    latencies: list[float] = []
    hit_latencies: list[float] = []
    hits = 0
    rows: list[dict] = []
    subjects = []
    for sample in samples:
        subject, replay = _replay(sample, app=app, actor=actor, config=config, limit=limit)
        subjects.append(subject)
        latencies += replay["latencies"]
        hit_latencies += replay["hit_latencies"]
        hits += replay["hits"]
        asked = _ask(sample, subject, actor=actor, config=asking, questions=questions)
        rows += asked
        out(
            f"cache {'on ' if enabled else 'off'} {sample.sample_id}: {len(replay['latencies'])} turns, "
            f"{replay['hits']} served from cache; {len(asked)} questions, "
            f"{sum(r['from_cache'] for r in asked)} served from cache"
        )
    for subject in subjects:  # the other pass must not rank against these notes
        subject_delete(subject=subject, actor=actor)
    served = [r for r in rows if r["from_cache"]]
    return {
        "app": name,
        "turns": len(latencies),
        "hits": hits,
        "hit_rate": rounded(hits / len(latencies), 4) if latencies else None,
        "latency_ms": latency_summary(latencies),
        "hit_latency_ms": latency_summary(hit_latencies),
        "questions": len(rows),
        "question_hits": len(served),
        "recall_at_10": rounded(mean([r["recall"] for r in rows]), 4),
        "recall_at_10_of_cached": rounded(mean([r["recall"] for r in served]), 4),
        "staleness_served": latency_summary([r["staleness"] for r in served]),
        "question_latency_ms": latency_summary([r["latency_ms"] for r in rows]),
    }


def run(
    data: list[dict] | str | Path,
    *,
    samples: int | None = None,
    limit: int | None = None,
    questions: int | None = None,
    out: Callable[[str], None] = print,
) -> dict:
    """Replay the first `samples` conversations (at most `limit` turns and `questions` questions
    each) with the cache on, then off (after a short warm-up replay); returns both passes and
    the recall difference."""
    raw = load(data) if isinstance(data, (str, Path)) else data
    parsed = [parse_sample(s) for s in raw[:samples]]
    actor = Actor.system("bench")
    stamp = f"{timezone.now():%Y%m%d-%H%M%S-%f}"
    # a short throwaway replay first: the first builds of a process pay for its cold start
    # (imports, compiled statements, page cache), which would land on whichever pass came first
    _pass(
        parsed[:1],
        name=f"bench-cache-warmup-{stamp}",
        enabled=True,
        limit=20,
        questions=5,
        actor=actor,
        out=lambda _: None,
    )
    on, off = (
        _pass(
            parsed,
            name=f"bench-cache-{label}-{stamp}",
            enabled=enabled,
            limit=limit,
            questions=questions,
            actor=actor,
            out=out,
        )
        for label, enabled in (("on", True), ("off", False))
    )
    delta = None
    if on["recall_at_10"] is not None and off["recall_at_10"] is not None:
        delta = rounded(on["recall_at_10"] - off["recall_at_10"], 4)
    return {"samples": len(parsed), "limit": limit, "on": on, "off": off, "recall_delta": delta}


def render(summary: dict) -> str:
    on, off = summary["on"], summary["off"]
    rows = [
        ["turns replayed", on["turns"], off["turns"]],
        ["served from cache", on["hits"], off["hits"]],
        ["hit rate", on["hit_rate"], off["hit_rate"]],
        ["build p50 ms", on["latency_ms"]["p50"], off["latency_ms"]["p50"]],
        ["build p95 ms", on["latency_ms"]["p95"], off["latency_ms"]["p95"]],
        ["cache hit p50 ms", on["hit_latency_ms"]["p50"], None],
        ["questions", on["questions"], off["questions"]],
        ["questions from cache", on["question_hits"], off["question_hits"]],
        ["recall@10", on["recall_at_10"], off["recall_at_10"]],
    ]
    lines = [table(["", "cache on", "cache off"], rows)]
    delta = summary["recall_delta"]
    if delta is not None:
        lines.append(f"recall@10 with the cache minus without: {delta * 100:+.1f} points")
    return "\n".join(lines)
