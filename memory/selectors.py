"""Reads shared by more than one interface (the REST API, the dashboard, the admin)."""

import math

from django.db import connection
from django.db.models import Count, Exists, OuterRef, Q, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from memory.leases import stale_before
from memory.models import (
    App,
    ConsentCategory,
    Conversation,
    Evidence,
    JobRun,
    JobStatus,
    Lesson,
    Message,
    MetricSnapshot,
    Note,
    NoteLink,
    NoteVersion,
    PendingMemory,
    PendingStatus,
    Policy,
    Procedure,
    ProfileFact,
    RetrievalEvent,
    Subject,
    SubjectAppPause,
    SubjectConsent,
    VoteEvent,
)
from memory.search.lexical import NoteFilter, note_filter_queryset, note_search
from memory.text import jaccard, query_terms, word_set
from memoryweb.errors import AppPausedForSubject, NotFound


def subject_get(*, app: App, external_id: str) -> Subject:
    # whether the person paused this App for the subject comes along (subject_access_check)
    subject = (
        Subject.objects.filter(app=app, external_id=external_id)
        .annotate(app_paused=_app_paused(app, OuterRef("pk")))
        .first()
    )
    if subject is None:
        raise NotFound(f"no subject {external_id!r}", field="subject")
    return subject


def _app_paused(app: App, subject_ref: OuterRef) -> Exists:
    """Whether the person paused `app` for the subject `subject_ref` names, as a subquery."""
    return Exists(SubjectAppPause.objects.filter(subject=subject_ref, app=app))


def conversations_with_pause(queryset, *, app: App):
    """`queryset` of Conversations with whether the person paused `app` for each one's subject,
    read in the same query (`subject_app_paused`; `paused_subject` puts it on the subject)."""
    return queryset.annotate(subject_app_paused=_app_paused(app, OuterRef("subject_id")))


def paused_subject(conversation: Conversation) -> Conversation:
    """Hand a `conversations_with_pause` row's flag to its subject, for subject_access_check."""
    if hasattr(conversation, "subject_app_paused"):
        conversation.subject.app_paused = conversation.subject_app_paused  # type: ignore[attr-defined]
    return conversation


def subject_access_check(*, app: App, subject: Subject) -> None:
    """Refuse (403 `app_paused_for_subject`) when the person paused `app`'s access to this
    subject's memory (SubjectAppPause). Every interface an App reaches a subject through — the
    REST views (memory.api.base.AppAPIView), tools/call, the MCP server — asks this before it
    reads or writes anything of the subject."""
    paused = getattr(subject, "app_paused", None)  # subject_get's annotation, when it came from there
    if paused is None:
        paused = SubjectAppPause.objects.filter(subject=subject, app=app).exists()
    if paused:
        raise AppPausedForSubject(
            f"the person paused {app.name}'s access to the memory of subject {subject.external_id!r}",
            field="subject",
        )


def note_get(*, subject: Subject, note_id: int) -> Note:
    note = Note.objects.filter(subject=subject, pk=note_id).first()
    if note is None:
        raise NotFound(f"no note {note_id} for this subject", field="id")
    return note


def evidence_get(*, app, evidence_id: int) -> Evidence:
    """An evidence unit of one of `app`'s subjects (NotFound otherwise, as for any other app's)."""
    unit = Evidence.objects.filter(subject__app=app, pk=evidence_id).select_related("subject").first()
    if unit is None:
        raise NotFound(f"no evidence {evidence_id}", field="id")
    return unit


def evidence_dict(unit: Evidence) -> dict:
    """What the API and the export say of a unit."""
    return {
        "id": unit.pk,
        "subject": unit.subject.external_id,
        "conversation": unit.conversation_id,
        "message": unit.message_id,
        "role": unit.role,
        "name": unit.name,
        "text": unit.text,
        "occurred_at": unit.occurred_at.isoformat(),
        "category": unit.category,
        "status": unit.status,
        "retrievable": unit.retrievable,
        "recall_count": unit.recall_count,
        "last_recalled_at": unit.last_recalled_at.isoformat() if unit.last_recalled_at else None,
        "archived_at": unit.archived_at.isoformat() if unit.archived_at else None,
        "created_at": unit.created_at.isoformat(),
    }


def note_versions(*, note: Note) -> list[NoteVersion]:
    return list(note.versions.order_by("version"))


