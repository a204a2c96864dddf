"""How much of a labelled conversation set the session-summary pipeline captures
(`manage.py summaries_eval`; the set: tests/data/session_summaries/sessions.json).

The set is one person's conversations in several projects, each with `expected` items (kinds
in KINDS) and `distractors`, plus project-level items and distractors, and `secrets`. It is
loaded into a fresh subject of a new App (`set_load`), the pipeline runs once with `force`
(`chat.summaries.pipeline.summaries_run`), and `evaluate` reads what it wrote:

- an item is **captured** by a text when one line of it holds, for every keyword group of the
  item, one of the group's alternatives: case-insensitive, at word boundaries (no letter or
  digit either side; an alternative ending in `*` is a prefix). One line, because a bullet or
  a step is the unit a reader takes in; the same words scattered over a document do not count;
- a conversation's item is looked for in its **extraction** (title, synopsis, raw memory);
  every item whose `final` is not false (still true at the end of the history) in the
  **documents** of its scope (MEMORY.md, memory_summary.md and the live skills) and, apart,
  in the **summary** alone (memory_summary.md, what a new conversation is given);
- a workflow with `steps` is captured **as a skill** when one live SKILL.md of its scope
  holds every step group (each on some line of it);
- a **distractor** is present when one line holds every keyword group and none of its
  `unless` words (a line saying "GraphQL was rejected" does not present GraphQL as chosen);
- a **secret** leaks when its exact text is in any document or extraction of the subject.
"""

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path

from django.utils import timezone

from memory.documents import MEMORY_MD, SUMMARY_MD, documents_current, project_of
from memory.models import ConsentCategory, DocumentKind, Policy, SessionExtraction, Subject
from memory.services import Actor, app_create, subject_get_or_create
from memory.services.consent import consent_policy_set
from memory.services.conversations import conversation_get_or_create, message_add

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "session_summaries" / "sessions.json"
KINDS = ("decision", "constraint", "failure_fix", "workflow", "tool", "preference", "open_question")
SUBJECT_EXTERNAL_ID = "session-summaries-eval"
# the backend on, every conversation due at once whatever its age
BACKEND = {"backend": "local", "memories": {"minRolloutIdleHours": 0, "maxRolloutAgeDays": 3650}}


def load_set(path: Path | str = DEFAULT_DATA) -> dict:
    return json.loads(Path(path).read_text())


# --- matching -------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _term(alternative: str) -> re.Pattern:
    word = alternative.lower().strip()
    if word.endswith("*"):
        return re.compile(r"(?<![a-z0-9])" + re.escape(word[:-1]))
    return re.compile(r"(?<![a-z0-9])" + re.escape(word) + r"(?![a-z0-9])")


def term_in(text: str, alternatives: list[str]) -> bool:
    lowered = text.lower()
    return any(_term(a).search(lowered) for a in alternatives)


def line_matches(line: str, groups: list[list[str]]) -> bool:
    return bool(groups) and all(term_in(line, group) for group in groups)


def captured_in(text: str, groups: list[list[str]]) -> bool:
    """Whether one line of `text` holds an alternative of every group."""
    return any(line_matches(line, groups) for line in (text or "").splitlines())


def distractor_in(text: str, distractor: dict) -> bool:
    unless = distractor.get("unless", [])
    return any(
        line_matches(line, distractor["keywords"]) and not (unless and term_in(line, unless))
        for line in (text or "").splitlines()
    )


def steps_in(text: str, steps: list[list[str]]) -> bool:
    """Whether every step group is on some line of `text` (a skill's steps are its lines)."""
    return bool(steps) and all(captured_in(text, [group]) for group in steps)


# --- what the pipeline wrote ----------------------------------------------------------------


@dataclass
class ScopeDocuments:
    memory: str = ""
    summary: str = ""
    skills: dict[str, str] = field(default_factory=dict)  # path → content

    @property
    def all_text(self) -> str:
        return "\n".join([self.memory, self.summary, *self.skills.values()])


def subject_documents(subject: Subject) -> dict[str, ScopeDocuments]:
    """The subject's live documents by scope (mental models left out: they are not summaries)."""
    scopes: dict[str, ScopeDocuments] = {}
    for document in documents_current(subject=subject):
        docs = scopes.setdefault(document.scope, ScopeDocuments())
        content = document.current.content if document.current else ""
        if document.path == MEMORY_MD:
            docs.memory = content
        elif document.path == SUMMARY_MD:
            docs.summary = content
        elif document.kind == DocumentKind.SKILL:
            docs.skills[document.path] = content
    return scopes


