"""Whether the context builder picks what applies (`manage.py applicability_eval`; the set:
tests/data/applicability/labelled.json, described in docs/applicability.md).

The set is a few personas — profile facts, notes, consent policies and the person's decisions
on pending memories, each item with a persona-local `label` — and questions asked of them in a
conversation of some mode and scope, each saying what must and must not render. The expectations
are written from the mode manifests (memory/modes/builtin/*.json), never from what the builder
does:

- an item qualified by `mode` renders only in that mode;
- an item scoped to a project renders where the mode's `scopes` reach ("same", "unscoped",
  "other" — `Mode.scope_allowed`);
- an item of a consent category renders only in a mode whose privacy ceiling allows the
  category (`Mode.category_allowed`), and only while the person consents: a denied, rejected or
  still-pending item never renders, nor one whose category was denied after it was stored;
- of a fact set again under the same key (and mode and scope), only the newest value renders.

Each persona is built into a fresh subject of a new App through the services a client or
reflection would use (`fact_set`, `note_store`, `consent_policy_set`, `memory_candidate_route`
and the pending decisions, `conversation_get_or_create`, `message_add`); every categorised item
passes the consent gate. Each question gets its own conversation (so no earlier turn, cached
build or delivered block colours it) and one `context_build` in that conversation's mode.

A question passes when every check holds:

- `must_include`: each label's item is among the context's items;
- `must_exclude`: no label's item is among them, and its text (a fact's value, a note's first
  NOTE_MARK characters) is nowhere in the tail — so a dropped or superseded value that has no
  row to point at is caught too;
- `abstain`: no fact, note or evidence item renders at all, except the labels in `allowed`
  (pinned identity facts, a preference qualified to this very mode);
- `exact`: each string is in the tail verbatim.
"""

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.utils import timezone

from memory.config import MemoryConfig, get_config
from memory.context import Context, context_build
from memory.models import ItemKind, Policy, ProfileFact, Subject
from memory.modes import mode_get
from memory.services import Actor, app_create, subject_get_or_create
from memory.services.consent import (
    consent_policy_set,
    memory_candidate_route,
    pending_approve,
    pending_reject,
)
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.facts import fact_set
from memory.services.notes import note_store
from memoryweb.errors import InvalidInput
from memoryweb.llm.spec import COMPONENTS

DEFAULT_DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "applicability" / "labelled.json"
CATEGORIES = ("mode_boundary", "privacy_ceiling", "consent", "supersession", "abstention", "exact_recall")
RENDERED_KINDS = ("fact", "note", "evidence")
DECISIONS = ("approved", "rejected")
NOTE_MARK = 40  # a note's text, for `must_exclude`, is its first this many characters

# what became of a labelled item once its persona is loaded
STORED, SUPERSEDED, PENDING, DENIED, REJECTED, REVOKED = (
    "stored",
    "superseded",
    "pending",
    "denied",
    "rejected",
    "revoked",
)


def load_set(path: Path | str = DEFAULT_DATA) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


# --- the set's own rules --------------------------------------------------------------------


def _items(persona: dict) -> list[tuple[str, dict]]:
    return [("fact", f) for f in persona.get("facts", [])] + [("note", n) for n in persona.get("notes", [])]


def label_statuses(persona: dict) -> dict[str, str]:
    """What each labelled item of `persona` is once loaded, from the set alone: stored;
    superseded (a later stored fact of the same key, mode and scope); pending, denied or
    rejected at the consent gate; revoked (stored, then its category denied by
    `consent_after`)."""
    policies = persona.get("consent", {})
    after = persona.get("consent_after", {})
    statuses: dict[str, str] = {}
    for _, item in _items(persona):
        category = item.get("category", "")
        policy = policies.get(category, Policy.ASK) if category else Policy.ALLOW
        if policy == Policy.DENY:
            statuses[item["label"]] = DENIED
        elif policy == Policy.ASK and item.get("decision") != "approved":
            statuses[item["label"]] = REJECTED if item.get("decision") == "rejected" else PENDING
        elif category and after.get(category) == Policy.DENY:
            statuses[item["label"]] = REVOKED
        else:
            statuses[item["label"]] = STORED
    latest: dict[tuple, str] = {}
    for kind, item in _items(persona):
        if kind == "fact" and statuses[item["label"]] in (STORED, REVOKED):
            slot = (item["key"], item.get("mode", ""), item.get("scope", ""))
            if slot in latest:
                statuses[latest[slot]] = SUPERSEDED
            latest[slot] = item["label"]
    return statuses


