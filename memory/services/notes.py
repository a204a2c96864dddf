import re

from django.db import connection, models, transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from memory.config import MemoryConfig, get_config
from memory.models import App, ItemKind, Note, NoteSource, NoteVersion, Origin, Subject
from memory.modes import mode_get
from memory.search.lexical import NoteFilter
from memory.selectors import note_near_duplicates
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
from memory.services.embeddings import embeddings_delete, note_embed, note_embed_enqueue
from memory.services.eviction import eviction_order
from memory.services.evidence import evidence_forget_for_messages
from memory.services.scrub import scrub
from memory.services.versions import version_write
from memory.text import query_terms
from memoryweb.errors import InvalidInput
from memoryweb.live import notify
from memoryweb.outbox import enqueue

TAG_RE = re.compile(r"^[\w][\w:./-]{0,49}$", re.UNICODE)


def _clean_content(content, config: MemoryConfig) -> str:
    if not isinstance(content, str) or not content.strip():
        raise InvalidInput("content must be a non-empty string", field="content")
    content = scrub(content.strip(), where="note")
    limit = config["notes.maxChars"]
    if len(content) > limit:
        raise InvalidInput(
            f"content must be at most {limit} characters (got {len(content)})", field="content"
        )
    return content


def _clean_tags(tags, config: MemoryConfig) -> list[str]:
    if tags is None:
        return []
    if not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) for t in tags):
        raise InvalidInput("tags must be a list of strings", field="tags")
    cleaned: list[str] = []
    for tag in tags:
        tag = tag.strip().lower().replace(" ", "-")
        if not tag:
            continue
        if not TAG_RE.match(tag):
            raise InvalidInput(
                f"tag {tag!r} must be 1–50 characters: letters, digits and : . / - _", field="tags"
            )
        if tag not in cleaned:
            cleaned.append(tag)
    limit = config["notes.maxTags"]
    if len(cleaned) > limit:
        raise InvalidInput(f"at most {limit} tags (got {len(cleaned)})", field="tags")
    return cleaned


def _duplicate_of(
    subject: Subject, content: str, tags: list[str], scope: str, working_dir: str, mode: str, config
):
    """An existing note this one repeats: FTS candidates of the same scope, working_dir and mode
    qualifier (a note qualified by a mode is never merged into an unqualified one, nor the other
    way round), Jaccard ≥ threshold, tags ⊇ new tags."""
    if len(query_terms(content)) < config["dedup.minTerms"]:
        return None  # "Thanks, bye!" from two people is two notes, not one
    filters = NoteFilter(scope=scope, working_dir=working_dir, mode=mode)
    for note, _ in note_near_duplicates(subject=subject, content=content, config=config, filters=filters):
        if set(tags) <= set(note.tags):
            return note
    return None


def _add_source(note: Note, conversation, message) -> None:
    if conversation is None and message is None:
        return
    if message is not None and NoteSource.objects.filter(note=note, message=message).exists():
        return
    NoteSource.objects.create(note=note, conversation=conversation, message=message)


