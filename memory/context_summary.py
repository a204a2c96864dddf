"""The session-summary pipeline's share of the context (memory.backend "local"): the "Memory
Guidance" block of the stable prefix and the `<mental_models>` block of the tail.

The prefix must stay byte-identical across a conversation's turns (the provider's prompt cache
lives on it), so a conversation keeps the summary version it started with (pinned at its first
recorded build, `Conversation.summary_version`) until it asks for a reload
(memory.services.documents.conversation_memory_reload). What the block lists as learned is
read as of that version too: phase 2 writes a scope's skills and prunes before its summary, in
one transaction (chat/summaries/pipeline.py), so "first written at or before the pinned
version, not pruned by then" is exactly the set that run left.
"""

from dataclasses import dataclass

from django.db.models import Min

from memory.config import MemoryConfig
from memory.documents import MEMORY_MD, document_summary_for, project_of
from memory.models import DocumentKind, MemoryDocument, MemoryDocumentVersion, Subject
from memory.tokens import estimate_tokens, truncate_to_tokens
from memoryweb.llm.templates import render_prompt

READ_PATH = "memories/read-path"
LEARNED_HEADING = "Learned from earlier sessions (read one through its memory:// address when it applies):"
MEMORY_MD_LINE = "the long-term memory document: decisions, constraints, pitfalls"
# the summary layer (memory/beliefs/__init__.py) says what it is wherever it renders: the first
# line of `<mental_models>`, of `### lessons` and of `### procedures` (memory/context.py)
SUMMARY_MARK = "(summaries of earlier notes, not established fact)"


def summaries_on(config: MemoryConfig) -> bool:
    return config["backend"] == "local"


@dataclass
class SummaryChoice:
    """The summary version a build injects, and whether the conversation holds it pinned."""

    version: MemoryDocumentVersion
    pinned: bool
    pin: bool = False  # a recorded build pins it now

    def as_dict(self) -> dict:
        return {"url": self.version.document.url, "version": self.version.number, "pinned": self.pinned}


def summary_choose(
    *, subject: Subject, conversation, config: MemoryConfig, record: bool
) -> SummaryChoice | None:
    """The conversation's pinned summary version; else the current summary of its project (the
    subject-wide one without a conversation), to be pinned by a recorded build. None with the
    backend off or no summary written yet."""
    if not summaries_on(config):
        return None
    if conversation is not None and conversation.summary_version_id is not None:
        version = (
            MemoryDocumentVersion.objects.select_related("document")
            .filter(pk=conversation.summary_version_id, document__subject=subject)
            .first()
        )
        if version is not None:
            return SummaryChoice(version, pinned=True)
    scope = project_of(conversation.scope, conversation.working_dir) if conversation is not None else ""
    document = document_summary_for(subject=subject, scope=scope)
    if document is None or document.current is None:
        return None
    version = document.current
    version.document = document
    pin = record and conversation is not None
    return SummaryChoice(version, pinned=pin, pin=pin)


def _skill_description(document: MemoryDocument, content: str) -> str:
    """A skill's description as its SKILL.md front matter gave it at that version, else the
    document's (front matter is versioned, the document field is not)."""
    lines = content.splitlines()
    if lines and lines[0].strip() == "---":
        for line in lines[1:]:
            if line.strip() == "---":
                break
            key, sep, value = line.partition(":")
            if sep and key.strip() == "description":
                return value.strip().strip("\"'")
    return " ".join(document.description.split())