def note_recall(
    *, subject: Subject, query: str = "", k: int = 10, filters: NoteFilter | None = None
) -> list[tuple[Note, float]]:
    """The subject's best `k` notes for `query` (newest first without one), with scores."""
    filters = filters or NoteFilter()
    terms = query_terms(query) if query else []
    if terms:
        hits = note_search(subject.pk, terms, limit=k, filters=filters)
        notes = Note.objects.in_bulk([h.id for h in hits])
        return [(notes[h.id], h.score) for h in hits if h.id in notes]
    if query:  # only stop words: nothing to match
        return []
    queryset = note_filter_queryset(Note.objects.filter(subject=subject), filters)
    return [(note, 0.0) for note in queryset.order_by("-updated_at", "-id")[:k]]


def note_near_duplicates(
    *, subject: Subject, content: str, config, filters: NoteFilter | None = None
) -> list[tuple[Note, float]]:
    """The subject's notes whose words overlap `content` with Jaccard ≥ `dedup.fts5Threshold`,
    best first (candidates: the top `dedup.candidates` full-text hits).

    A note with Jaccard ≥ t against these n words holds all but at most n − ⌈t·n⌉ of them, so
    it holds one of any n − ⌈t·n⌉ + 1 of them: in a large subject only the notes sharing one
    of that many of the rarest words are ranked, which finds every duplicate the full search
    would find, without ranking every note that shares a common word."""
    words = word_set(content)
    threshold = config["dedup.fts5Threshold"]
    terms = query_terms(content)
    rarest = len(words) - math.ceil(threshold * len(words) - 1e-9) + 1
    hits = note_search(
        subject.pk,
        terms,
        limit=config["dedup.candidates"],
        filters=filters,
        rarest=min(max(rarest, 1), max(len(terms), 1)),
    )
    if not hits:
        return []
    scored = [
        (note, jaccard(words, word_set(note.content)))
        for note in Note.objects.filter(pk__in=[h.id for h in hits])
    ]
    return sorted([(n, s) for n, s in scored if s >= threshold], key=lambda pair: (-pair[1], pair[0].pk))


def fact_list(
    *,
    subject: Subject,
    include_contextual: bool = True,
    include_parked: bool = False,
    origins: tuple[str, ...] | None = None,
) -> list[ProfileFact]:
    """The subject's active facts. Parked ones only with `include_parked` (the dashboard's
    profile page): everything else that reads facts — the API, tools, summaries — skips them.
    `origins` (when given) keeps those written with one of them (the dashboard's `?app=`)."""
    queryset = ProfileFact.objects.filter(subject=subject, valid_to=None)
    if not include_parked:
        queryset = queryset.filter(parked_at=None)
    if origins is not None:
        queryset = queryset.filter(origin__in=origins)
    if not include_contextual:
        queryset = queryset.filter(pinned=True)
    return list(queryset.order_by("-pinned", "key", "mode", "scope"))


def fact_history(*, subject: Subject, key: str) -> list[ProfileFact]:
    facts = list(ProfileFact.objects.filter(subject=subject, key=key).order_by("valid_from", "id"))
    if not facts:
        raise NotFound(f"no fact {key!r}", field="key")
    return facts


def consent_policies(*, subject: Subject) -> list[dict]:
    """Every category with the subject's effective policy and whether it is the default."""

    own = dict(SubjectConsent.objects.filter(subject=subject).values_list("category_id", "policy"))
    return [
        {
            "category": c.slug,
            "name": c.name,
            "description": c.description,
            "policy": own.get(c.pk, c.default_policy),
            "is_default": c.pk not in own,
        }
        for c in ConsentCategory.objects.all()
    ]


def _dt(value):
    return value.isoformat() if value else None


EXPORT_FORMAT = "memoryweb.subject"  # the export document (docs/export.md)
EXPORT_VERSION = 1