@transaction.atomic
def note_store(
    *,
    subject: Subject,
    content: str,
    tags=None,
    conversation=None,
    source_message=None,
    occurred_at=None,
    category: str = "",
    mode: str = "",
    origin: str = Origin.API,
    actor: Actor,
    config: MemoryConfig,
) -> tuple[Note, bool]:
    """Store a note for the subject; returns (note, created).

    Scope and working_dir come from the conversation, never from the caller. `mode` qualifies
    the note to one assistant mode (it renders only there; "" = every mode); it must be a known
    mode (InvalidInput naming `mode`). A note that
    repeats an existing one (see `_duplicate_of`) is merged into it: the existing note gains
    the new provenance and nothing else is written, so storing the same thing twice is safe.
    After a new note, the subject's oldest notes beyond `notes.maxEntries` are evicted, and
    (with `links.enabled`) the note is linked to its neighbours by a task started on commit.
    Either way the change is announced to open dashboard pages (`memory.changed`) after commit.
    """
    content = _clean_content(content, config)
    tags = _clean_tags(tags, config)
    if not isinstance(mode, str):
        raise InvalidInput("mode must be a string", field="mode")
    mode = mode.strip()
    if mode:
        mode = mode_get(mode).name
    if conversation is not None and conversation.subject_id != subject.pk:
        raise InvalidInput("conversation belongs to another subject", field="conversation")
    if source_message is not None and conversation is None:
        conversation = source_message.conversation
    scope = conversation.scope if conversation else ""
    working_dir = conversation.working_dir if conversation else ""

    if config["dedup.enabled"]:
        existing = _duplicate_of(subject, content, tags, scope, working_dir, mode, config)
        if existing is not None:
            _add_source(existing, conversation, source_message)
            Note.objects.filter(pk=existing.pk).update(updated_at=timezone.now())
            audit_record(
                actor=actor, action="note.merged", subject=subject, object_kind="note", object_id=existing.pk
            )
            existing.refresh_from_db()
            memory_changed(subject_id=subject.pk)  # a new source and a newer updated_at
            notify(subject.pk, "memory.changed", {"kind": "note", "id": existing.pk})
            return existing, False

    now = timezone.now()
    note = Note.objects.create(
        subject=subject,
        content=content,
        tags=tags,
        scope=scope,
        working_dir=working_dir,
        mode=mode,
        conversation=conversation,
        source_message=source_message,
        occurred_at=occurred_at or (source_message.occurred_at if source_message else None),
        category=category,
        origin=origin,
        created_at=now,
        updated_at=now,
    )
    NoteVersion.objects.create(
        note=note, version=1, content=content, tags=tags, origin=origin, created_at=now
    )
    _add_source(note, conversation, source_message)
    audit_record(actor=actor, action="note.stored", subject=subject, object_kind="note", object_id=note.pk)
    notes_evict_overflow(subject=subject, config=config, actor=actor)
    if config["links.enabled"]:
        enqueue("memory.note_link", note.pk)
    note_embed_enqueue(note=note, config=config)
    memory_changed(subject_id=subject.pk)
    notify(subject.pk, "memory.changed", {"kind": "note", "id": note.pk})
    return note, True


def note_store_and_embed(**kwargs) -> tuple[Note, bool, bool]:
    """`note_store`, then wait for the note's vector: returns (note, created, embedded).

    The vector is written in this call, right after the store, rather than by the background
    task (which then finds it unchanged). A provider failure is logged and counted and gives
    embedded=False — the note is stored all the same, and FTS recall finds it. Called outside
    a transaction, the note commits before the provider is asked, so a slow provider never
    holds the database's write lock."""

    note, created = note_store(**kwargs)
    result = note_embed(note_id=note.pk)
    embedded = result["embedded"] > 0 or result.get("reason") is None
    return note, created, embedded


async def anote_store_and_embed(**kwargs) -> tuple[Note, bool, bool]:
    """The async variant of `note_store_and_embed` (for async views and consumers)."""
    from asgiref.sync import sync_to_async

    return await sync_to_async(note_store_and_embed, thread_sensitive=True)(**kwargs)


@transaction.atomic
def note_edit(*, note: Note, content=None, tags=None, origin: str = Origin.API, actor: Actor, config) -> Note:
    """Write a new version of the note and announce it (`memory.changed`); the previous content
    stays readable in its versions. An edit that changes nothing writes nothing."""
    new_content = _clean_content(content, config) if content is not None else note.content
    new_tags = _clean_tags(tags, config) if tags is not None else note.tags
    if new_content == note.content and new_tags == note.tags:
        return note
    content_changed = new_content != note.content
    version_write(
        kind="note", item=note, changes={"content": new_content, "tags": new_tags}, origin=origin, actor=actor
    )
    if content_changed:
        note_embed_enqueue(note=note, config=config)
    return note