def subject_extractions(subject: Subject) -> dict[str, str]:
    """Each conversation's extraction as one text (title, synopsis, raw memory), by external id."""
    return {
        e.conversation.external_id: "\n".join([e.title, e.synopsis, e.raw_memory])
        for e in SessionExtraction.objects.filter(subject=subject).select_related("conversation")
    }


# --- loading and running --------------------------------------------------------------------


def set_load(data: dict, *, app, actor: Actor) -> Subject:
    """One subject with every conversation of the set, messages at their labelled times."""
    subject = subject_get_or_create(app=app, external_id=SUBJECT_EXTERNAL_ID)
    for case in data["conversations"]:
        conversation, _ = conversation_get_or_create(
            subject=subject,
            external_id=case["id"],
            scope=case.get("scope", ""),
            working_dir=case.get("working_dir", ""),
            actor=actor,
        )
        for number, message in enumerate(case["messages"], start=1):
            message_add(
                conversation=conversation,
                role=message["role"],
                text=message["text"],
                occurred_at=datetime.fromisoformat(message["at"]),
                external_id=f"{case['id']}:{number}",
                actor=actor,
            )
    return subject


def _merged(base: dict, override: dict) -> dict:
    result = dict(base)
    for key, value in override.items():
        both_trees = isinstance(value, dict) and isinstance(result.get(key), dict)
        result[key] = _merged(result[key], value) if both_trees else value
    return result


def app_config(llm: dict | None = None, overrides: dict | None = None) -> dict:
    """The eval App's config: the backend on, and the summaries model (none: the heuristic path,
    whatever llm.default the environment sets), then `overrides` (a `memory` tree, e.g.
    {"memories": {"stageOneOutputTokens": 600}}) merged into it key by key."""
    tree = {**BACKEND, "llm": llm or {"summaries": "none", "default": "none"}}
    return {"memory": _merged(tree, overrides or {})}


CONSENT_MODES = ("approved", "default")


def measure(
    data: dict,
    *,
    llm: dict | None = None,
    config: dict | None = None,
    actor: Actor | None = None,
    consent: str = "approved",
) -> "Report":
    """Load the set into a new App's subject, run the pipeline once (force) and score it;
    `config` is merged into the App's config (`app_config`).

    Summaries keep only what the consent gate lets memory keep. `consent` "approved": the
    subject allows every category first, as a person who approved the sensitive turns would
    (what the pipeline makes of the conversations); "default": the default policies (every
    category *ask*), so sensitive turns wait and stay out (what a new subject gets)."""
    from chat.summaries.pipeline import summaries_run

    if consent not in CONSENT_MODES:
        raise ValueError(f"consent must be one of {', '.join(CONSENT_MODES)}")
    actor = actor or Actor.system("summaries-eval")
    app = app_create(
        name=f"summaries-eval-{timezone.now():%Y%m%d-%H%M%S-%f}",
        config=app_config(llm, config),
        actor=actor,
    )
    subject = set_load(data, app=app, actor=actor)
    if consent == "approved":
        for category in ConsentCategory.objects.values_list("slug", flat=True):
            consent_policy_set(subject=subject, category=category, policy=Policy.ALLOW, actor=actor)
    run = summaries_run(subject=subject, actor=actor, force=True)
    report = evaluate(data, subject=subject)
    report.app = app.name
    report.run = dict(run.stats or {}) if run is not None else {}
    return report


# --- scoring --------------------------------------------------------------------------------


@dataclass
class ItemResult:
    id: str
    kind: str
    scope: str
    level: str  # "conversation" or "project"
    conversation: str | None
    text: str
    extraction: bool | None  # None: not scored there
    documents: bool | None
    summary: bool | None
    skill: bool | None


@dataclass
class DistractorResult:
    kind: str
    scope: str
    level: str
    conversation: str | None
    text: str
    extraction: bool | None
    documents: bool
    summary: bool


@dataclass
class Report:
    items: list[ItemResult]
    distractors: list[DistractorResult]
    secrets: dict[str, list[str]]  # secret → where it leaked (never the secret in as_dict)
    app: str = ""
    run: dict = field(default_factory=dict)

    def counts(self) -> dict:
        rows: dict = {}
        for kind in (*KINDS, "total"):
            items = [i for i in self.items if kind == "total" or i.kind == kind]
            rows[kind] = {
                column: _ratio([getattr(i, column) for i in items])
                for column in ("extraction", "documents", "summary", "skill")
            }
            rows[kind]["n"] = len(items)
        return rows

    def as_dict(self) -> dict:
        return {
            "app": self.app,
            "run": self.run,
            "by_kind": self.counts(),
            "distractors": {
                column: _ratio([getattr(d, column) for d in self.distractors])
                for column in ("extraction", "documents", "summary")
            },
            "secrets_leaked": sum(1 for places in self.secrets.values() if places),
            "secrets_where": sorted({p for places in self.secrets.values() for p in places}),
            "items": [vars(i) for i in self.items],
            "distractor_items": [vars(d) for d in self.distractors],
        }