def set_errors(data: dict) -> list[str]:
    """Everything wrong with the set's shape and labels (empty when it can be measured)."""
    errors: list[str] = []
    personas: dict[str, dict] = {}
    for persona in data.get("personas", []):
        pid = persona.get("id", "?")
        if pid in personas:
            errors.append(f"persona {pid}: id used twice")
        personas[pid] = persona
        conversations = {c["id"] for c in persona.get("conversations", [])}
        for conversation in persona.get("conversations", []):
            errors += _mode_errors(
                conversation.get("mode", ""), f"persona {pid} conversation {conversation['id']}"
            )
        labels = [item.get("label") for _, item in _items(persona)]
        errors += [f"persona {pid}: label {lab!r} used twice" for lab, n in Counter(labels).items() if n > 1]
        for policy_map in ("consent", "consent_after"):
            for category, policy in persona.get(policy_map, {}).items():
                if policy not in Policy.values:
                    errors.append(f"persona {pid}: {policy_map}.{category}: unknown policy {policy!r}")
        for kind, item in _items(persona):
            where = f"persona {pid} {kind} {item.get('label')}"
            category = item.get("category", "")
            if item.get("decision") and item["decision"] not in DECISIONS:
                errors.append(f"{where}: decision must be one of {', '.join(DECISIONS)}")
            if item.get("decision") and persona.get("consent", {}).get(category, Policy.ASK) != Policy.ASK:
                errors.append(f"{where}: a decision needs a category whose policy is ask")
            if category and (item.get("mode") or (kind == "fact" and item.get("scope"))):
                errors.append(
                    f"{where}: a categorised item passes the consent gate, which keeps no qualifier"
                )
            if item.get("conversation") and item["conversation"] not in conversations:
                errors.append(f"{where}: unknown conversation {item['conversation']!r}")
            if item.get("mode"):
                errors += _mode_errors(item["mode"], where)
    for question in data.get("questions", []):
        qid = question.get("id", "?")
        persona = personas.get(question.get("persona", ""))
        if persona is None:
            errors.append(f"question {qid}: unknown persona {question.get('persona')!r}")
            continue
        if question.get("category") not in CATEGORIES:
            errors.append(f"question {qid}: category must be one of {', '.join(CATEGORIES)}")
        errors += _mode_errors(question.get("conversation", {}).get("mode", ""), f"question {qid}")
        statuses = label_statuses(persona)
        for key in ("must_include", "must_exclude", "allowed"):
            for label in question.get(key, []):
                if label not in statuses:
                    errors.append(f"question {qid}: {key}: no label {label!r} in persona {persona['id']}")
                elif key != "must_exclude" and statuses[label] != STORED:
                    errors.append(f"question {qid}: {key}: {label!r} is {statuses[label]}, it cannot render")
        if question.get("allowed") and not question.get("abstain"):
            errors.append(f"question {qid}: allowed goes with abstain")
        if not any(question.get(k) for k in ("must_include", "must_exclude", "abstain", "exact")):
            errors.append(f"question {qid}: expects nothing")
    return errors


def _mode_errors(name: str, where: str) -> list[str]:
    try:
        mode_get(name)
    except InvalidInput as exc:
        return [f"{where}: {exc.message}"]
    return []


# --- loading a persona through the services -------------------------------------------------


@dataclass
class Label:
    label: str
    kind: str  # fact | note
    text: str  # what must not show when excluded
    status: str
    item_id: str = ""  # the context item's id ("f:12", "n:40") when a row was written


@dataclass
class LoadedPersona:
    id: str
    subject: Subject
    labels: dict[str, Label]


def eval_config() -> dict:
    """The eval App's config: every model component off (the heuristic path, whatever the
    environment configures)."""
    return {"memory": {"llm": {"default": "none", **{c: "none" for c in COMPONENTS}}}}


