"""The labelled set itself: reading it, what each labelled item becomes once loaded
(`label_statuses`), and everything that makes a set unmeasurable (`set_errors`)."""

import json
from collections import Counter
from pathlib import Path

from memory.models import Policy
from memory.modes import mode_get
from memoryweb.errors import InvalidInput

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "applicability" / "labelled.json"
CATEGORIES = ("mode_boundary", "privacy_ceiling", "consent", "supersession", "abstention", "exact_recall")
DECISIONS = ("approved", "rejected")

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


def persona_items(persona: dict) -> list[tuple[str, dict]]:
    """Every labelled item of `persona` as (kind, item): its facts, notes and turns (a turn is
    a message of one of its conversations, kept as an evidence unit)."""
    return (
        [("fact", f) for f in persona.get("facts", [])]
        + [("note", n) for n in persona.get("notes", [])]
        + [("evidence", t) for t in persona.get("turns", [])]
    )


def label_statuses(persona: dict) -> dict[str, str]:
    """What each labelled item of `persona` is once loaded, from the set alone: stored;
    superseded (a later stored fact of the same key, mode and scope); pending, denied or
    rejected at the consent gate; revoked (stored, then its category denied by
    `consent_after`)."""
    policies = persona.get("consent", {})
    after = persona.get("consent_after", {})
    statuses: dict[str, str] = {}
    for _, item in persona_items(persona):
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
    for kind, item in persona_items(persona):
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
        labels = [item.get("label") for _, item in persona_items(persona)]
        errors += [f"persona {pid}: label {lab!r} used twice" for lab, n in Counter(labels).items() if n > 1]
        for policy_map in ("consent", "consent_after"):
            for category, policy in persona.get(policy_map, {}).items():
                if policy not in Policy.values:
                    errors.append(f"persona {pid}: {policy_map}.{category}: unknown policy {policy!r}")
        for kind, item in persona_items(persona):
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
            if kind == "evidence" and (not item.get("conversation") or item.get("mode")):
                errors.append(f"{where}: a turn belongs to a conversation and takes no mode")
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