def subject_export(*, subject: Subject) -> dict:
    """Everything held about the subject, as plain JSON in the documented, versioned format
    (docs/export.md, memory/schemas/subject-export.v1.json): facts with history, notes with
    versions, sources and links, lessons and procedures with versions, votes, evidence units,
    conversations with messages, consent policies and pending items. Ids are this server's;
    references inside the document use them, and an import maps them to new ones."""
    dt = _dt
    facts = ProfileFact.objects.filter(subject=subject).order_by("key", "valid_from", "id")
    notes = Note.objects.filter(subject=subject).prefetch_related("versions", "sources").order_by("id")
    links = NoteLink.objects.filter(src__subject=subject).order_by("id")
    lessons = Lesson.objects.filter(subject=subject).prefetch_related("versions").order_by("id")
    procedures = Procedure.objects.filter(subject=subject).prefetch_related("versions").order_by("id")
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "subject": subject.external_id,
        "display_name": subject.display_name,
        "app": subject.app.name,
        "exported_at": dt(timezone.now()),
        "facts": [
            {
                "id": f.pk,
                "key": f.key,
                "value": f.value,
                "pinned": f.pinned,
                "keywords": f.keywords,
                "mode": f.mode,
                "scope": f.scope,
                "category": f.category,
                "origin": f.origin,
                "confidence": f.confidence,
                "confirmations": f.confirmations,
                "vote_score": f.vote_score,
                "exceptions": f.exceptions,
                "source_message": f.source_message_id,
                "valid_from": dt(f.valid_from),
                "valid_to": dt(f.valid_to),
                "parked_at": dt(f.parked_at),
                "recorded_at": dt(f.created_at),
                "superseded_by": f.superseded_by_id,
            }
            for f in facts
        ],
        "notes": [
            {
                "id": n.pk,
                "content": n.content,
                "tags": n.tags,
                "mode": n.mode,
                "scope": n.scope,
                "working_dir": n.working_dir,
                "category": n.category,
                "origin": n.origin,
                "confidence": n.confidence,
                "version": n.version,
                "conversation": n.conversation_id,
                "source_message": n.source_message_id,
                "occurred_at": dt(n.occurred_at),
                "vote_score": n.vote_score,
                "recall_count": n.recall_count,
                "last_recalled_at": dt(n.last_recalled_at),
                "archived_at": dt(n.archived_at),
                "parked_at": dt(n.parked_at),
                "consolidated_into": n.consolidated_into_id,
                "created_at": dt(n.created_at),
                "updated_at": dt(n.updated_at),
                "versions": [
                    {
                        "version": v.version,
                        "content": v.content,
                        "tags": v.tags,
                        "origin": v.origin,
                        "created_at": dt(v.created_at),
                    }
                    for v in n.versions.all()
                ],
                "sources": [
                    {
                        "conversation": s.conversation_id,
                        "message": s.message_id,
                        "created_at": dt(s.created_at),
                    }
                    for s in n.sources.all()
                ],
            }
            for n in notes
        ],
        "links": [
            {
                "src": link.src_id,
                "dst": link.dst_id,
                "kind": link.kind,
                "weight": link.weight,
                "origin": link.origin,
                "created_at": dt(link.created_at),
            }
            for link in links
        ],
        "lessons": [
            {
                "id": lesson.pk,
                "text": lesson.text,
                "tags": lesson.tags,
                "vote_score": lesson.vote_score,
                "recall_count": lesson.recall_count,
                "last_recalled_at": dt(lesson.last_recalled_at),
                "parked_at": dt(lesson.parked_at),
                "origin": lesson.origin,
                "distiller": lesson.distiller,
                "version": lesson.version,
                "created_at": dt(lesson.created_at),
                "updated_at": dt(lesson.updated_at),
                "versions": [
                    {
                        "version": v.version,
                        "text": v.text,
                        "tags": v.tags,
                        "origin": v.origin,
                        "created_at": dt(v.created_at),
                    }
                    for v in lesson.versions.all()
                ],
            }
            for lesson in lessons
        ],
        "procedures": [
            {
                "id": p.pk,
                "lesson": p.lesson_id,
                "title": p.title,
                "steps": p.steps,
                "tags": p.tags,
                "vote_score": p.vote_score,
                "recall_count": p.recall_count,
                "last_recalled_at": dt(p.last_recalled_at),
                "parked_at": dt(p.parked_at),
                "origin": p.origin,
                "distiller": p.distiller,
                "version": p.version,
                "created_at": dt(p.created_at),
                "updated_at": dt(p.updated_at),
                "versions": [
                    {
                        "version": v.version,
                        "title": v.title,
                        "steps": v.steps,
                        "tags": v.tags,
                        "origin": v.origin,
                        "created_at": dt(v.created_at),
                    }
                    for v in p.versions.all()
                ],
            }
            for p in procedures
        ],
        "votes": [
            {
                "item_kind": v.item_kind,
                "item_id": v.item_id,
                "signal": v.signal,
                "delta": v.delta,
                "mode": v.mode,
                "actor": v.actor,
                "created_at": dt(v.created_at),
            }
            for v in VoteEvent.objects.filter(subject=subject).order_by("id")
        ],
        "evidence": [
            {**evidence_dict(unit), "scope": unit.scope, "vote_score": unit.vote_score}
            for unit in Evidence.objects.filter(subject=subject).select_related("subject").order_by("id")
        ],
        "conversations": [
            {
                "id": c.pk,
                "external_id": c.external_id,
                "mode": c.mode,
                "scope": c.scope,
                "working_dir": c.working_dir,
                "created_at": dt(c.created_at),
                "updated_at": dt(c.updated_at),
                "messages": [
                    {
                        "id": m.pk,
                        "role": m.role,
                        "name": m.name,
                        "text": m.text,
                        "occurred_at": dt(m.occurred_at),
                        "external_id": m.external_id,
                        "created_at": dt(m.created_at),
                    }
                    for m in c.messages.order_by("occurred_at", "id")
                ],
            }
            for c in Conversation.objects.filter(subject=subject).order_by("id")
        ],
        "consent": {
            c.category.slug: c.policy
            for c in SubjectConsent.objects.filter(subject=subject).select_related("category").order_by("id")
        },
        "pending": [
            {
                "id": p.pk,
                "kind": p.kind,
                "payload": p.payload,
                "category": p.category.slug,
                "status": p.status,
                "content_hash": p.content_hash,
                "source_message": p.source_message_id,
                "decided_at": dt(p.decided_at),
                "decided_by": p.decided_by,
                "result_id": p.result_id,
                "created_at": dt(p.created_at),
            }
            for p in PendingMemory.objects.filter(subject=subject).select_related("category").order_by("id")
        ],
    }


