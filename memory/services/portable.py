"""Importing a subject from its export (docs/export.md; the export is memory.selectors.subject_export).

`subject_import` reads a version-1 document into a subject of the given App in one transaction:
the document is checked against memory/schemas/subject-export.v1.json first (a 400 naming the
field), every id is mapped to a new one, text goes through redaction like any other write, the
current rows get origin "import" (versions keep the origin they had), full-text indexes follow
the rows as for any write, and notes and evidence units are queued for embedding.
"""

import json
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match

from memory.config import MemoryConfig
from memory.models import (
    App,
    ConsentCategory,
    Conversation,
    Evidence,
    EvidenceStatus,
    ItemKind,
    Lesson,
    LessonVersion,
    Message,
    Note,
    NoteLink,
    NoteSource,
    NoteVersion,
    Origin,
    PendingMemory,
    Procedure,
    ProcedureVersion,
    ProfileFact,
    Subject,
    SubjectConsent,
    VoteEvent,
)
from memory.redaction import redact_data
from memory.selectors import EXPORT_FORMAT, EXPORT_VERSION
from memory.services.apps import subject_get_or_create
from memory.services.audit import Actor, audit_record
from memory.services.context_cache import memory_changed
from memory.services.conversations import speaker_name
from memory.services.embeddings import embeddings_enabled
from memory.services.scrub import scrub
from memoryweb.errors import Conflict, InvalidInput, NotFound
from memoryweb.outbox import enqueue

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "subject-export.v1.json"

_formats = FormatChecker()


@_formats.checks("date-time", raises=ValueError)
def _is_datetime(value) -> bool:
    if not isinstance(value, str):
        return True
    parsed = parse_datetime(value)
    if parsed is None:
        raise ValueError(f"{value!r} is not an ISO 8601 date-time")
    return True


@cache
def export_schema() -> dict:
    """The JSON Schema of a version-1 export."""
    return json.loads(SCHEMA_PATH.read_text())


def _field(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "body"


def export_validate(document) -> None:
    """Raise InvalidInput naming the first field of `document` that the v1 schema refuses."""
    if isinstance(document, dict) and document.get("format") == EXPORT_FORMAT:
        version = document.get("version")
        if version != EXPORT_VERSION:
            raise InvalidInput(
                f"unsupported export version {version!r} (this server reads 1)", field="version"
            )
    validator = Draft202012Validator(export_schema(), format_checker=_formats)
    error = best_match(validator.iter_errors(document))
    if error is not None:
        raise InvalidInput(error.message, field=_field(error.absolute_path))


def _when(value) -> datetime | None:
    return None if value is None else _at(value)


def _at(value: str) -> datetime:
    parsed = parse_datetime(value)
    assert parsed is not None  # export_validate checked it
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, timezone.get_current_timezone())
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        raise InvalidInput(f"{value!r} is out of range", field="body") from None


def subject_has_memory(subject: Subject) -> bool:
    related = (
        subject.facts,
        subject.notes,
        subject.conversations,
        subject.lessons,
        subject.procedures,
        subject.evidence,
        subject.pending,
        subject.consents,
        subject.votes,
    )
    return any(manager.exists() for manager in related)


class _Ids:
    """Export id → new id, per kind. An id given twice is a 409 (it collides with the first), a
    reference to an id the document does not hold a 404 (an unknown item), each naming the field."""

    def __init__(self):
        self.maps: dict[str, dict[int, int]] = {}

    def put(self, kind: str, old: int, new: int, field: str) -> None:
        ids = self.maps.setdefault(kind, {})
        if old in ids:
            raise Conflict(f"{kind} id {old} appears twice", field=field)
        ids[old] = new

    def get(self, kind: str, old: int | None, field: str) -> int | None:
        return None if old is None else self.need(kind, old, field)

    def need(self, kind: str, old: int, field: str) -> int:
        new = self.maps.get(kind, {}).get(old)
        if new is None:
            raise NotFound(f"no {kind} {old} in the document", field=field)
        return new


