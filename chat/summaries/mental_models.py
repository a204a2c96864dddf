"""Mental models: named Markdown documents about the person (kind mental_model, scope "",
memory://root/mental_models/<name>.md), each saying what it models (`description`) and
whether every summaries run refreshes it (`auto_refresh`).

A refresh reads the evidence that bears on the model — the profile facts, the recent notes
and their tags, the session extractions' raw memory — and writes it as a few Markdown
bullets, at most MAX_TOKENS. Each built-in model has its own selection rule (who-they-are
takes identity facts, current-projects the extractions' titles and decisions by project, …);
every model, built-in or not, also takes the items whose words overlap its description. With
a `summaries` model configured (client_for("summaries")), the model rewrites the previous
version from the same evidence (prompt memories/mental_model); without one, or when it fails,
the bullets are the evidence itself, deterministic: the same rows give the same text, so an
unchanged subject adds no version.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from chat.summaries.asking import model_answer
from chat.summaries.blocks import parse_block
from memory.config import MemoryConfig, get_config
from memory.documents import NAME, document_get, documents_current, mental_model_path
from memory.models import (
    DocumentKind,
    MemoryDocument,
    MemoryDocumentVersion,
    Note,
    SessionExtraction,
    Subject,
)
from memory.selectors import fact_list
from memory.services.audit import Actor
from memory.services.documents import document_write
from memory.text import query_terms
from memory.tokens import estimate_tokens, truncate_to_tokens
from memoryweb.errors import Conflict, InvalidInput, NotFound
from memoryweb.llm import client_for

MAX_TOKENS = 300
EVIDENCE_TOKENS = 2000  # what the LLM path is shown
RECENT_NOTES = 200
RECENT_EXTRACTIONS = 50
EMPTY = "- Nothing known about this yet."
PROMPT = "memories/mental_model"
RESERVED_NAMES = frozenset({"seed", "refresh"})

BUILTIN_MODELS: dict[str, str] = {
    "who-they-are": "The person: name, identity, job and role, employer, where they live, "
    "background, languages, family and the people around them.",
    "current-projects": "What they are working on: each project, its status, the decisions taken "
    "and the next steps.",
    "working-preferences": "How they like to work and to be answered: preferences, tools, editor, "
    "languages, constraints and what they dislike.",
    "open-commitments": "What is still open: plans, promises, open questions and things to follow up.",
}

IDENTITY_KEYS = (
    "name",
    "preferred_name",
    "pronouns",
    "job_title",
    "employer",
    "location",
    "hometown",
    "birthplace",
    "school",
    "languages",
    "languages.learning",
    "partner",
    "children",
    "pets",
    "birthday",
)
WORK_STYLE_KEYS = ("programming_languages", "os", "editor", "tools", "diet")
IDENTITY_TAGS = {"people", "family", "identity", "work"}
PROJECT_TAGS = {"decision", "project", "work"}
PREFERENCE_TAGS = {"preference", "preferences", "style"}
COMMITMENT_TAGS = {"plan", "decision", "remembered", "reminder", "todo"}


@dataclass
class Evidence:
    """What one refresh may say, in the order it says it: `ruled` lines (the model's own
    selection rule) first, then lines found by description overlap, best first."""

    ruled: list[str] = field(default_factory=list)
    matched: list[tuple[int, int, str]] = field(default_factory=list)  # (-overlap, order, line)

    def lines(self) -> list[str]:
        found = [line for _, _, line in sorted(self.matched)]
        return list(dict.fromkeys([*self.ruled, *found]))


def _stem(word: str) -> str:
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    return word[:5]


def _stems(text: str) -> set[str]:
    return {_stem(t) for t in query_terms(text, limit=200) if len(t) >= 3 and not t.isdigit()}


def _fact_line(key: str, value: str) -> str:
    if key.startswith("preference.") and value in ("likes", "dislikes"):
        return f"{value.capitalize()} {key.partition('.')[2].replace('_', ' ')}"
    if key.startswith("favorite."):
        return f"Favourite {key.partition('.')[2].replace('_', ' ')}: {value}"
    label = key.replace(".", " ").replace("_", " ")
    return f"{label[:1].upper()}{label[1:]}: {value}"


def _note_line(note: Note) -> str:
    tags = f" [{', '.join(note.tags[:4])}]" if note.tags else ""
    day = (note.occurred_at or note.created_at).date().isoformat()
    return f"{' '.join(note.content.split())} ({day}){tags}"


def _extraction_label(extraction: SessionExtraction) -> str:
    return extraction.scope or extraction.working_dir or "general"


@dataclass
class Sources:
    facts: list
    notes: list[Note]
    extractions: list[tuple[SessionExtraction, dict[str, list[str]]]]


def _sources(subject: Subject) -> Sources:
    facts = fact_list(subject=subject)
    notes = list(
        Note.objects.filter(subject=subject, archived_at__isnull=True, parked_at__isnull=True).order_by(
            "-created_at", "-pk"
        )[:RECENT_NOTES]
    )
    extractions = [
        (e, parse_block(e.raw_memory))
        for e in SessionExtraction.objects.filter(subject=subject).order_by("-last_message_at", "-pk")[
            :RECENT_EXTRACTIONS
        ]
    ]
    return Sources(facts=facts, notes=notes, extractions=extractions)


# --- the built-ins' selection rules: Sources → lines ------------------------------------------


def _who_they_are(sources: Sources) -> list[str]:
    order = {key: i for i, key in enumerate(IDENTITY_KEYS)}
    facts = sorted((f for f in sources.facts if f.key in order), key=lambda f: (order[f.key], f.pk))
    lines = [_fact_line(f.key, f.value) for f in facts]
    lines += [_note_line(n) for n in sources.notes if IDENTITY_TAGS & set(n.tags[:1])][:5]
    return lines


def _current_projects(sources: Sources) -> list[str]:
    by_project: dict[str, list[tuple[SessionExtraction, dict]]] = {}
    for extraction, sections in sources.extractions:
        by_project.setdefault(_extraction_label(extraction), []).append((extraction, sections))
    lines = []
    for project, rows in by_project.items():  # newest project first (extractions are newest first)
        latest = rows[0][0]
        titles = "; ".join(dict.fromkeys(e.title for e, _ in rows[:3] if e.title))
        line = f"**{project}** (last worked on {latest.last_message_at.date().isoformat()})"
        lines.append(f"{line}: {titles}" if titles else line)
        decisions = [d for _, s in rows for d in s["decisions"]][:3]
        lines += [f"{project}, decided: {d}" for d in decisions]
        questions = [q for _, s in rows[:2] for q in s["open_questions"]][:2]
        lines += [f"{project}, open: {q}" for q in questions]
    lines += [_note_line(n) for n in sources.notes if PROJECT_TAGS & set(n.tags)][:5]
    return lines


def _working_preferences(sources: Sources) -> list[str]:
    facts = [
        f for f in sources.facts if f.key.startswith(("preference.", "favorite.")) or f.key in WORK_STYLE_KEYS
    ]
    lines = [_fact_line(f.key, f.value) for f in facts]
    for _, sections in sources.extractions:
        lines += sections["preferences"] + sections["constraints"]
    lines += [_note_line(n) for n in sources.notes if PREFERENCE_TAGS & set(n.tags)]
    return lines


def _open_commitments(sources: Sources) -> list[str]:
    lines = [_note_line(n) for n in sources.notes if COMMITMENT_TAGS & set(n.tags[:1])][:8]
    for extraction, sections in sources.extractions:
        lines += [f"{_extraction_label(extraction)}: {q}" for q in sections["open_questions"]]
    return lines


RULES: dict[str, Callable[[Sources], list[str]]] = {
    "who-they-are": _who_they_are,
    "current-projects": _current_projects,
    "working-preferences": _working_preferences,
    "open-commitments": _open_commitments,
}


def _evidence(*, name: str, description: str, sources: Sources) -> Evidence:
    evidence = Evidence()
    rule = RULES.get(name)
    if rule is not None:
        evidence.ruled = rule(sources)
    wanted = _stems(f"{name.replace('-', ' ')} {description}")
    # a built-in's description is broad: its rule did the choosing, overlap only adds close calls
    needed = 2 if rule is not None else 1
    candidates = [_fact_line(f.key, f.value) for f in sources.facts]
    candidates += [_note_line(n) for n in sources.notes]
    for extraction, sections in sources.extractions:
        label = _extraction_label(extraction)
        candidates += [f"{label}: {item}" for items in sections.values() for item in items]
    for order, line in enumerate(candidates):
        overlap = len(wanted & _stems(line))
        if overlap >= needed:
            evidence.matched.append((-overlap, order, line))
    return evidence


def _bullets(lines: list[str], cap: int) -> str:
    """Bullets of `lines` while they fit under `cap` tokens (the first one cut to fit)."""
    out: list[str] = []
    for line in lines:
        bullet = f"- {' '.join(line.split())}"
        if estimate_tokens("\n".join([*out, bullet])) > cap:
            if not out:
                out.append(truncate_to_tokens(bullet, cap))
            break
        out.append(bullet)
    return "\n".join(out)


@dataclass
class Refreshed:
    content: str
    method: str
    input_tokens: int = 0
    output_tokens: int = 0


def mental_model_compose(
    *, subject: Subject, name: str, description: str, previous: str, config: MemoryConfig
) -> Refreshed:
    """The model's next content from the subject's evidence: a `summaries` model's rewrite of
    `previous`, or (no model, or it failed) the evidence's bullets. Writes nothing."""
    lines = _evidence(name=name, description=description, sources=_sources(subject)).lines()
    heuristic = _bullets(lines, MAX_TOKENS) or EMPTY
    client = client_for("summaries", config) if lines else None
    if client is None:
        return Refreshed(content=heuristic, method="heuristic")
    variables = {
        "name": name,
        "description": description,
        "previous": previous,
        "evidence": _bullets(lines, EVIDENCE_TOKENS),
    }
    answer, input_tokens = model_answer(client, prompt=PROMPT, variables=variables, max_tokens=MAX_TOKENS * 2)
    content = (answer or {}).get("content", "").strip()
    if not content:
        return Refreshed(content=heuristic, method="heuristic")
    return Refreshed(
        content=truncate_to_tokens(content, MAX_TOKENS),
        method=str(client.spec),
        input_tokens=input_tokens,
        output_tokens=estimate_tokens(content),
    )


