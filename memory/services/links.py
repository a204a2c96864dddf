"""Writing the note link graph (memory/links.py reads it): one new note's typed edges."""

from django.db import transaction

from memory.config import MemoryConfig, get_config
from memory.links import link_kind_heuristic, link_kinds_llm, link_neighbours, linked_to
from memory.models import Note, NoteLink, Origin
from memory.services.context_cache import memory_changed
from memoryweb.counters import counter_add


def note_link(*, note_id: int, config: MemoryConfig | None = None) -> dict:
    """Link the note to its nearest neighbours among the subject's live notes; returns stats.

    Neighbours: FTS hits for the note's terms, scored by word and tag similarity, the best
    `links.neighbours` at or above `links.minSimilarity`. Each gets one typed edge (module
    docstring) with weight = similarity and origin `task`: typed by the consolidation model
    when one is configured and `links.llmTyping` is on (it may also answer "no link"), by
    `link_kind_heuristic` otherwise and for every pair the model's answer does not cover.

    Writes nothing when links are disabled or the note is gone or archived. Safe to repeat:
    pairs already linked in either direction are skipped and inserts ignore conflicts.
    """
    note = Note.objects.select_related("subject__app").filter(pk=note_id).first()
    if note is None:
        return {"note": note_id, "skipped": "no such note"}
    if note.archived_at is not None:
        return {"note": note_id, "skipped": "archived"}
    config = config or get_config(note.subject.app)
    if not config["links.enabled"]:
        return {"note": note_id, "skipped": "links disabled"}

    neighbours = link_neighbours(note, config)
    linked = linked_to(note.pk, [n.note.pk for n in neighbours])
    fresh = [n for n in neighbours if n.note.pk not in linked]
    stats = {"note": note_id, "neighbours": len(neighbours), "linked": 0, "source": "heuristic"}
    if not fresh:
        return stats

    typed = link_kinds_llm(note, fresh, config)  # outside the transaction: never hold a lock over a call
    if typed is not None:
        stats["source"] = "llm"
    elif config["links.llmTyping"] and config["llm.consolidation"] != "none":
        stats["source"] = "llm-fallback"
    links = []
    for neighbour in fresh:
        answer = (typed or {}).get(neighbour.note.pk)
        kind, note_is_source = answer if answer is not None else link_kind_heuristic(note, neighbour)
        if kind is None:
            continue
        src, dst = (note, neighbour.note) if note_is_source else (neighbour.note, note)
        links.append(
            NoteLink(src=src, dst=dst, kind=kind, weight=round(neighbour.similarity, 4), origin=Origin.TASK)
        )

    with transaction.atomic():
        # the note or a neighbour may have been archived, evicted or forgotten meanwhile
        live = set(
            Note.objects.select_for_update()
            .filter(pk__in=[note.pk, *(n.note.pk for n in fresh)], archived_at__isnull=True)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        if note.pk not in live:
            return {"note": note_id, "skipped": "archived or deleted meanwhile"}
        links = [link for link in links if link.src_id in live and link.dst_id in live]
        NoteLink.objects.bulk_create(links, ignore_conflicts=True)
        if links:
            memory_changed(subject_id=note.subject_id)  # the builder expands along links
    if links:
        counter_add("links.written", len(links))
    stats["linked"] = len(links)
    return stats
