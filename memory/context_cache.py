"""The adaptive context cache (issue 12): a follow-up turn whose context has not significantly
changed is served the conversation's last build instead of a new one.

Only conversation-bound builds that record (`record=True`) take part. The key is the
conversation, the policy hash (mode manifest + configuration, the request's `k` included) and
the operational profile. An entry is served when all of these hold:

- `cache.enabled`, and the entry is younger than `cache.ttlSeconds`;
- it was built at the subject's current `memory_generation` (every write service bumps it:
  memory/services/context_cache.py `memory_changed`);
- no message arrived in another conversation of the subject since (the entry keeps the
  subject-wide newest message id of its build); messages of its own conversation are what
  the staleness counts, they do not invalidate;
- its staleness (`staleness` below) is at most `cache.maxStaleness`.

Staleness, in [0, 1]. With m the messages of this conversation since the build, t the seconds
since it, N the terms of the new message and Q those of the cached query (memory.text
`query_terms`), F = cache.fullAfterMessages and T = cache.fullAfterSeconds:

    p = min(1, (t / (m + 1)) / (T / F))     pace: seconds a turn since the build, against the
                                            pace at which the message and time terms agree
    a = 1                        if m ≥ F   messages since the build …
      = (m / F)·(1 + p)/2        otherwise  … of which quick turns (p → 0) count half
    b = min(1, t / T)                       elapsed time
    c = 1 − |N ∩ Q| / |N|                   topic drift: the new message's share of new terms
                                            (0 when N is empty: "ok", "go on")
    staleness = 1                           if N and Q share no term (a new topic)
              = 1 − (1 − a)(1 − b)(1 − c)   otherwise

Each term is a reason to rebuild and they combine like independent chances, so any one of
them at 1 makes the entry fully stale and none can lower another. Pace damps only the message
term: turns in quick succession are one exchange going on (a continuation), slow ones each a
step away from the build. The topic term is never damped: a follow-up that brings in new
words asks for memory the cached build did not look for.
"""

import time
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from memory.config import MemoryConfig
from memory.models import ContextCacheEntry, Conversation, Message, Subject
from memory.services import context_deliveries_update, notes_mark_recalled, retrieval_event_record
from memory.services.context_cache import context_cache_hit, context_cache_store
from memory.services.evidence import evidence_mark_recalled
from memory.text import query_terms

if TYPE_CHECKING:
    from memory.context import Context


def staleness(*, built_at, messages_since: int, query: str, cached_query: str, config: MemoryConfig) -> float:
    """How stale a build for `cached_query` made at `built_at` is for the new message `query`,
    `messages_since` messages of the conversation later, now (see the module docstring)."""
    full_messages = max(1, config["cache.fullAfterMessages"])
    full_seconds = max(1.0, float(config["cache.fullAfterSeconds"]))
    new_terms, cached_terms = set(query_terms(query)), set(query_terms(cached_query))
    if new_terms and not new_terms & cached_terms:
        return 1.0
    elapsed = max(0.0, (timezone.now() - built_at).total_seconds())
    messages = max(0, messages_since)
    pace = min(1.0, (elapsed / (messages + 1)) / (full_seconds / full_messages))
    a = 1.0 if messages >= full_messages else messages / full_messages * (1.0 + pace) / 2.0
    b = min(1.0, elapsed / full_seconds)
    c = 1.0 - len(new_terms & cached_terms) / len(new_terms) if new_terms else 0.0
    value = 1.0 - (1.0 - a) * (1.0 - b) * (1.0 - c)
    return min(1.0, max(0.0, value))


@dataclass
class CacheProbe:
    """What a cacheable build is keyed by and what the subject looked like before it: the
    entry it will store carries these (read before the build, so a write during it is not
    masked)."""

    subject: Subject
    conversation: Conversation
    policy_hash: str
    profile: str
    generation: int
    newest_message_id: int


def context_cache_probe(
    *, subject, conversation, record: bool, config: MemoryConfig, policy_hash: str, profile: str
):
    """The probe of a build that takes part in the cache, or None (no conversation, not
    recorded, or `cache.enabled` off)."""
    if conversation is None or not record or not config["cache.enabled"]:
        return None
    # one statement: the generation and the subject-wide newest message
    generation, newest = (
        Subject.objects.filter(pk=subject.pk)
        .annotate(newest=Max("conversations__messages__id"))
        .values_list("memory_generation", "newest")
        .first()
    ) or (0, 0)
    return CacheProbe(subject, conversation, policy_hash, profile, generation, newest or 0)


