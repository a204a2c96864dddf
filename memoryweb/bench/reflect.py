"""Reflection for `bench locomo --reflect`: run the turn reflection over every message, synchronously.

No Celery: `reflection_enqueue` would schedule `turn_reflect_task.delay` on commit, which in a
management command (autocommit) fires at once and sends a message through the broker. Instead
each message gets its own ReflectionRun row (what `reflection_enqueue` creates; nothing is ever
open to supersede, since every run finishes before the next message) and
`chat.reflect.turn_reflect` runs on it right away, in-process. The timed work is exactly that:
creating the run row plus `turn_reflect` (read the new messages, extract on the heuristic path
when no reflection LLM is configured, redact, ground dates, route through consent, write). The
modules `turn_reflect` imports lazily are imported before the clock starts (`warm_up`).

Consent: every sensitive category defaults to "ask" (the memory would wait as a PendingMemory
until the person approves it); the benchmark sets each subject's policy to "allow" for every
category so everything extracted is stored and can be retrieved.
"""

import importlib
import time
from collections import Counter, defaultdict

from chat.models import ReflectionRun
from chat.reflect import turn_reflect
from memory.models import ConsentCategory, Message, Note, NoteSource, Origin, Policy, ProfileFact
from memory.services import Actor
from memory.services.consent import consent_policy_set
from memoryweb.bench.locomo_data import canonical_dia_id

STAT_KEYS = ("facts", "notes", "pending", "denied", "evolved", "retracted")


def allow_every_category(*, subject, actor: Actor) -> list[str]:
    """Set the subject's consent policy to "allow" for every category; returns the slugs."""
    slugs = list(ConsentCategory.objects.order_by("slug").values_list("slug", flat=True))
    for slug in slugs:
        consent_policy_set(subject=subject, category=slug, policy=Policy.ALLOW, actor=actor)
    return slugs


def warm_up() -> float:
    """Import what `turn_reflect` imports lazily on its first call (the LLM client layer alone
    takes seconds), so the timed runs measure per-turn work, not a once-per-process cost.
    Returns the seconds it took."""
    started = time.perf_counter()
    for module in (
        "memoryweb.llm",
        "chat.reflection.llm",
        "chat.reflection.heuristics",
        "chat.reflection.ops",
    ):
        importlib.import_module(module)
    return time.perf_counter() - started


def reflect_messages(messages: list[Message]) -> dict:
    """One reflection per message, in order, each run synchronously; returns counts and wall time.

    A run covers the messages since the conversation's last finished run, so reflecting after
    every message reflects each message exactly once.
    """
    warm_up()
    totals: Counter = Counter()
    sources: Counter = Counter()
    seconds = 0.0
    for message in messages:
        started = time.perf_counter()
        run = ReflectionRun.objects.create(conversation_id=message.conversation_id, through_message=message)
        result = turn_reflect(run_id=run.pk)
        seconds += time.perf_counter() - started
        if "skipped" in result:
            totals["skipped"] += 1
            continue
        for key in STAT_KEYS:
            totals[key] += result.get(key, 0)
        totals["messages"] += result["messages"]
        sources[result["source"]] += 1
    return {
        "turns": len(messages),
        "seconds": seconds,
        **{key: totals[key] for key in (*STAT_KEYS, "messages", "skipped")},
        "sources": dict(sources),
    }


def note_dia_ids(subject) -> dict[int, set[str]]:
    """Every note of the subject → the dia_ids of the messages it came from (its NoteSource rows
    and its `source_message`)."""
    note_dia: dict[int, set[str]] = defaultdict(set)
    pairs = [
        *NoteSource.objects.filter(note__subject=subject, message__isnull=False).values_list(
            "note_id", "message__external_id"
        ),
        *Note.objects.filter(subject=subject, source_message__isnull=False).values_list(
            "pk", "source_message__external_id"
        ),
    ]
    for note_id, dia_id in pairs:
        if (canonical := canonical_dia_id(dia_id)) is not None:
            note_dia[note_id].add(canonical)
    return dict(note_dia)


def fact_dia_ids(subject) -> dict[int, set[str]]:
    """Every profile fact of the subject (all versions) → the dia_id of its source message."""
    fact_dia: dict[int, set[str]] = {}
    rows = ProfileFact.objects.filter(subject=subject, source_message__isnull=False).values_list(
        "pk", "source_message__external_id"
    )
    for fact_id, dia_id in rows:
        if (canonical := canonical_dia_id(dia_id)) is not None:
            fact_dia[fact_id] = {canonical}
    return fact_dia


def stored_counts(subject) -> dict[str, int]:
    """What reflection left in the subject: active facts, fact versions, reflection notes."""
    facts = ProfileFact.objects.filter(subject=subject, origin=Origin.REFLECTION)
    return {
        "facts_active": facts.filter(valid_to=None).count(),
        "fact_versions": facts.count(),
        "notes_rows": Note.objects.filter(subject=subject, origin=Origin.REFLECTION).count(),
    }
