"""Reads shared by more than one interface (API, dashboard, CLI, MCP)."""

from django.utils import timezone

from memory.errors import NotFound
from memory.models import App, Note, NoteVersion, ProfileFact, Subject
from memory.search.lexical import (
    NoteFilter,
    jaccard,
    note_filter_queryset,
    note_search,
    query_terms,
    word_set,
)


def subject_get(*, app: App, external_id: str) -> Subject:
    subject = Subject.objects.filter(app=app, external_id=external_id).first()
    if subject is None:
        raise NotFound(f"no subject {external_id!r}", field="subject")
    return subject


def note_get(*, subject: Subject, note_id: int) -> Note:
    note = Note.objects.filter(subject=subject, pk=note_id).first()
    if note is None:
        raise NotFound(f"no note {note_id} for this subject", field="id")
    return note


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
    best first (candidates: the top `dedup.candidates` full-text hits)."""
    hits = note_search(subject.pk, query_terms(content), limit=config["dedup.candidates"], filters=filters)
    if not hits:
        return []
    words = word_set(content)
    threshold = config["dedup.fts5Threshold"]
    scored = [
        (note, jaccard(words, word_set(note.content)))
        for note in Note.objects.filter(pk__in=[h.id for h in hits])
    ]
    return sorted([(n, s) for n, s in scored if s >= threshold], key=lambda pair: (-pair[1], pair[0].pk))


def fact_list(*, subject: Subject, include_contextual: bool = True) -> list[ProfileFact]:
    queryset = ProfileFact.objects.filter(subject=subject, valid_to=None)
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
    from memory.models import ConsentCategory, SubjectConsent

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


def subject_export(*, subject: Subject) -> dict:
    """Everything held about the subject, as plain JSON (facts with history, notes with versions,
    conversations with messages, consent, pending items). Categories are included."""
    from chat.models import Conversation
    from memory.models import PendingMemory, SubjectConsent

    def dt(value):
        return value.isoformat() if value else None

    facts = ProfileFact.objects.filter(subject=subject).order_by("key", "valid_from", "id")
    notes = Note.objects.filter(subject=subject).prefetch_related("versions", "sources").order_by("id")
    return {
        "subject": subject.external_id,
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
                "valid_from": dt(f.valid_from),
                "valid_to": dt(f.valid_to),
                "superseded_by": f.superseded_by_id,
            }
            for f in facts
        ],
        "notes": [
            {
                "id": n.pk,
                "content": n.content,
                "tags": n.tags,
                "scope": n.scope,
                "working_dir": n.working_dir,
                "category": n.category,
                "origin": n.origin,
                "occurred_at": dt(n.occurred_at),
                "vote_score": n.vote_score,
                "recall_count": n.recall_count,
                "archived_at": dt(n.archived_at),
                "created_at": dt(n.created_at),
                "versions": [
                    {
                        "version": v.version,
                        "content": v.content,
                        "tags": v.tags,
                        "created_at": dt(v.created_at),
                    }
                    for v in n.versions.all()
                ],
                "sources": [
                    {"conversation": s.conversation_id, "message": s.message_id} for s in n.sources.all()
                ],
            }
            for n in notes
        ],
        "conversations": [
            {
                "id": c.pk,
                "external_id": c.external_id,
                "mode": c.mode,
                "scope": c.scope,
                "working_dir": c.working_dir,
                "created_at": dt(c.created_at),
                "messages": [
                    {
                        "id": m.pk,
                        "role": m.role,
                        "text": m.text,
                        "occurred_at": dt(m.occurred_at),
                        "external_id": m.external_id,
                    }
                    for m in c.messages.all()
                ],
            }
            for c in Conversation.objects.filter(subject=subject).prefetch_related("messages").order_by("id")
        ],
        "consent": {
            c.category.slug: c.policy
            for c in SubjectConsent.objects.filter(subject=subject).select_related("category")
        },
        "pending": [
            {
                "id": p.pk,
                "kind": p.kind,
                "payload": p.payload,
                "category": p.category.slug,
                "status": p.status,
                "created_at": dt(p.created_at),
            }
            for p in PendingMemory.objects.filter(subject=subject).select_related("category").order_by("id")
        ],
    }


def distilled_recall(
    *, model, search, subject: Subject, query: str = "", k: int = 10
) -> list[tuple[object, float]]:
    """Lessons or procedures of the subject: best `k` for `query`, newest first without one."""
    terms = query_terms(query) if query else []
    if terms:
        hits = search(subject.pk, terms, limit=k)
        items = model.objects.in_bulk([h.id for h in hits])
        return [(items[h.id], h.score) for h in hits if h.id in items]
    if query:
        return []
    return [(item, 0.0) for item in model.objects.filter(subject=subject).order_by("-updated_at", "-id")[:k]]