def distilled_recall(
    *, model, search, subject: Subject, query: str = "", k: int = 10
) -> list[tuple[object, float]]:
    """Lessons or procedures of the subject: best `k` for `query`, newest first without one.
    Parked ones never (the person keeps them out of every recall)."""
    terms = query_terms(query) if query else []
    live = model.objects.filter(subject=subject, parked_at=None)
    if terms:
        hits = search(subject.pk, terms, limit=k)
        items = live.in_bulk([h.id for h in hits])
        return [(items[h.id], h.score) for h in hits if h.id in items]
    if query:
        return []
    return [(item, 0.0) for item in live.order_by("-updated_at", "-id")[:k]]


# --- dashboard reads ------------------------------------------------------------------------

NOTE_BROWSE_CANDIDATES = 500


def note_browse(
    *,
    subject: Subject,
    query: str = "",
    tags: list[str] | None = None,
    scope: str | None = None,
    archived: str = "live",
    category: str | None = None,
    origins: tuple[str, ...] | None = None,
    limit: int = 50,
    offset: int = 0,
) -> tuple[list[tuple[Note, float]], int]:
    """The dashboard's note search: (one page of (note, score), how many match in all).

    `query` is searched like recall (FTS terms OR-ed, best first); without one, newest first.
    `archived` is "live" (default: neither archived nor parked), "archived" (only notes
    consolidated away), "parked" (only notes the person parked) or "all";
    `category` "" means notes without a consent category, None any category; `origins` (when
    given) keeps the notes written with one of them (the dashboard's `?app=`).
    """
    filters = NoteFilter(
        scope=scope,
        tags=list(tags or []),
        include_archived=archived != "live",
        include_parked=archived in ("parked", "all"),
    )
    queryset = note_filter_queryset(Note.objects.filter(subject=subject), filters)
    if archived == "archived":
        queryset = queryset.filter(archived_at__isnull=False)
    elif archived == "parked":
        queryset = queryset.filter(parked_at__isnull=False)
    if category is not None:
        queryset = queryset.filter(category=category)
    if origins is not None:
        queryset = queryset.filter(origin__in=origins)
    terms = query_terms(query) if query else []
    if terms:
        hits = note_search(subject.pk, terms, limit=NOTE_BROWSE_CANDIDATES, filters=filters)
        notes = queryset.in_bulk([h.id for h in hits])
        ranked = [(notes[h.id], h.score) for h in hits if h.id in notes]
        return ranked[offset : offset + limit], len(ranked)
    if query:  # only stop words: nothing to match
        return [], 0
    page = queryset.order_by("-updated_at", "-id")[offset : offset + limit]
    return [(note, 0.0) for note in page], queryset.count()