def _ratio(values: list[bool | None]) -> dict:
    scored = [v for v in values if v is not None]
    return {"captured": sum(scored), "of": len(scored)}


def evaluate(data: dict, *, subject: Subject) -> Report:
    """Score what the pipeline left for `subject` against the labelled set `data`."""
    documents = subject_documents(subject)
    extractions = subject_extractions(subject)
    empty = ScopeDocuments()
    items: list[ItemResult] = []
    distractors: list[DistractorResult] = []

    def item_result(item: dict, level: str, conversation: str | None) -> ItemResult:
        docs = documents.get(item["scope"], empty)
        final = item.get("final", True)
        groups = item["keywords"]
        steps = item.get("steps")
        return ItemResult(
            id=item["id"],
            kind=item["kind"],
            scope=item["scope"],
            level=level,
            conversation=conversation,
            text=item["text"],
            extraction=captured_in(extractions.get(conversation, ""), groups) if conversation else None,
            documents=captured_in(docs.all_text, groups) if final else None,
            summary=captured_in(docs.summary, groups) if final else None,
            skill=any(steps_in(s, steps) for s in docs.skills.values()) if steps else None,
        )

    def distractor_result(d: dict, level: str, conversation: str | None) -> DistractorResult:
        docs = documents.get(d["scope"], empty)
        return DistractorResult(
            kind=d["kind"],
            scope=d["scope"],
            level=level,
            conversation=conversation,
            text=d["text"],
            extraction=distractor_in(extractions.get(conversation, ""), d) if conversation else None,
            documents=distractor_in(docs.all_text, d),
            summary=distractor_in(docs.summary, d),
        )

    for case in data["conversations"]:
        items += [item_result(i, "conversation", case["id"]) for i in case["expected"]]
        distractors += [distractor_result(d, "conversation", case["id"]) for d in case.get("distractors", [])]
    for project in data.get("projects", []):
        items += [item_result(i, "project", None) for i in project["expected"]]
        distractors += [distractor_result(d, "project", None) for d in project.get("distractors", [])]
    places = {
        **{f"extraction {cid}": text for cid, text in extractions.items()},
        **{f"documents {scope or '(subject)'}": docs.all_text for scope, docs in documents.items()},
    }
    secrets = {
        secret: [where for where, text in places.items() if secret in text]
        for secret in data.get("secrets", [])
    }
    return Report(items=items, distractors=distractors, secrets=secrets)


def set_scopes(data: dict) -> list[str]:
    """The project scopes of the set's conversations, as the pipeline names them."""
    return sorted({project_of(c.get("scope", ""), c.get("working_dir", "")) for c in data["conversations"]})


def format_table(report: Report, title: str = "") -> str:
    counts = report.counts()

    def cell(value: dict) -> str:
        return f"{value['captured']}/{value['of']}" if value["of"] else "-"

    header = f"{'kind':<14} {'n':>3}  {'extraction':>10}  {'documents':>9}  {'summary':>7}  {'skill':>5}"
    lines = [title, header] if title else [header]
    for kind, row in counts.items():
        lines.append(
            f"{kind:<14} {row['n']:>3}  {cell(row['extraction']):>10}  {cell(row['documents']):>9}  "
            f"{cell(row['summary']):>7}  {cell(row['skill']):>5}"
        )
    found = report.as_dict()
    d = found["distractors"]
    lines.append(
        f"distractors present (lower is better): extraction {cell(d['extraction'])}, documents "
        f"{cell(d['documents'])}, summary {cell(d['summary'])}"
    )
    lines.append(f"secrets leaked (must be 0): {found['secrets_leaked']} of {len(report.secrets)}")
    return "\n".join(lines) + "\n"


def format_misses(report: Report) -> str:
    """Every item not captured in its documents, and every distractor present."""
    lines = []
    for i in report.items:
        if i.documents is False or (i.documents is None and i.extraction is False):
            where = i.conversation or f"project {i.scope}"
            lines.append(f"missed   {i.kind:<13} [{where}] {i.text}")
    for d in report.distractors:
        if d.documents or d.extraction:
            lines.append(f"present  {d.kind:<13} [{d.conversation or d.scope}] {d.text}")
    return "\n".join(lines) + ("\n" if lines else "")