def _servable(probe: CacheProbe, query: str, config: MemoryConfig) -> tuple[ContextCacheEntry, float] | None:
    entry = ContextCacheEntry.objects.filter(
        conversation=probe.conversation, policy_hash=probe.policy_hash, profile=probe.profile
    ).first()
    if entry is None or entry.generation != probe.generation:
        return None
    if timezone.now() - entry.built_at >= timedelta(seconds=config["cache.ttlSeconds"]):
        return None
    here = Q(conversation=probe.conversation)
    later = Message.objects.filter(conversation__subject_id=probe.subject.pk, id__gt=entry.last_message_id)
    counts = later.aggregate(here=Count("id", filter=here), elsewhere=Count("id", filter=~here))
    if counts["elsewhere"]:
        return None  # the subject spoke elsewhere: that turn's memory may matter here
    value = staleness(
        built_at=entry.built_at,
        messages_since=counts["here"],
        query=query,
        cached_query=entry.query,
        config=config,
    )
    if value > config["cache.maxStaleness"]:
        return None
    return entry, value


def context_cache_serve(*, probe: CacheProbe | None, query: str, config: MemoryConfig, started: float):
    """The cached context for `query` when the probe's entry may be served (see the module
    docstring), recorded like a build (a RetrievalEvent with `from_cache`, the recalls, which
    blocks the conversation now holds) and counted as a hit; else None."""
    if probe is None:
        return None
    found = _servable(probe, query, config)
    if found is None:
        return None
    entry, value = found
    context = _context(entry.payload)
    context.query = query
    context.from_cache = True
    context.staleness = value
    context.latency_ms = (time.perf_counter() - started) * 1000
    with transaction.atomic():
        blocks = [context.stable_prefix, *context.sections]
        unchanged = context_deliveries_update(
            conversation=probe.conversation, digests={b.name: b.digest for b in blocks}
        )
        for block in blocks:
            block.unchanged = unchanged[block.name]
        recalled = [i for i in context.items if i.section == "recalled"]
        notes_mark_recalled(note_ids=[int(i.id[2:]) for i in recalled if i.kind == "note"])
        evidence_mark_recalled(evidence_ids=[int(i.id[2:]) for i in recalled if i.kind == "evidence"])
        event = retrieval_event_record(
            subject=probe.subject,
            conversation=probe.conversation,
            query=query,
            rewritten_query=context.rewritten_query if context.rewritten_query != query else "",
            items=[i.as_dict() for i in context.items],
            tokens=context.tokens(),
            latency_ms=context.latency_ms,
            mode=context.mode,
            profile=context.profile,
            policy_hash=context.policy_hash,
            from_cache=True,
            staleness=value,
        )
        context_cache_hit(entry=entry)
    context.retrieval_event_id = event.pk
    return context


def context_cache_remember(*, probe: CacheProbe | None, context: "Context") -> None:
    """Store a fresh build as the probe's entry (replacing the one before)."""
    if probe is None or not context.enabled:
        return
    context_cache_store(
        conversation=probe.conversation,
        policy_hash=probe.policy_hash,
        profile=probe.profile,
        query=context.query,
        payload=_payload(context),
        generation=probe.generation,
        last_message_id=probe.newest_message_id,
    )


def _payload(context: "Context") -> dict:
    """The build as stored: its blocks and items (not which blocks a conversation held: that is
    worked out again at each serving)."""

    def block(b) -> dict:
        return {"name": b.name, "text": b.text, "cap": b.cap, "omitted": b.omitted}

    return {
        "rewritten_query": context.rewritten_query,
        "stable_prefix": block(context.stable_prefix),
        "sections": [block(b) for b in context.sections],
        "items": [asdict(i) for i in context.items],
        "summary": context.summary,
        "mode": context.mode,
        "profile": context.profile,
        "policy_hash": context.policy_hash,
    }


def _context(payload: dict) -> "Context":
    from memory.context import Block, Context, Item  # the builder imports this module

    return Context(
        query="",
        rewritten_query=payload["rewritten_query"],
        stable_prefix=Block(**payload["stable_prefix"]),
        sections=[Block(**b) for b in payload["sections"]],
        items=[Item(**i) for i in payload["items"]],
        summary=payload["summary"],
        mode=payload["mode"],
        profile=payload["profile"],
        policy_hash=payload["policy_hash"],
    )