def note_facets(*, subject: Subject, tag_limit: int = 30) -> dict:
    """Values to filter the subject's notes by: the most used tags, scopes and categories."""
    from collections import Counter as _Counter

    rows = Note.objects.filter(subject=subject).values_list("tags", "scope", "category")
    tags: _Counter[str] = _Counter()
    scopes, categories = set(), set()
    for note_tags, scope, category in rows.iterator():
        tags.update(note_tags or [])
        scopes.add(scope)
        categories.add(category)
    return {
        "tags": [tag for tag, _ in tags.most_common(tag_limit)],
        "scopes": sorted(s for s in scopes if s),
        "categories": sorted(c for c in categories if c),
    }


def note_dossier(*, note: Note, recent_retrievals: int = 20) -> dict:
    """Everything the note detail page shows: versions, provenance, links both ways, votes,
    the lesson it was consolidated into, and the last `recent_retrievals` context builds that
    chose it (`item_reads`)."""

    chosen = item_reads(subject_id=note.subject_id, ref=f"n:{note.pk}", limit=recent_retrievals)
    return {
        "versions": list(note.versions.order_by("-version")),
        "sources": list(note.sources.select_related("conversation", "message").order_by("created_at", "id")),
        "links_out": list(NoteLink.objects.filter(src=note).select_related("dst").order_by("-weight", "id")),
        "links_in": list(NoteLink.objects.filter(dst=note).select_related("src").order_by("-weight", "id")),
        "votes": list(
            VoteEvent.objects.filter(item_kind="note", item_id=note.pk).order_by("-created_at", "-id")[:50]
        ),
        "lesson": note.consolidated_into,
        "retrievals": chosen,
    }


def retrieval_events_naming(events, text: str):
    """The RetrievalEvents of `events` whose chosen items' JSON holds `text` (a quoted id
    '"n:12"', or '"kind": "note"'): the list is JSON, so this narrows by its text in SQL, on
    SQLite and PostgreSQL alike; callers check the items themselves when it matters."""
    return events.annotate(items_text=Cast("items", TextField())).filter(items_text__contains=text)


def item_reads(*, subject_id: int, ref: str, limit: int = 20) -> list[dict]:
    """The subject's context builds (RetrievalEvents, kept `retention.retrievalEventDays`) that
    chose the item `ref` ("n:12", "f:3", "l:4"), newest first, at most `limit`: each
    {"event", "section", "score"}, the event with its conversation and the subject's App."""
    # the id may also be another item's `mirror_of`: each event's items are checked below
    events = (
        retrieval_events_naming(RetrievalEvent.objects.filter(subject_id=subject_id), f'"{ref}"')
        .select_related("conversation", "subject__app")
        .order_by("-created_at", "-id")
    )
    chosen: list[dict] = []
    for event in events.iterator(chunk_size=200):
        for item in event.items or []:
            if isinstance(item, dict) and item.get("id") == ref:
                chosen.append(
                    {"event": event, "section": item.get("section", ""), "score": item.get("score")}
                )
                break
        if len(chosen) >= limit:
            break
    return chosen


