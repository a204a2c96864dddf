"""Reads shared by more than one interface (API, dashboard, CLI, MCP)."""

from memory.errors import NotFound
from memory.models import App, Note, NoteVersion, ProfileFact, Subject
from memory.search.lexical import NoteFilter, note_filter_queryset, note_search, query_terms


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
