from django.db import transaction
from django.utils import timezone

from memory.models import ContextDelivery, RetrievalEvent


def retrieval_event_record(
    *, subject, conversation, query, rewritten_query, items, tokens, latency_ms
) -> RetrievalEvent:
    """Append the record of one context build. Each build is its own event."""
    return RetrievalEvent.objects.create(
        subject=subject,
        conversation=conversation,
        query=query,
        rewritten_query=rewritten_query,
        items=items,
        tokens=tokens,
        latency_ms=latency_ms,
    )


@transaction.atomic
def context_deliveries_update(*, conversation, digests: dict[str, str]) -> dict[str, bool]:
    """Record which block digests the conversation now holds.

    Returns {block: unchanged} — whether the conversation already held that exact block.
    Repeating it with the same digests answers "unchanged" for all and writes nothing new.
    """
    held = {
        d.block: d for d in ContextDelivery.objects.filter(conversation=conversation, block__in=list(digests))
    }
    unchanged = {}
    now = timezone.now()
    for block, digest in digests.items():
        current = held.get(block)
        unchanged[block] = current is not None and current.digest == digest
        if current is None:
            ContextDelivery.objects.create(
                conversation=conversation, block=block, digest=digest, updated_at=now
            )
        elif current.digest != digest:
            ContextDelivery.objects.filter(pk=current.pk).update(digest=digest, updated_at=now)
    return unchanged