def persona_load(persona: dict, *, app, actor: Actor, config: MemoryConfig) -> LoadedPersona:
    """One subject for `persona`: its consent policies, then every fact and note in order (the
    categorised ones through the consent gate, decided as the set says), then `consent_after`.
    ValueError when what the services did is not what `label_statuses` says it should be."""
    subject = subject_get_or_create(app=app, external_id=persona["id"])
    for category, policy in persona.get("consent", {}).items():
        consent_policy_set(subject=subject, category=category, policy=policy, actor=actor)
    conversations = {}
    for spec in persona.get("conversations", []):
        conversations[spec["id"]], _ = conversation_get_or_create(
            subject=subject,
            external_id=f"{persona['id']}:{spec['id']}",
            mode=spec.get("mode", ""),
            scope=spec.get("scope", ""),
            actor=actor,
        )
    labels: dict[str, Label] = {}
    for kind, item in _items(persona):
        obj, status = _item_write(
            kind, item, subject=subject, conversations=conversations, actor=actor, config=config
        )
        text = item["value"] if kind == "fact" else item["content"][:NOTE_MARK]
        item_id = f"{kind[0]}:{obj.pk}" if obj is not None else ""
        labels[item["label"]] = Label(item["label"], kind, text, status, item_id)
    for category, policy in persona.get("consent_after", {}).items():
        consent_policy_set(subject=subject, category=category, policy=policy, actor=actor)
        for label in labels.values():
            item = next(i for _, i in _items(persona) if i["label"] == label.label)
            if item.get("category") == category and policy == Policy.DENY and label.status == STORED:
                label.status = REVOKED
    superseded = set(
        ProfileFact.objects.filter(subject=subject, valid_to__isnull=False).values_list("pk", flat=True)
    )
    for label in labels.values():
        if label.kind == "fact" and label.item_id and int(label.item_id[2:]) in superseded:
            label.status = SUPERSEDED
    expected = label_statuses(persona)
    wrong = [
        f"{lab}: {labels[lab].status}, the set says {status}"
        for lab, status in expected.items()
        if labels[lab].status != status
    ]
    if wrong:
        raise ValueError(f"persona {persona['id']}: " + "; ".join(wrong))
    return LoadedPersona(persona["id"], subject, labels)


def _item_write(kind, item, *, subject, conversations, actor, config):
    """Write one labelled item; returns (the stored row or None, its status)."""
    conversation = conversations.get(item.get("conversation", ""))
    message = None
    if conversation is not None:
        message, _ = message_add(
            conversation=conversation,
            role="user",
            text=item["content"] if kind == "note" else f"{item['key']}: {item['value']}",
            occurred_at=_when(item),
            actor=actor,
        )
    if item.get("category"):
        if kind == "fact":
            payload = {"key": item["key"], "value": item["value"], "pinned": item["pinned"]}
            if item.get("keywords"):
                payload["keywords"] = item["keywords"]
        else:
            payload = {"content": item["content"], "tags": item.get("tags", [])}
            if item.get("occurred_at"):
                payload["occurred_at"] = item["occurred_at"]
        outcome = memory_candidate_route(
            subject=subject,
            kind=ItemKind.FACT if kind == "fact" else ItemKind.NOTE,
            payload=payload,
            category=item["category"],
            source_message=message,
            actor=actor,
            config=config,
        )
        if outcome.action == "denied":
            return None, DENIED
        if outcome.action == "stored":
            return outcome.obj, STORED
        if item.get("decision") == "approved":
            return pending_approve(pending=outcome.obj, actor=actor, config=config), STORED
        if item.get("decision") == "rejected":
            pending_reject(pending=outcome.obj, actor=actor)
            return None, REJECTED
        return None, PENDING
    if kind == "fact":
        fact, _ = fact_set(
            subject=subject,
            key=item["key"],
            value=item["value"],
            pinned=item["pinned"],
            keywords=item.get("keywords"),
            mode=item.get("mode", ""),
            scope=item.get("scope", ""),
            source_message=message,
            actor=actor,
        )
        return fact, STORED
    note, _ = note_store(
        subject=subject,
        content=item["content"],
        tags=item.get("tags"),
        conversation=conversation,
        source_message=message,
        occurred_at=_when(item) if item.get("occurred_at") else None,
        mode=item.get("mode", ""),
        actor=actor,
        config=config,
    )
    return note, STORED


def _when(item: dict) -> datetime | None:
    return datetime.fromisoformat(item["occurred_at"]) if item.get("occurred_at") else None


# --- scoring --------------------------------------------------------------------------------


@dataclass
class QuestionResult:
    id: str
    persona: str
    category: str
    mode: str
    scope: str
    message: str
    reasons: list[str] = field(default_factory=list)  # why it failed; empty when it passed
    rendered: list[str] = field(default_factory=list)  # the labels (or ids) that rendered

    @property
    def passed(self) -> bool:
        return not self.reasons

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "persona": self.persona,
            "category": self.category,
            "mode": self.mode,
            "scope": self.scope,
            "passed": self.passed,
            "reasons": self.reasons,
            "rendered": self.rendered,
        }


def tail_of(context: Context) -> str:
    """Every section the context lays out after the stable prefix, as a client would be sent
    it for a first turn."""
    return context.as_dict(full=True)["tail"]