# --- reads -----------------------------------------------------------------------------------


def mental_models_list(*, subject: Subject) -> list[MemoryDocument]:
    return documents_current(subject=subject, scope="", kind=DocumentKind.MENTAL_MODEL)


def mental_model_get(*, subject: Subject, name: str) -> MemoryDocument:
    """The subject's mental model `name`; NotFound (naming `name`) when it has none."""
    document = (
        document_get(subject=subject, scope="", path=mental_model_path(name)) if NAME.match(name) else None
    )
    if document is None or document.kind != DocumentKind.MENTAL_MODEL:
        raise NotFound(f"no mental model {name!r}", field="name")
    return document


# --- writes ----------------------------------------------------------------------------------


def _write(
    *, subject: Subject, name: str, description: str, actor: Actor, run=None, **flags
) -> tuple[MemoryDocument, MemoryDocumentVersion | None]:
    existing = document_get(subject=subject, scope="", path=mental_model_path(name))
    previous = existing.current.content if existing is not None and existing.current else ""
    refreshed = mental_model_compose(
        subject=subject, name=name, description=description, previous=previous, config=get_config(subject.app)
    )
    return document_write(
        subject=subject,
        path=mental_model_path(name),
        content=refreshed.content,
        actor=actor,
        name=name,
        description=description,
        method=refreshed.method,
        input_tokens=refreshed.input_tokens,
        output_tokens=refreshed.output_tokens,
        run=run,
        **flags,
    )