def subject_overview(*, subject: Subject, days: int = 30) -> dict:
    """The overview page's numbers: counts per kind, memories added and context builds per day
    over the last `days` days (oldest first, every day present), pending consent, and the
    latest consolidation run that covered the subject."""
    from datetime import datetime, time, timedelta

    from django.db.models import Count, Q
    from django.db.models.functions import TruncDate

    today = timezone.localdate()
    first = today - timedelta(days=days - 1)
    since = timezone.make_aware(datetime.combine(first, time.min))
    day_list = [first + timedelta(days=i) for i in range(days)]

    def per_day(queryset, field: str = "created_at") -> list[int]:
        rows = (
            queryset.filter(**{f"{field}__gte": since})
            .annotate(day=TruncDate(field))
            .values("day")
            .annotate(n=Count("id"))
        )
        by_day = {row["day"]: row["n"] for row in rows}
        return [by_day.get(day, 0) for day in day_list]

    notes = Note.objects.filter(subject=subject)
    facts = ProfileFact.objects.filter(subject=subject)
    lessons = Lesson.objects.filter(subject=subject)
    procedures = Procedure.objects.filter(subject=subject)
    retrievals = RetrievalEvent.objects.filter(subject=subject)
    pending = PendingMemory.objects.filter(subject=subject, status="pending")
    consolidation = (
        JobRun.objects.filter(kind__startswith="consolidate")
        .filter(Q(subject=subject) | Q(subject__isnull=True))
        .order_by("-started_at", "-id")
        .first()
    )
    return {
        "counts": {
            "facts": facts.filter(valid_to=None).count(),
            "notes": notes.filter(archived_at=None).count(),
            "archived_notes": notes.exclude(archived_at=None).count(),
            "lessons": lessons.count(),
            "procedures": procedures.count(),
            "links": NoteLink.objects.filter(src__subject=subject).count(),
            "pending": pending.count(),
            "retrievals": retrievals.count(),
        },
        "days": [day.isoformat() for day in day_list],
        "added": {
            "notes": per_day(notes),
            "facts": per_day(facts),
            "lessons": per_day(lessons),
            "procedures": per_day(procedures),
        },
        "recalls": {
            # a cache hit is recorded like a build (RetrievalEvent.from_cache): counted apart
            "context_builds": per_day(retrievals.filter(from_cache=False)),
            "cache_hits": per_day(retrievals.filter(from_cache=True)),
        },
        "most_recalled": list(notes.filter(recall_count__gt=0).order_by("-recall_count", "-id")[:5]),
        "pending": list(pending.select_related("category").order_by("-created_at", "-id")[:5]),
        "last_consolidation": consolidation,
    }


# --- dashboard reads: lessons, link graph, consent queue, jobs ------------------------------

DISTILLED_BROWSE_CANDIDATES = 500


def distilled_browse(
    *,
    model,
    search,
    subject: Subject,
    query: str = "",
    origins: tuple[str, ...] | None = None,
    parked: str = "live",
    limit: int = 25,
    offset: int = 0,
) -> tuple[list[tuple[object, float]], int]:
    """The dashboard's list of lessons or procedures: (one page of (item, score), how many in
    all). With `query`, the best full-text matches first; without, the newest first; `origins`
    (when given) keeps the items written with one of them; `parked` is "live" (default: not
    parked), "parked" (only those the person parked) or "all". Browsing counts no recall."""
    queryset = model.objects.filter(subject=subject)
    if origins is not None:
        queryset = queryset.filter(origin__in=origins)
    if parked == "live":
        queryset = queryset.filter(parked_at=None)
    elif parked == "parked":
        queryset = queryset.exclude(parked_at=None)
    elif parked != "all":
        raise ValueError(f"parked is live, parked or all, got {parked!r}")
    terms = query_terms(query) if query else []
    if terms:
        hits = search(subject.pk, terms, limit=DISTILLED_BROWSE_CANDIDATES, include_parked=parked != "live")
        items = queryset.in_bulk([h.id for h in hits])
        ranked = [(items[h.id], h.score) for h in hits if h.id in items]
        return ranked[offset : offset + limit], len(ranked)
    if query:  # only stop words: nothing to match
        return [], 0
    page = queryset.order_by("-updated_at", "-id")[offset : offset + limit]
    return [(item, 0.0) for item in page], queryset.count()


GRAPH_MAX_NODES = 500