def question_check(question: dict, context: Context, persona: LoadedPersona) -> list[str]:
    """Why `context` fails `question`'s expectations (empty: it passes)."""
    tail = tail_of(context)
    lowered = tail.lower()
    rendered = {i.id: i for i in context.items if i.kind in RENDERED_KINDS}
    by_id = {lab.item_id: lab for lab in persona.labels.values() if lab.item_id}
    reasons: list[str] = []
    for name in question.get("must_include", []):
        label = persona.labels[name]
        if label.item_id not in rendered:
            reasons.append(f"must include {name} ({label.item_id or label.status}): not rendered")
    for name in question.get("must_exclude", []):
        label = persona.labels[name]
        if label.item_id in rendered:
            section = rendered[label.item_id].section
            reasons.append(f"must exclude {name} ({label.status}): rendered in {section}")
        elif label.text.lower() in lowered:
            reasons.append(f"must exclude {name} ({label.status}): its text {label.text!r} is in the tail")
    if question.get("abstain"):
        allowed = {persona.labels[name].item_id for name in question.get("allowed", [])}
        extra = [i for i in rendered if i not in allowed]
        if extra:
            names = ", ".join(by_id[i].label if i in by_id else i for i in extra)
            reasons.append(f"abstain: {len(extra)} item(s) rendered: {names}")
    for text in question.get("exact", []):
        if text not in tail:
            reasons.append(f"exact {text!r}: not in the tail")
    return reasons


def _rendered_names(context: Context, persona: LoadedPersona) -> list[str]:
    by_id = {lab.item_id: lab.label for lab in persona.labels.values() if lab.item_id}
    return [by_id.get(i.id, i.id) for i in context.items if i.kind in RENDERED_KINDS]


@dataclass
class Report:
    results: list[QuestionResult]
    app: str = ""
    data: str = ""

    def counts(self) -> dict:
        rows = {}
        for category in (*CATEGORIES, "overall"):
            chosen = [r for r in self.results if category == "overall" or r.category == category]
            passed = sum(r.passed for r in chosen)
            rows[category] = {
                "questions": len(chosen),
                "passed": passed,
                "rate": round(passed / len(chosen), 3) if chosen else None,
            }
        return rows

    def as_dict(self) -> dict:
        return {
            "app": self.app,
            "data": self.data,
            "counts": self.counts(),
            "questions": [r.as_dict() for r in self.results],
        }


def measure(data: dict, *, actor: Actor | None = None, app_name: str = "") -> Report:
    """Load every persona of `data` into a new App and ask every question; ValueError when the
    set is malformed (`set_errors`)."""
    errors = set_errors(data)
    if errors:
        raise ValueError("the labelled set is malformed:\n" + "\n".join(errors))
    from memoryweb.celery import app as celery_app

    actor = actor or Actor.system("applicability-eval")
    app = app_create(
        name=app_name or f"applicability-eval-{timezone.now():%Y%m%d-%H%M%S-%f}",
        config=eval_config(),
        actor=actor,
    )
    config = get_config(app)
    # the tasks a write starts (note links) run as they would in a live system, here and now
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        personas = {p["id"]: persona_load(p, app=app, actor=actor, config=config) for p in data["personas"]}
    finally:
        celery_app.conf.task_always_eager = eager
    results = []
    for question in data["questions"]:
        persona = personas[question["persona"]]
        spec = question["conversation"]
        conversation, _ = conversation_get_or_create(
            subject=persona.subject,
            external_id=f"question:{question['id']}",
            mode=spec.get("mode", ""),
            scope=spec.get("scope", ""),
            actor=actor,
        )
        context = context_build(
            subject=persona.subject,
            message=question["message"],
            config=config,
            conversation=conversation,
            record=False,
        )
        results.append(
            QuestionResult(
                id=question["id"],
                persona=persona.id,
                category=question["category"],
                mode=context.mode,
                scope=spec.get("scope", ""),
                message=question["message"],
                reasons=question_check(question, context, persona),
                rendered=_rendered_names(context, persona),
            )
        )
    return Report(results, app=app.name)


def format_table(report: Report, title: str) -> str:
    lines = [title, f"{'category':<16} {'questions':>9} {'passed':>7} {'rate':>6}"]
    for category, row in report.counts().items():
        rate = f"{row['rate']:.0%}" if row["rate"] is not None else "—"
        lines.append(f"{category:<16} {row['questions']:>9} {row['passed']:>7} {rate:>6}")
    return "\n".join(lines) + "\n"


def format_failures(report: Report) -> str:
    lines = []
    for result in report.results:
        if result.passed:
            continue
        where = f"{result.mode}" + (f" · {result.scope}" if result.scope else "")
        lines.append(f"FAIL {result.id} [{result.category}] ({where}) {result.message}")
        lines += [f"  - {reason}" for reason in result.reasons]
        lines.append(f"  rendered: {', '.join(result.rendered) or 'nothing'}")
    return "\n".join(lines) + ("\n" if lines else "")