def mental_model_create(
    *, subject: Subject, name: str, description: str, auto_refresh: bool, actor: Actor
) -> MemoryDocument:
    """Create the mental model `name` and write its first version at once. InvalidInput
    naming the field for a malformed or reserved name or an empty description; Conflict for a
    name already taken."""
    if not isinstance(name, str) or not NAME.match(name):
        raise InvalidInput(
            "name must be 1–64 lowercase letters, digits and '-', starting with a letter or digit",
            field="name",
        )
    description = " ".join((description or "").split())
    if not description:
        raise InvalidInput("description must say what the model models", field="description")
    if len(description) > 2000:
        raise InvalidInput("description is at most 2000 characters", field="description")
    if name in RESERVED_NAMES:
        raise InvalidInput(f"{name!r} is reserved (mental-models/{name} is an endpoint)", field="name")
    if document_get(subject=subject, scope="", path=mental_model_path(name), include_pruned=True):
        raise Conflict(f"a mental model {name!r} exists already", field="name")
    document, _ = _write(
        subject=subject,
        name=name,
        description=description,
        actor=actor,
        auto_refresh=bool(auto_refresh),
        builtin=False,
    )
    return document


def mental_models_seed(*, subject: Subject, actor: Actor) -> list[MemoryDocument]:
    """Create the built-in models the subject lacks, each refreshed at once; the ones it has
    are left as they are (a person may have edited or switched one off). Safe to repeat."""
    created = []
    for name, description in BUILTIN_MODELS.items():
        if document_get(subject=subject, scope="", path=mental_model_path(name), include_pruned=True):
            continue
        document, _ = _write(
            subject=subject, name=name, description=description, actor=actor, auto_refresh=True, builtin=True
        )
        created.append(document)
    return created


def mental_model_refresh(*, document: MemoryDocument, actor: Actor, run=None) -> MemoryDocumentVersion | None:
    """Rewrite one model from the current evidence. Returns the new version, or None when
    the content came out as it was (no version added). Safe to repeat."""
    if document.kind != DocumentKind.MENTAL_MODEL:
        raise InvalidInput(f"{document.url} is not a mental model", field="name")
    _, version = _write(
        subject=document.subject, name=document.name, description=document.description, actor=actor, run=run
    )
    return version


def mental_models_refresh(*, subject: Subject, actor: Actor, run=None, only_auto: bool = True) -> dict:
    """Refresh the subject's auto-refresh models (every one with `only_auto=False`):
    {"models": how many were refreshed, "versions": how many changed, "changed": their names}."""
    documents = [d for d in mental_models_list(subject=subject) if d.auto_refresh or not only_auto]
    changed = []
    for document in documents:
        if mental_model_refresh(document=document, actor=actor, run=run) is not None:
            changed.append(document.name)
    return {"models": len(documents), "versions": len(changed), "changed": changed}