@transaction.atomic
def note_forget(*, note: Note, actor: Actor) -> None:
    """Delete the note, its versions, provenance and links, and announce it (`memory.changed`).
    The evidence of the turns it came from is forgotten with it, so the forgotten memory does
    not come back as the turn itself. The audit keeps only its id."""
    note_id, subject = note.pk, note.subject
    messages = {note.source_message_id, *note.sources.values_list("message_id", flat=True)}
    evidence_forget_for_messages(message_ids=sorted(m for m in messages if m is not None))
    embeddings_delete(kind=ItemKind.NOTE, item_ids=[note_id])
    note.delete()
    audit_record(actor=actor, action="note.forgotten", subject=subject, object_kind="note", object_id=note_id)
    memory_changed(subject_id=subject.pk)
    notify(subject.pk, "memory.changed", {"kind": "note", "id": note_id})


@transaction.atomic
def notes_evict_overflow(*, subject: Subject, config: MemoryConfig, actor: Actor) -> int:
    """Delete the subject's live notes beyond `notes.maxEntries`; returns how many. Safe to repeat.

    Archived notes (consolidated into a lesson) and parked ones (kept by the person) do not count
    and are never evicted here. The
    victims are chosen and deleted by one DELETE … WHERE id IN (SELECT … ORDER BY … LIMIT n);
    their dependent rows go first by the same subquery, all in this transaction.
    """
    limit = config["notes.maxEntries"]
    live = Note.objects.filter(subject=subject, archived_at__isnull=True, parked_at__isnull=True).count()
    overflow = live - limit
    if overflow <= 0:
        return 0
    victims = (
        "SELECT id FROM memory_note WHERE subject_id = %s AND archived_at IS NULL AND parked_at IS NULL "
        f"ORDER BY {eviction_order(config)} LIMIT %s"
    )
    params = [subject.pk, overflow]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM ({victims}) v", params)
        evicted_ids = [row[0] for row in cursor.fetchall()]
        for rel in Note._meta.related_objects:  # versions, sources, links in and out, …
            table, column = rel.related_model._meta.db_table, rel.field.column
            if rel.on_delete is models.CASCADE:
                cursor.execute(f"DELETE FROM {table} WHERE {column} IN ({victims})", params)
            else:  # SET_NULL
                cursor.execute(f"UPDATE {table} SET {column} = NULL WHERE {column} IN ({victims})", params)
        # vectors point at notes by id, not by a foreign key (their index rows follow them)
        cursor.execute(f"DELETE FROM memory_embedding WHERE kind = 'note' AND item_id IN ({victims})", params)
        cursor.execute(f"DELETE FROM memory_note WHERE id IN ({victims})", params)
        deleted = cursor.rowcount
    audit_record(
        actor=actor,
        action="notes.evicted",
        subject=subject,
        object_kind="note",
        data={
            "count": deleted,
            "ids": evicted_ids[:100],
            "utility_weighted": config["eviction.utilityWeighted"],
        },
    )
    memory_changed(subject_id=subject.pk)
    return deleted


def recalls_count(*, model, ids: list[int]) -> None:
    """Count a recall of each note, lesson or procedure (feeds utility-weighted eviction and
    the dashboards). Not idempotent by design: each recall counts."""
    if ids:
        model.objects.filter(pk__in=ids).update(
            recall_count=F("recall_count") + 1, last_recalled_at=timezone.now()
        )


def notes_mark_recalled(*, note_ids: list[int]) -> None:
    recalls_count(model=Note, ids=note_ids)


def notes_evict_sweep(*, actor: Actor, app: App | None = None) -> int:
    """Evict overflow for every subject over its app's `notes.maxEntries` (e.g. after the cap
    was lowered); returns how many notes went. Safe to repeat: a subject under its cap is left
    alone."""
    evicted = 0
    for each in [app] if app is not None else list(App.objects.all()):
        config = get_config(each)
        over = (
            Subject.objects.filter(app=each)
            .annotate(live=Count("notes", filter=Q(notes__archived_at__isnull=True)))
            .filter(live__gt=config["notes.maxEntries"])
        )
        for subject in over:
            evicted += notes_evict_overflow(subject=subject, config=config, actor=actor)
    return evicted
