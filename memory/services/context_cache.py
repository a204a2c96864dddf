"""Writes of the adaptive context cache (memory/context_cache.py decides what is served).

`memory_changed` is how every write service says "what this subject's contexts are built from
has changed": one conditional UPDATE bumps `Subject.memory_generation`, and an entry built at
an older generation is never served again. House style has no model signals, so each write
service calls it itself, inside its own transaction (a rolled-back write bumps nothing).
"""

from collections.abc import Iterable
from datetime import timedelta

from django.db.models import F, QuerySet
from django.utils import timezone

from memory.config import get_config
from memory.models import App, ContextCacheEntry, Subject


def memory_changed(*, subject_id: int | None = None, subject_ids: Iterable[int] | QuerySet = ()) -> int:
    """Bump the memory generation of the subject (or subjects): their cached contexts are stale
    from now on. Returns how many rows it bumped. Safe to repeat (each call is one more bump,
    which only makes older entries staler)."""
    ids = [subject_id] if subject_id is not None else subject_ids
    if not isinstance(ids, QuerySet):
        ids = list(ids)
        if not ids:
            return 0
    return Subject.objects.filter(pk__in=ids).update(memory_generation=F("memory_generation") + 1)


def context_cache_store(
    *,
    conversation,
    policy_hash: str,
    profile: str,
    query: str,
    payload: dict,
    generation: int,
    last_message_id: int,
) -> ContextCacheEntry:
    """Write (or replace) the conversation's entry for this policy and profile: a fresh build,
    with no hits yet. Safe to repeat: the last build wins."""
    # one UPSERT (no read first, no savepoint): this runs after every cacheable build
    (entry,) = ContextCacheEntry.objects.bulk_create(
        [
            ContextCacheEntry(
                conversation=conversation,
                policy_hash=policy_hash,
                profile=profile,
                query=query,
                payload=payload,
                generation=generation,
                last_message_id=last_message_id,
                built_at=timezone.now(),
                hits=0,
                last_hit_at=None,
            )
        ],
        update_conflicts=True,
        unique_fields=["conversation", "policy_hash", "profile"],
        update_fields=[
            "query",
            "payload",
            "generation",
            "last_message_id",
            "built_at",
            "hits",
            "last_hit_at",
        ],
    )
    return entry


def context_cache_hit(*, entry: ContextCacheEntry) -> None:
    """Count one serving of the entry (hits + 1, last_hit_at now). Each hit counts."""
    ContextCacheEntry.objects.filter(pk=entry.pk).update(hits=F("hits") + 1, last_hit_at=timezone.now())


def context_cache_prune() -> int:
    """Delete the entries older than their app's `cache.ttlSeconds` (they can no longer be
    served); returns how many. The cold-path "context-cache expiry" job. Safe to repeat."""
    deleted = 0
    for app in App.objects.all():
        cutoff = timezone.now() - timedelta(seconds=get_config(app)["cache.ttlSeconds"])
        deleted += ContextCacheEntry.objects.filter(
            conversation__subject__app=app, built_at__lt=cutoff
        ).delete()[0]
    return deleted
