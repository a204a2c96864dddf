"""Background jobs of the memory app. Each fetches by id or sweeps, calls a service, and is safe
to run twice."""

from datetime import timedelta

from celery import shared_task

from memory.config import get_config
from memory.services import Actor
from memory.services.consent import pending_expire
from memory.services.context_cache import context_cache_prune
from memory.services.embeddings import evidence_embed, note_embed
from memory.services.evidence import evidence_evict_sweep
from memory.services.links import note_link
from memory.services.notes import notes_evict_sweep
from memory.services.retrieval import retrieval_events_prune


@shared_task(name="memory.notes_evict_sweep")
def notes_evict_sweep_task() -> dict:
    """Evict overflow of notes and evidence for every subject over its caps (the services say
    why it is safe to repeat)."""
    actor = Actor.task("notes_evict_sweep")
    return {"evicted": notes_evict_sweep(actor=actor), "evidence_evicted": evidence_evict_sweep(actor=actor)}


@shared_task(name="memory.retrieval_events_prune")
def retrieval_events_prune_task() -> dict:
    """Delete RetrievalEvents past their retention, and the context-cache entries past
    `cache.ttlSeconds` (the cold-path expiry: they are never served by then). Safe to repeat."""
    return {"deleted": retrieval_events_prune(), "cache_expired": context_cache_prune()}


@shared_task(name="memory.pending_expire")
def pending_expire_task() -> dict:
    """Expire pending consent items older than `consent.pendingExpiryDays`. Safe to repeat."""

    days = get_config()["consent.pendingExpiryDays"]
    return {"expired": pending_expire(older_than=timedelta(days=days))}


@shared_task(name="memory.note_link")
def note_link_task(note_ids: int | list[int]) -> dict:
    """Link new notes to their nearest neighbours (see memory.services.links.note_link), one
    note after another: the ids of the notes stored close together (the outbox sends this
    task batched, memoryweb.outbox.BATCHED), or one id (eager runs, and messages queued before
    batching). Safe to run twice: pairs already linked are left alone."""

    ids = [note_ids] if isinstance(note_ids, int) else list(note_ids)
    results = [note_link(note_id=note_id) for note_id in ids]
    return {"notes": len(ids), "linked": sum(r.get("linked", 0) for r in results)}


@shared_task(name="memory.note_embed")
def note_embed_task(note_id: int) -> dict:
    """Embed one note under its app's provider (memory.services.embeddings.note_embed). Safe
    to run twice: an unchanged note is skipped. A provider failure is counted, not raised."""

    return note_embed(note_id=note_id)


@shared_task(name="memory.evidence_embed")
def evidence_embed_task(evidence_id: int) -> dict:
    """Embed one evidence unit (memory.services.embeddings.evidence_embed). Safe to run twice:
    an unchanged unit is skipped. A provider failure is counted, not raised."""

    return evidence_embed(evidence_id=evidence_id)