def _texts(values: list[str], where: str) -> list[str]:
    return [scrub(v, where=where) for v in values]


def subject_import(
    *, app: App, external_id: str, document, actor: Actor, config: MemoryConfig
) -> dict[str, int]:
    """Write the exported subject `document` as the App's subject `external_id`; returns the rows
    written per kind. Refuses (409) a subject that already holds memory: merging two histories of
    facts and notes is not something an import can decide. All or nothing: a malformed document
    is a 400, a reference to an item it does not hold a 404, two items that collide (the same id,
    two active versions of a fact, a note linked to itself) a 409, and nothing is written."""
    export_validate(document)
    try:
        return _import(app=app, external_id=external_id, document=document, actor=actor, config=config)
    except IntegrityError as exc:
        raise Conflict(
            "the document holds items that collide (two rows with the same unique fields)", field="body"
        ) from exc


@transaction.atomic
def _import(*, app: App, external_id: str, document, actor: Actor, config: MemoryConfig) -> dict[str, int]:
    subject = subject_get_or_create(app=app, external_id=external_id)
    if subject_has_memory(subject):
        raise Conflict(f"subject {external_id!r} already holds memory; delete it first", field="subject")
    if document["display_name"] and not subject.display_name:
        subject.display_name = document["display_name"][:200]
        subject.save(update_fields=["display_name"])
    ids = _Ids()
    counts: dict[str, int] = {}

    def count(kind: str, n: int = 1) -> None:
        counts[kind] = counts.get(kind, 0) + n

    for i, c in enumerate(document["conversations"]):
        at = f"conversations[{i}]"
        conversation = Conversation.objects.create(
            subject=subject,
            external_id=c["external_id"],
            mode=c["mode"],
            scope=c["scope"],
            working_dir=c["working_dir"],
            created_at=_at(c["created_at"]),
            updated_at=_at(c["updated_at"]),
        )
        ids.put("conversation", c["id"], conversation.pk, f"{at}.id")
        count("conversations")
        for j, m in enumerate(c["messages"]):
            message = Message.objects.create(
                conversation=conversation,
                role=m["role"],
                name=speaker_name(scrub(m.get("name", ""), where="message")),
                text=scrub(m["text"], where="message"),
                occurred_at=_at(m["occurred_at"]),
                external_id=m["external_id"],
                created_at=_at(m["created_at"]),
            )
            ids.put("message", m["id"], message.pk, f"{at}.messages[{j}].id")
            count("messages")

    evidence_to_embed: list[int] = []
    for i, e in enumerate(document["evidence"]):
        at = f"evidence[{i}]"
        conversation_id = ids.need("conversation", e["conversation"], f"{at}.conversation")
        message_id = ids.need("message", e["message"], f"{at}.message")
        if not Message.objects.filter(pk=message_id, conversation_id=conversation_id).exists():
            raise NotFound(
                f"no message {e['message']} in conversation {e['conversation']}", field=f"{at}.message"
            )
        unit = Evidence.objects.create(
            subject=subject,
            conversation_id=conversation_id,
            message_id=message_id,
            role=e["role"],
            name=speaker_name(scrub(e.get("name", ""), where="evidence")),
            text=scrub(e["text"], where="evidence"),
            scope=e["scope"],
            occurred_at=_at(e["occurred_at"]),
            category=e["category"],
            status=e["status"],
            vote_score=e["vote_score"],
            recall_count=e["recall_count"],
            last_recalled_at=_when(e["last_recalled_at"]),
            archived_at=_when(e["archived_at"]),
            created_at=_at(e["created_at"]),
        )
        ids.put("evidence", e["id"], unit.pk, f"{at}.id")
        count("evidence")
        if unit.status not in (EvidenceStatus.DENIED, EvidenceStatus.FORGOTTEN):
            evidence_to_embed.append(unit.pk)

    for i, item in enumerate(document["lessons"]):
        lesson = Lesson.objects.create(
            subject=subject,
            text=scrub(item["text"], where="lesson"),
            tags=item["tags"],
            vote_score=item["vote_score"],
            recall_count=item["recall_count"],
            last_recalled_at=_when(item["last_recalled_at"]),
            parked_at=_when(item.get("parked_at")),
            origin=Origin.IMPORT,
            distiller=item["distiller"],
            version=item["version"],
            created_at=_at(item["created_at"]),
            updated_at=_at(item["updated_at"]),
        )
        ids.put("lesson", item["id"], lesson.pk, f"lessons[{i}].id")
        LessonVersion.objects.bulk_create(
            LessonVersion(
                lesson=lesson,
                version=v["version"],
                text=scrub(v["text"], where="lesson"),
                tags=v["tags"],
                origin=v["origin"],
                created_at=_at(v["created_at"]),
            )
            for v in item["versions"]
        )
        count("lessons")
        count("lesson_versions", len(item["versions"]))

    for i, item in enumerate(document["procedures"]):
        procedure = Procedure.objects.create(
            subject=subject,
            lesson_id=ids.get("lesson", item["lesson"], f"procedures[{i}].lesson"),
            title=scrub(item["title"], where="procedure"),
            steps=_texts(item["steps"], "procedure"),
            tags=item["tags"],
            vote_score=item["vote_score"],
            recall_count=item["recall_count"],
            last_recalled_at=_when(item["last_recalled_at"]),
            parked_at=_when(item.get("parked_at")),
            origin=Origin.IMPORT,
            distiller=item["distiller"],
            version=item["version"],
            created_at=_at(item["created_at"]),
            updated_at=_at(item["updated_at"]),
        )
        ids.put("procedure", item["id"], procedure.pk, f"procedures[{i}].id")
        ProcedureVersion.objects.bulk_create(
            ProcedureVersion(
                procedure=procedure,
                version=v["version"],
                title=scrub(v["title"], where="procedure"),
                steps=_texts(v["steps"], "procedure"),
                tags=v["tags"],
                origin=v["origin"],
                created_at=_at(v["created_at"]),
            )
            for v in item["versions"]
        )
        count("procedures")
        count("procedure_versions", len(item["versions"]))

    notes: list[Note] = []
    for i, n in enumerate(document["notes"]):
        at = f"notes[{i}]"
        note = Note.objects.create(
            subject=subject,
            content=scrub(n["content"], where="note"),
            tags=n["tags"],
            mode=n["mode"],
            scope=n["scope"],
            working_dir=n["working_dir"],
            conversation_id=ids.get("conversation", n["conversation"], f"{at}.conversation"),
            source_message_id=ids.get("message", n["source_message"], f"{at}.source_message"),
            occurred_at=_when(n["occurred_at"]),
            vote_score=n["vote_score"],
            recall_count=n["recall_count"],
            last_recalled_at=_when(n["last_recalled_at"]),
            archived_at=_when(n["archived_at"]),
            parked_at=_when(n.get("parked_at")),
            consolidated_into_id=ids.get("lesson", n["consolidated_into"], f"{at}.consolidated_into"),
            category=n["category"],
            origin=Origin.IMPORT,
            confidence=n["confidence"],
            version=n["version"],
            created_at=_at(n["created_at"]),
            updated_at=_at(n["updated_at"]),
        )
        ids.put("note", n["id"], note.pk, f"{at}.id")
        notes.append(note)
        NoteVersion.objects.bulk_create(
            NoteVersion(
                note=note,
                version=v["version"],
                content=scrub(v["content"], where="note"),
                tags=v["tags"],
                origin=v["origin"],
                created_at=_at(v["created_at"]),
            )
            for v in n["versions"]
        )
        NoteSource.objects.bulk_create(
            NoteSource(
                note=note,
                conversation_id=ids.get("conversation", s["conversation"], f"{at}.sources[{j}].conversation"),
                message_id=ids.get("message", s["message"], f"{at}.sources[{j}].message"),
                created_at=_at(s["created_at"]),
            )
            for j, s in enumerate(n["sources"])
        )
        count("notes")
        count("note_versions", len(n["versions"]))
        count("note_sources", len(n["sources"]))

    for i, link in enumerate(document["links"]):
        NoteLink.objects.create(
            src_id=ids.need("note", link["src"], f"links[{i}].src"),
            dst_id=ids.need("note", link["dst"], f"links[{i}].dst"),
            kind=link["kind"],
            weight=link["weight"],
            origin=Origin.IMPORT,
            created_at=_at(link["created_at"]),
        )
        count("links")

    facts: list[tuple[ProfileFact, int | None, int]] = []
    for i, f in enumerate(document["facts"]):
        at = f"facts[{i}]"
        fact = ProfileFact.objects.create(
            subject=subject,
            key=f["key"],
            value=scrub(f["value"], where="fact"),
            pinned=f["pinned"],
            keywords=f["keywords"],
            mode=f["mode"],
            scope=f["scope"],
            confidence=f["confidence"],
            confirmations=f["confirmations"],
            vote_score=f["vote_score"],
            category=f["category"],
            origin=Origin.IMPORT,
            source_message_id=ids.get("message", f["source_message"], f"{at}.source_message"),
            valid_from=_at(f["valid_from"]),
            valid_to=_when(f["valid_to"]),
            parked_at=_when(f.get("parked_at")),
            exceptions=redact_data(f["exceptions"]),
            created_at=_at(f["recorded_at"]),
        )
        ids.put("fact", f["id"], fact.pk, f"{at}.id")
        facts.append((fact, f["superseded_by"], i))
        count("facts")
    for fact, superseded_by, i in facts:
        if superseded_by is not None:
            fact.superseded_by_id = ids.get("fact", superseded_by, f"facts[{i}].superseded_by")
            fact.save(update_fields=["superseded_by"])

    VoteEvent.objects.bulk_create(
        VoteEvent(
            subject=subject,
            item_kind=v["item_kind"],
            item_id=ids.need(v["item_kind"], v["item_id"], f"votes[{i}].item_id"),
            signal=v["signal"],
            delta=v["delta"],
            mode=v["mode"],
            actor=v["actor"],
            created_at=_at(v["created_at"]),
        )
        for i, v in enumerate(document["votes"])
    )
    count("votes", len(document["votes"]))

    categories = {c.slug: c for c in ConsentCategory.objects.all()}
    for slug, policy in document["consent"].items():
        if slug not in categories:
            raise NotFound(f"no consent category {slug!r} on this server", field=f"consent.{slug}")
        SubjectConsent.objects.create(subject=subject, category=categories[slug], policy=policy)
        count("consent")

    for i, p in enumerate(document["pending"]):
        at = f"pending[{i}]"
        if p["category"] not in categories:
            raise NotFound(f"no consent category {p['category']!r} on this server", field=f"{at}.category")
        payload = redact_data(p["payload"])
        if p["kind"] == ItemKind.EVIDENCE and isinstance(payload.get("evidence_id"), int):
            payload["evidence_id"] = ids.need("evidence", payload["evidence_id"], f"{at}.payload.evidence_id")
        result = p["result_id"]
        PendingMemory.objects.create(
            subject=subject,
            kind=p["kind"],
            payload=payload,
            category=categories[p["category"]],
            content_hash=p["content_hash"],
            source_message_id=ids.get("message", p["source_message"], f"{at}.source_message"),
            status=p["status"],
            decided_at=_when(p["decided_at"]),
            decided_by=p["decided_by"],
            result_id=ids.maps.get(p["kind"], {}).get(result) if result is not None else None,
            created_at=_at(p["created_at"]),
        )
        count("pending")

    if embeddings_enabled(config):
        for note in notes:
            enqueue("memory.note_embed", note.pk)
        for evidence_id in evidence_to_embed:
            enqueue("memory.evidence_embed", evidence_id)
    memory_changed(subject_id=subject.pk)
    audit_record(
        actor=actor,
        action="subject.imported",
        subject=subject,
        object_kind="subject",
        object_id=subject.pk,
        data={"from_app": document["app"], "counts": counts},
    )
    return counts
