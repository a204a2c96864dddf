"""Background jobs of the memory app. Each fetches by id or sweeps, calls a service, and is safe
to run twice."""

from datetime import timedelta

from celery import shared_task
from django.db.models import Count, Q
from django.utils import timezone

from memory.config import get_config
from memory.models import App, RetrievalEvent, Subject
from memory.services import Actor, notes_evict_overflow
from memory.services.consent import pending_expire
from memory.services.embeddings import note_embed
from memory.services.links import note_link


@shared_task(name="memory.notes_evict_sweep")
def notes_evict_sweep() -> dict:
    """Evict overflow for every subject over its app's `notes.maxEntries` (e.g. after the cap
    was lowered). Safe to repeat: a subject under its cap is left alone."""
    actor = Actor.task("notes_evict_sweep")
    evicted = 0
    for app in App.objects.all():
        config = get_config(app)
        over = (
            Subject.objects.filter(app=app)
            .annotate(live=Count("notes", filter=Q(notes__archived_at__isnull=True)))
            .filter(live__gt=config["notes.maxEntries"])
        )
        for subject in over:
            evicted += notes_evict_overflow(subject=subject, config=config, actor=actor)
    return {"evicted": evicted}


@shared_task(name="memory.retrieval_events_prune")
def retrieval_events_prune() -> dict:
    """Delete RetrievalEvents older than each app's `retention.retrievalEventDays`. Safe to repeat."""
    deleted = 0
    for app in App.objects.all():
        days = get_config(app)["retention.retrievalEventDays"]
        cutoff = timezone.now() - timedelta(days=days)
        deleted += RetrievalEvent.objects.filter(subject__app=app, created_at__lt=cutoff).delete()[0]
    return {"deleted": deleted}


@shared_task(name="memory.pending_expire")
def pending_expire_task() -> dict:
    """Expire pending consent items older than `consent.pendingExpiryDays`. Safe to repeat."""

    days = get_config()["consent.pendingExpiryDays"]
    return {"expired": pending_expire(older_than=timedelta(days=days))}


@shared_task(name="memory.note_link")
def note_link_task(note_id: int) -> dict:
    """Link a new note to its nearest neighbours (see memory.services.links.note_link). Safe to run
    twice: pairs already linked are left alone."""

    return note_link(note_id=note_id)


@shared_task(name="memory.note_embed")
def note_embed_task(note_id: int) -> dict:
    """Embed one note under its app's provider (memory.services.embeddings.note_embed). Safe
    to run twice: an unchanged note is skipped. A provider failure is counted, not raised."""

    return note_embed(note_id=note_id)