def note_graph(
    *,
    subject: Subject,
    limit: int = 150,
    focus: Note | None = None,
    depth: int = 2,
    include_archived: bool = False,
) -> dict:
    """The subject's link graph, capped at `limit` notes: the most-linked ones (ties: newest
    first), topped up with the newest unlinked notes while there is room; or, with `focus`, the
    notes within `depth` hops of it (nearest hops first, the most-linked within a hop). Returns
    nodes (with their degree in the whole graph), the edges among them, and the totals the
    page needs to say what was left out."""
    from collections import Counter as _Counter

    from django.db.models import Count

    limit = max(1, min(limit, GRAPH_MAX_NODES))
    notes = Note.objects.filter(subject=subject)
    links = NoteLink.objects.filter(src__subject=subject, dst__subject=subject)
    if not include_archived:
        notes = notes.filter(archived_at=None)
        links = links.filter(src__archived_at=None, dst__archived_at=None)
    degree: _Counter[int] = _Counter()
    for end in ("src_id", "dst_id"):
        for row in links.order_by().values(end).annotate(n=Count("id")):
            degree[row[end]] += row["n"]

    if focus is not None:
        chosen = [focus.pk]
        seen = {focus.pk}
        frontier = [focus.pk]
        for _ in range(depth):
            if not frontier or len(chosen) >= limit:
                break
            # plain index lookups, one per direction; a note counts only if it has a live link
            # (degree > 0), which also keeps archived and other subjects' notes out
            pairs = [
                *NoteLink.objects.filter(src_id__in=frontier).values_list("src_id", "dst_id"),
                *NoteLink.objects.filter(dst_id__in=frontier).values_list("src_id", "dst_id"),
            ]
            reached = {other for pair in pairs for other in pair if other not in seen and degree[other]}
            ordered = sorted(reached, key=lambda pk: (-degree[pk], -pk))[: limit - len(chosen)]
            chosen.extend(ordered)
            seen.update(ordered)
            frontier = ordered
    else:
        chosen = [pk for pk, _ in sorted(degree.items(), key=lambda kv: (-kv[1], -kv[0]))[:limit]]
        if len(chosen) < limit:
            unlinked = notes.exclude(pk__in=list(degree)).order_by("-created_at", "-id")
            chosen.extend(unlinked.values_list("pk", flat=True)[: limit - len(chosen)])

    by_id = notes.in_bulk(chosen)
    if focus is not None and focus.pk not in by_id:  # an archived focus stays visible
        by_id[focus.pk] = focus
    nodes = [
        {
            "id": pk,
            "content": by_id[pk].content,
            "tags": by_id[pk].tags,
            "degree": degree[pk],
            "archived": by_id[pk].archived_at is not None,
            "vote_score": by_id[pk].vote_score,
            "created_at": by_id[pk].created_at,
            "focus": focus is not None and pk == focus.pk,
        }
        for pk in chosen
        if pk in by_id
    ]
    ids = {node["id"] for node in nodes}
    # by the source index alone: joining the notes or filtering on both ends is far slower
    edges = [
        edge
        for edge in NoteLink.objects.filter(src_id__in=ids)
        .order_by("-weight", "id")
        .values("id", "src_id", "dst_id", "kind", "weight", "origin")
        if edge["dst_id"] in ids
    ]
    total_edges = sum(degree.values()) // 2
    return {
        "nodes": nodes,
        "edges": edges,
        "total_notes": notes.count(),
        "linked_notes": len(degree),
        "total_edges": total_edges,
        "capped": len(nodes) >= limit if focus is not None else len(nodes) < notes.count(),
        "limit": limit,
    }


def pending_queue(*, subject: Subject, status: str = "pending", limit: int = 100) -> tuple[list, dict]:
    """The subject's consent queue for `status` (newest first) with each item's category and
    source message, and how many items the subject has in each status."""
    from django.db.models import Count

    queryset = PendingMemory.objects.filter(subject=subject)
    items = list(
        queryset.filter(status=status)
        .select_related("category", "source_message", "source_message__conversation")
        .order_by("-created_at", "-id")[:limit]
    )
    counts = dict.fromkeys(PendingStatus.values, 0)
    counts.update(queryset.order_by().values_list("status").annotate(n=Count("id")))
    return items, counts


def job_runs_recent(*, subject: Subject, limit: int = 30) -> list:
    """The latest job runs that concern the subject: its own (consolidation) and the
    system-wide ones (the consolidation sweep, vote decay), newest first."""
    from django.db.models import Q

    return list(
        JobRun.objects.filter(Q(subject=subject) | Q(subject__isnull=True)).order_by("-started_at", "-id")[
            :limit
        ]
    )


def conversation_get(*, app, conversation_id: int, subject=None) -> Conversation:
    """The conversation if it belongs to `app` (and to `subject` when given); else NotFound."""
    queryset = Conversation.objects.select_related("subject").filter(pk=conversation_id, subject__app=app)
    if subject is not None:
        queryset = queryset.filter(subject=subject)
    conversation = conversations_with_pause(queryset, app=app).first()
    if conversation is None:
        raise NotFound(f"no conversation {conversation_id}", field="conversation")
    return paused_subject(conversation)


def message_get(*, app, message_id: int, subject=None) -> Message:
    queryset = Message.objects.select_related("conversation").filter(
        pk=message_id, conversation__subject__app=app
    )
    if subject is not None:
        queryset = queryset.filter(conversation__subject=subject)
    message = queryset.first()
    if message is None:
        raise NotFound(f"no message {message_id}", field="message")
    return message


