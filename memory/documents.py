"""Reading the session-summary artefacts (MemoryDocument): memory:// addresses, the current
documents of a subject, version history and diffs.

Addresses (one scheme for the API, the CLI, the dashboard and the model's citations):

- `memory://root` — the subject-wide summary (memory_summary.md);
- `memory://root/MEMORY.md`, `memory://root/memory_summary.md`,
  `memory://root/skills/<name>/SKILL.md`, `memory://root/mental_models/<name>.md`;
- `memory://scope/<scope>/…` — the same for one project scope (the scope percent-encoded,
  `memory://scope/billing-api/MEMORY.md`).

Anything else does not resolve (`document_resolve` raises NotFound, like a missing document).
"""

import difflib
import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from memory.models import DocumentKind, MemoryDocument, MemoryDocumentVersion, Subject
from memoryweb.errors import NotFound

MEMORY_MD = "MEMORY.md"
SUMMARY_MD = "memory_summary.md"
NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
SKILL_PATH = re.compile(r"^skills/([a-z0-9][a-z0-9-]{0,63})/SKILL\.md$")
MODEL_PATH = re.compile(r"^mental_models/([a-z0-9][a-z0-9-]{0,63})\.md$")


def skill_path(name: str) -> str:
    return f"skills/{name}/SKILL.md"


def mental_model_path(name: str) -> str:
    return f"mental_models/{name}.md"


def kind_of_path(path: str) -> str | None:
    """The kind of document a path names, or None for a path that names none."""
    if path == MEMORY_MD:
        return DocumentKind.MEMORY
    if path == SUMMARY_MD:
        return DocumentKind.SUMMARY
    if SKILL_PATH.match(path):
        return DocumentKind.SKILL
    if MODEL_PATH.match(path):
        return DocumentKind.MENTAL_MODEL
    return None


def document_url(scope: str, path: str) -> str:
    root = "memory://root" if not scope else f"memory://scope/{quote(scope, safe='')}"
    return root if path == SUMMARY_MD else f"{root}/{path}"


@dataclass(frozen=True)
class Address:
    scope: str
    path: str


def parse_url(url: str) -> Address | None:
    """`memory://root/MEMORY.md` → Address("", "MEMORY.md"); None for anything else."""
    if not isinstance(url, str) or not url.startswith("memory://"):
        return None
    rest = url[len("memory://") :]
    if rest == "root" or rest == "root/":
        return Address("", SUMMARY_MD)
    if rest.startswith("root/"):
        scope, path = "", rest[len("root/") :]
    elif rest.startswith("scope/"):
        encoded, sep, path = rest[len("scope/") :].partition("/")
        scope = unquote(encoded)
        if not scope or len(scope) > 200:
            return None
        if not sep or not path:
            path = SUMMARY_MD
    else:
        return None
    return Address(scope, path) if kind_of_path(path) else None


def documents_current(
    *, subject: Subject, scope: str | None = None, kind: str | None = None
) -> list[MemoryDocument]:
    """The subject's live documents (not pruned, with a current version), by scope and path."""
    rows = MemoryDocument.objects.filter(subject=subject, pruned_at__isnull=True, current__isnull=False)
    if scope is not None:
        rows = rows.filter(scope=scope)
    if kind is not None:
        rows = rows.filter(kind=kind)
    return list(rows.select_related("current").order_by("scope", "kind", "path"))


def document_get(
    *, subject: Subject, scope: str, path: str, include_pruned: bool = False
) -> MemoryDocument | None:
    rows = MemoryDocument.objects.filter(subject=subject, scope=scope, path=path).select_related("current")
    if not include_pruned:
        rows = rows.filter(pruned_at__isnull=True)
    return rows.first()


def document_resolve(*, subject: Subject, url: str) -> MemoryDocument:
    """The live document `url` names for `subject`; NotFound for a malformed address, another
    subject's document, a pruned one or one never written."""
    address = parse_url(url)
    document = address and document_get(subject=subject, scope=address.scope, path=address.path)
    if not document or document.current is None:
        raise NotFound(f"no memory document at {url}")
    return document


def document_versions(*, document: MemoryDocument) -> list[MemoryDocumentVersion]:
    return list(document.versions.order_by("number"))


def version_diff(older: MemoryDocumentVersion | None, newer: MemoryDocumentVersion, *, url: str = "") -> str:
    """A unified diff from `older` (None: an empty document) to `newer`."""
    before = older.content if older is not None else ""
    name = url or str(newer.document_id)
    lines = difflib.unified_diff(
        before.splitlines(),
        newer.content.splitlines(),
        fromfile=f"{name} v{older.number}" if older is not None else f"{name} (empty)",
        tofile=f"{name} v{newer.number}",
        lineterm="",
    )
    return "".join(f"{line}\n" for line in lines)


def document_summary_for(*, subject: Subject, scope: str) -> MemoryDocument | None:
    """The summary a conversation in `scope` is given: its scope's, else the subject-wide one."""
    for candidate in dict.fromkeys([scope, ""]):
        document = document_get(subject=subject, scope=candidate, path=SUMMARY_MD)
        if document is not None and document.current_id is not None:
            return document
    return None


def project_of(scope: str, working_dir: str) -> str:
    """The project a conversation (or its extraction) belongs to: its scope, else its working
    directory, else "" (the subject as a whole). Documents of a project carry it as `scope`."""
    return (scope or working_dir or "")[:200]
