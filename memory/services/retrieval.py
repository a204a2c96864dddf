from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from memory.config import get_config
from memory.models import App, ContextDelivery, RetrievalEvent


def retrieval_event_record(
    *,
    subject,
    conversation,
    query,
    rewritten_query,
    items,
    tokens,
    latency_ms,
    mode: str = "",
    profile: str = "normal",
    policy_hash: str = "",
    from_cache: bool = False,
    staleness: float | None = None,
) -> RetrievalEvent:
    """Append the record of one context build (or cache hit). Each is its own event."""
    return RetrievalEvent.objects.create(
        subject=subject,
        conversation=conversation,
        query=query,
        rewritten_query=rewritten_query,
        items=items,
        tokens=tokens,
        latency_ms=latency_ms,
        mode=mode,
        profile=profile,
        policy_hash=policy_hash,
        from_cache=from_cache,
        staleness=staleness,
    )


def context_deliveries_update(*, conversation, digests: dict[str, str]) -> dict[str, bool]:
    """Record which block digests the conversation now holds.

    Returns {block: unchanged} — whether the conversation already held that exact block.
    Repeating it with the same digests answers "unchanged" for all and writes nothing new.
    Two statements whatever the number of blocks: the read, and one UPSERT of the blocks that
    are new or changed (inside the caller's transaction, no savepoint of its own).
    """
    with transaction.atomic(savepoint=False):
        held = dict(
            ContextDelivery.objects.filter(conversation=conversation, block__in=list(digests)).values_list(
                "block", "digest"
            )
        )
        unchanged = {block: held.get(block) == digest for block, digest in digests.items()}
        now = timezone.now()
        written = [
            ContextDelivery(conversation=conversation, block=block, digest=digest, updated_at=now)
            for block, digest in digests.items()
            if not unchanged[block]
        ]
        if written:
            ContextDelivery.objects.bulk_create(
                written,
                update_conflicts=True,
                unique_fields=["conversation", "block"],
                update_fields=["digest", "updated_at"],
            )
    return unchanged


def retrieval_events_prune() -> int:
    """Delete RetrievalEvents older than each app's `retention.retrievalEventDays`; returns how
    many. Safe to repeat."""
    deleted = 0
    for app in App.objects.all():
        days = get_config(app)["retention.retrievalEventDays"]
        cutoff = timezone.now() - timedelta(days=days)
        deleted += RetrievalEvent.objects.filter(subject__app=app, created_at__lt=cutoff).delete()[0]
    return deleted