def conversation_list(*, subject, limit: int = 50) -> list[Conversation]:
    return list(Conversation.objects.filter(subject=subject).order_by("-updated_at", "-id")[:limit])


def message_list(*, conversation, limit: int = 100, before_id: int | None = None) -> list[Message]:
    queryset = Message.objects.filter(conversation=conversation)
    if before_id:
        queryset = queryset.filter(pk__lt=before_id)
    return list(reversed(queryset.order_by("-occurred_at", "-id")[:limit]))


def job_runs_open(*, subject_id: int) -> tuple[int, int]:
    """How many of the subject's job runs are queued or running with a live worker, and how
    many are running with a worker that stopped heartbeating (dead: the sweeper redoes them;
    nobody should wait on them)."""
    dead = Q(status=JobStatus.RUNNING, heartbeat_at__lt=stale_before())
    counts = JobRun.objects.filter(
        subject_id=subject_id, status__in=[JobStatus.QUEUED, JobStatus.RUNNING]
    ).aggregate(live=Count("pk", filter=~dead), dead=Count("pk", filter=dead))
    return counts["live"], counts["dead"]


def consent_denied_categories(*, subject) -> frozenset[str]:
    """The consent categories the subject denies now: its own `deny`, or a category whose
    default is `deny` where it set nothing. One query, in SQL: every context build asks, and
    the ORM's compiling of this one cost more than running it (a subject has at most one
    choice per category: subject_consent_unique)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.slug FROM {ConsentCategory._meta.db_table} c "
            f"LEFT JOIN {SubjectConsent._meta.db_table} s ON s.category_id = c.id AND s.subject_id = %s "
            "WHERE s.policy = %s OR (s.id IS NULL AND c.default_policy = %s)",
            [subject.pk, Policy.DENY.value, Policy.DENY.value],
        )
        return frozenset(slug for (slug,) in cursor.fetchall())


def metric_latest(*, app: App | None) -> MetricSnapshot | None:
    """The newest metrics snapshot of `app` (None: the snapshot of every App)."""
    return MetricSnapshot.objects.filter(app=app).order_by("-computed_at", "-pk").first()


def metric_history(*, app: App | None, limit: int, before: int | None = None) -> list[MetricSnapshot]:
    """Snapshots of `app` (None: of every App), newest first; `before`: older than that id."""
    queryset = MetricSnapshot.objects.filter(app=app)
    if before is not None:
        queryset = queryset.filter(pk__lt=before)
    return list(queryset.order_by("-pk")[:limit])


# an item id's prefix ("f:8") → its model, as context builds and RetrievalEvents name items
ITEM_MODELS = {"f": ProfileFact, "n": Note, "l": Lesson, "p": Procedure, "e": Evidence}


def _item_name(obj) -> dict:
    if isinstance(obj, ProfileFact):
        return {"kind": "fact", "title": obj.key, "text": obj.value}
    if isinstance(obj, Note):
        return {"kind": "note", "title": "", "text": obj.content}
    if isinstance(obj, Lesson):
        return {"kind": "lesson", "title": "", "text": obj.text}
    if isinstance(obj, Procedure):
        return {"kind": "procedure", "title": obj.title, "text": " · ".join(str(s) for s in obj.steps)}
    return {
        "kind": "evidence",
        "title": obj.role,
        "speaker": obj.name,
        "text": obj.text,
        "when": obj.occurred_at,
    }


def items_named(*, subject_id: int, refs) -> dict[str, dict]:
    """What the items `refs` ("f:8", "n:12", "l:3", "p:2", "e:5") of the subject are, for a
    person to read them by name instead of by id: {ref: {"kind", "title", "text"}}, a fact's
    title its key and text its value, a note's or a lesson's text its content, a procedure's
    title and steps, an evidence unit's speaker (title), words and `when`. One query per kind;
    a ref that names nothing of the subject (deleted since, or malformed) is left out."""
    wanted: dict[str, set[int]] = {}
    for ref in refs:
        prefix, _, pk = str(ref).partition(":")
        if prefix in ITEM_MODELS and pk.isdigit():
            wanted.setdefault(prefix, set()).add(int(pk))
    named: dict[str, dict] = {}
    for prefix, pks in wanted.items():
        for obj in ITEM_MODELS[prefix]._default_manager.filter(subject_id=subject_id, pk__in=pks):
            named[f"{prefix}:{obj.pk}"] = _item_name(obj)
    return named