def learned_lines(version: MemoryDocumentVersion) -> list[str]:
    """MEMORY.md and the skills of the summary's scope as they stood when `version` was written."""
    at = version.created_at
    rows = (
        MemoryDocument.objects.filter(
            subject_id=version.document.subject_id,
            scope=version.document.scope,
            kind__in=[DocumentKind.MEMORY, DocumentKind.SKILL],
        )
        .annotate(first_at=Min("versions__created_at"))
        .filter(first_at__lte=at)
        .exclude(pruned_at__lte=at)
        .order_by("kind", "path")
    )
    documents = list(rows)
    skills = [d for d in documents if d.kind == DocumentKind.SKILL]
    content_then = dict(  # each skill's content at `at`: its last version by then (one query)
        MemoryDocumentVersion.objects.filter(document__in=skills, created_at__lte=at)
        .order_by("document_id", "number")
        .values_list("document_id", "content")
    )
    lines = [f"- {d.url} — {MEMORY_MD_LINE}" for d in documents if d.path == MEMORY_MD]
    for document in skills:
        description = _skill_description(document, content_then.get(document.pk, ""))
        lines.append(f"- {document.url}" + (f" — {description}" if description else ""))
    return lines


def _render(summary: str, learned: list[str]) -> str:
    text = "\n".join([LEARNED_HEADING, *learned]) if learned else ""
    return render_prompt(READ_PATH, {"memory_summary": summary, "learned": text}).strip()


def memory_guidance(version: MemoryDocumentVersion, *, limit: int) -> str:
    """The "Memory Guidance" block for `version`, at most `limit` tokens: the summary is cut to
    what the framing leaves; a framing too long even with an empty summary loses learned lines
    from the end; "" when not even the bare framing fits."""
    learned = learned_lines(version)
    while learned and estimate_tokens(_render("", learned)) > limit:
        learned.pop()
    framing = estimate_tokens(_render("", learned))
    if framing > limit:
        return ""
    summary = version.content.strip()
    room = limit - framing
    while True:
        text = _render(truncate_to_tokens(summary, room) if room > 0 else "", learned)
        if estimate_tokens(text) <= limit:
            return text
        room -= 1


# --- mental models --------------------------------------------------------------------------
def mental_models_text(*, subject: Subject, cap: int) -> tuple[str, int]:
    """`<mental_models>`, marked as summaries (SUMMARY_MARK), with each live mental model of the
    subject (`## name (url)` and its content) under `cap` tokens, and how many it left out. ("", 0) when there are none."""
    documents = [
        d
        for d in MemoryDocument.objects.filter(
            subject=subject,
            kind=DocumentKind.MENTAL_MODEL,
            scope="",
            pruned_at__isnull=True,
            current__isnull=False,
        )
        .select_related("current")
        .order_by("path")
        if d.current is not None and d.current.content.strip()
    ]
    if not documents:
        return "", 0

    def wrap(parts: list[str]) -> str:
        return f"<mental_models>\n{SUMMARY_MARK}\n" + "\n\n".join(parts) + "\n</mental_models>"

    parts: list[str] = []
    omitted = 0
    for index, document in enumerate(documents):
        assert document.current is not None
        heading = f"## {document.name or document.path} ({document.url})"
        content = document.current.content.strip()
        part = f"{heading}\n{content}"
        if estimate_tokens(wrap([*parts, part])) > cap:
            # cut to the room left, keeping room for the line that counts the models after it
            # (they will not fit either)
            after = len(documents) - index - 1 + omitted
            tail = [_omitted(after)] if after else []
            room = cap - estimate_tokens(wrap([*parts, heading + "\n", *tail]))
            part = ""
            while room >= 24 and not part:  # a few words of a model say nothing
                cut = f"{heading}\n{truncate_to_tokens(content, room)}"
                part = cut if estimate_tokens(wrap([*parts, cut, *tail])) <= cap else ""
                room -= 1
            if not part:
                omitted += 1
                continue
        parts.append(part)
    while omitted and parts and estimate_tokens(wrap([*parts, _omitted(omitted)])) > cap:
        parts.pop()
        omitted += 1
    if omitted and estimate_tokens(wrap([*parts, _omitted(omitted)])) <= cap:
        parts.append(_omitted(omitted))
    if not parts:
        return "", omitted
    return wrap(parts), omitted


def _omitted(omitted: int) -> str:
    return f"({omitted} more mental model{'s' if omitted != 1 else ''} not shown)"
