"""Whether conflicting statements become the right revision (`manage.py revision_eval`; the set:
tests/data/revisions/{dev,test}.json, described in docs/revision-set.md).

Each case is one belief a person holds and one new piece of evidence that bears on it, with
the revision a careful annotator expects (one of the eight `RevisionAction`s, written from their
meanings in memory/beliefs/__init__.py, never from what the engine does) and why:

    {"id", "split",
     "belief":   {"kind": "fact"|"note", "key", "value", "content", "mode", "scope", "said", "at"},
     "evidence": {"text", "key", "value", "content", "mode", "scope", "at"},
     "expected": ACTION, "why"}

A belief's `mode`/`scope` are those of the conversation it was learned in and `said` the
message it was learned from; the evidence's are those of the conversation it is said in and
`text` the message itself; `key`/`value` (a fact) or `content` (a note) are what the reflection
extractor would take from the message (an empty value: the fact ends).

Each case runs in its own subject inside a transaction that is rolled back afterwards, so
nothing stays and no case sees another's memory:
1. a conversation of the belief's mode and scope, the `said` message at the belief's time, and
   the belief stored from it the way reflection stores one (a fact unqualified, `fact_set`; a
   note through `note_store`, which takes the conversation's scope);
2. a conversation of the evidence's mode and scope and the evidence `text` as a message there
   at its time;
3. the revision engine: `belief_revise(subject, claim, message, actor, config)` of
   memory/services/beliefs.py with the evidence's claim (memory.beliefs.detect.Claim).

The action taken is the first BeliefRevision recorded on the case's belief ("NONE" when there
is none: the evidence was stored plainly, or detection missed the conflict). History is intact
when every fact row, note, note version and evidence unit that existed before the evidence
still exists, a fact row's key, value, qualifiers and start are as they were and a note
version's content is unchanged — versions are only ever added. Reported: per-action precision,
recall and F1, accuracy, the confusion matrix and the cases whose history broke.
"""

import importlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import datetime
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from memory.models import BeliefRevision, Evidence, Note, NoteVersion, ProfileFact, RevisionAction

DATA_DIR = Path(__file__).resolve().parents[2] / "tests" / "data" / "revisions"
SPLITS = ("dev", "test")
ACTIONS: tuple[str, ...] = tuple(RevisionAction.values)
NONE = "NONE"  # no revision on the belief
LABELS = (*ACTIONS, NONE)
KINDS = ("fact", "note")
CASE_KEYS = ("id", "split", "belief", "evidence", "expected", "why")
BELIEF_KEYS = ("kind", "key", "value", "content", "mode", "scope", "said", "at")
EVIDENCE_KEYS = ("text", "key", "value", "content", "mode", "scope", "at")

# a revision engine: (subject, claim, message, actor, config) → the revisions it recorded
Reviser = Callable[..., list]


# --- the set -------------------------------------------------------------------------------


def split_path(split: str, data_dir: Path | str = DATA_DIR) -> Path:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}")
    return Path(data_dir) / f"{split}.json"


def load_split(split: str, data_dir: Path | str = DATA_DIR) -> list[dict]:
    """The cases of one split file (a document {"description", "version", "split", "cases"})."""
    document = json.loads(split_path(split, data_dir).read_text(encoding="utf-8"))
    cases = document.get("cases") if isinstance(document, dict) else None
    if not isinstance(cases, list):
        raise ValueError(f"{split}.json: no list of cases")
    return cases


def load_cases(split: str = "all", data_dir: Path | str = DATA_DIR) -> list[dict]:
    """The cases of `split` ("dev", "test" or "all": dev then test)."""
    if split == "all":
        return [case for name in SPLITS for case in load_split(name, data_dir)]
    return load_split(split, data_dir)


def _time(value) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def case_errors(case) -> list[str]:
    """Everything that makes `case` unmeasurable, each naming the field; [] when it is sound."""
    from memory.modes import mode_names

    if not isinstance(case, dict):
        return ["a case must be an object"]
    name = case.get("id") if isinstance(case.get("id"), str) and case.get("id") else "?"
    errors = []

    def bad(where: str, problem: str) -> None:
        errors.append(f"{name}: {where} {problem}")

    if set(case) != set(CASE_KEYS):
        bad("keys", f"must be exactly {', '.join(CASE_KEYS)} (got {', '.join(sorted(case))})")
    if name == "?":
        bad("id", "must be a non-empty string")
    if case.get("split") not in SPLITS:
        bad("split", f"must be one of {', '.join(SPLITS)}")
    if case.get("expected") not in ACTIONS:
        bad("expected", f"must be one of {', '.join(ACTIONS)}")
    if not isinstance(case.get("why"), str) or not case.get("why", "").strip():
        bad("why", "must say why")
    modes = set(mode_names())
    for part, keys in (("belief", BELIEF_KEYS), ("evidence", EVIDENCE_KEYS)):
        body = case.get(part)
        if not isinstance(body, dict):
            bad(part, "must be an object")
            continue
        if set(body) != set(keys):
            bad(part, f"keys must be exactly {', '.join(keys)} (got {', '.join(sorted(body))})")
        for key in keys:
            if key in body and not isinstance(body[key], str):
                bad(f"{part}.{key}", "must be a string")
        if body.get("mode") and body["mode"] not in modes:
            bad(f"{part}.mode", f"{body['mode']!r} is not a known mode")
        if _time(body.get("at")) is None:
            bad(f"{part}.at", "must be an ISO time with its zone")
    belief, evidence = case.get("belief"), case.get("evidence")
    if not isinstance(belief, dict) or not isinstance(evidence, dict):
        return errors
    kind = belief.get("kind")
    if kind not in KINDS:
        bad("belief.kind", f"must be one of {', '.join(KINDS)}")
    elif kind == "fact":
        for part, body in (("belief", belief), ("evidence", evidence)):
            if not str(body.get("key") or "").strip():
                bad(f"{part}.key", "a fact needs its key")
            if body.get("content"):
                bad(f"{part}.content", "a fact has no content")
        if not str(belief.get("value") or "").strip():
            bad("belief.value", "a fact needs its value")
    else:
        for part, body in (("belief", belief), ("evidence", evidence)):
            if not str(body.get("content") or "").strip():
                bad(f"{part}.content", "a note needs its content")
            if body.get("key") or body.get("value"):
                bad(f"{part}.key", "a note has no key or value")
    if not str(belief.get("said") or "").strip():
        bad("belief.said", "must be the message the belief was learned from")
    if not str(evidence.get("text") or "").strip():
        bad("evidence.text", "must be the message of the new evidence")
    said, heard = _time(belief.get("at")), _time(evidence.get("at"))
    if said and heard and heard < said:
        bad("evidence.at", "must not be before the belief's time")
    return errors


def set_errors(cases: list) -> list[str]:
    """Every case's errors, plus ids that repeat."""
    errors = [error for case in cases for error in case_errors(case)]
    repeated = Counter(c.get("id") for c in cases if isinstance(c, dict))
    errors += [f"{cid}: id repeats" for cid, n in repeated.items() if n > 1]
    return errors


# --- counting ------------------------------------------------------------------------------


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 3) if den else None


def scores(pairs: list[tuple[str, str]]) -> dict:
    """Per-label precision, recall, F1 and support from (expected, got) pairs, the accuracy, the
    macro averages over the actions that occur, and the confusion (expected → got → n).
    A label never predicted has no precision (None), never expected no recall."""
    confusion: dict[str, Counter] = {}
    for expected, got in pairs:
        confusion.setdefault(expected, Counter())[got] += 1
    per: dict[str, dict] = {}
    for label in LABELS:
        tp = sum(1 for e, g in pairs if e == label and g == label)
        predicted = sum(1 for _, g in pairs if g == label)
        support = sum(1 for e, _ in pairs if e == label)
        if not predicted and not support:
            continue
        precision, recall = _ratio(tp, predicted), _ratio(tp, support)
        f1 = (
            round(2 * precision * recall / (precision + recall), 3)
            if precision is not None and recall is not None and (precision + recall) > 0
            else (0.0 if precision is not None and recall is not None else None)
        )
        per[label] = {
            "tp": tp,
            "predicted": predicted,
            "support": support,
            "precision": precision,
            "recall": recall,
            "f1": f1,
        }
    expected_actions = [a for a in ACTIONS if a in per and per[a]["support"]]

    def macro(metric: str) -> float | None:
        values = [per[a][metric] or 0.0 for a in expected_actions]
        return round(sum(values) / len(values), 3) if values else None

    correct = sum(1 for e, g in pairs if e == g)
    return {
        "cases": len(pairs),
        "correct": correct,
        "accuracy": _ratio(correct, len(pairs)),
        "per_action": per,
        "macro": {"precision": macro("precision"), "recall": macro("recall"), "f1": macro("f1")},
        "confusion": {e: dict(sorted(row.items())) for e, row in sorted(confusion.items())},
    }


# --- history -------------------------------------------------------------------------------


def history_snapshot(subject) -> dict:
    """What must survive any revision of the subject's memory: every fact row (its key, value,
    qualifiers and start), every note, every note version (its content) and evidence unit."""
    return {
        "facts": {
            pk: (key, value, mode, scope, start.isoformat() if start else None)
            for pk, key, value, mode, scope, start in ProfileFact.objects.filter(subject=subject).values_list(
                "pk", "key", "value", "mode", "scope", "valid_from"
            )
        },
        "notes": set(Note.objects.filter(subject=subject).values_list("pk", flat=True)),
        "note_versions": {
            pk: (note_id, version, content)
            for pk, note_id, version, content in NoteVersion.objects.filter(
                note__subject=subject
            ).values_list("pk", "note_id", "version", "content")
        },
        "evidence": set(Evidence.objects.filter(subject=subject).values_list("pk", flat=True)),
    }


def history_problems(before: dict, after: dict) -> list[str]:
    """How `after` lost or rewrote what `before` held; [] when history only grew."""
    problems = []
    for pk, row in before["facts"].items():
        now = after["facts"].get(pk)
        if now is None:
            problems.append(f"fact row f:{pk} ({row[0]}={row[1]!r}) was deleted")
        elif now != row:
            problems.append(f"fact row f:{pk} was rewritten in place: {row} → {now}")
    for pk in sorted(before["notes"] - after["notes"]):
        problems.append(f"note n:{pk} was deleted")
    for pk, row in before["note_versions"].items():
        now = after["note_versions"].get(pk)
        if now is None:
            problems.append(f"version {row[1]} of note n:{row[0]} was deleted")
        elif now != row:
            problems.append(f"version {row[1]} of note n:{row[0]} was rewritten")
    for pk in sorted(before["evidence"] - after["evidence"]):
        problems.append(f"evidence unit e:{pk} was deleted")
    return problems


# --- running -------------------------------------------------------------------------------


@dataclass
class CaseResult:
    id: str
    split: str
    kind: str
    expected: str
    got: str
    why: str = ""
    belief_id: int | None = None
    history: list[str] = field(default_factory=list)  # what broke; [] = intact
    revisions: list[dict] = field(default_factory=list)  # every revision the case recorded
    error: str = ""  # the engine raised

    @property
    def correct(self) -> bool:
        return self.expected == self.got

    @property
    def history_intact(self) -> bool:
        return not self.history

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "split": self.split,
            "kind": self.kind,
            "expected": self.expected,
            "got": self.got,
            "correct": self.correct,
            "history_intact": self.history_intact,
            "history": self.history,
            "revisions": self.revisions,
            "error": self.error,
        }


@dataclass
class Report:
    results: list[CaseResult]
    split: str = "all"
    decider: str = "rules"

    def scores(self) -> dict:
        return scores([(r.expected, r.got) for r in self.results])

    def history_broken(self) -> list[CaseResult]:
        return [r for r in self.results if not r.history_intact]

    def by_kind(self) -> dict:
        return {
            kind: scores([(r.expected, r.got) for r in self.results if r.kind == kind])["accuracy"]
            for kind in KINDS
            if any(r.kind == kind for r in self.results)
        }

    def as_dict(self) -> dict:
        return {
            "split": self.split,
            "decider": self.decider,
            **self.scores(),
            "accuracy_by_kind": self.by_kind(),
            "history_intact": len(self.results) - len(self.history_broken()),
            "errors": sum(1 for r in self.results if r.error),
            "results": [r.as_dict() for r in self.results],
        }


def default_reviser() -> Reviser:
    """The revision engine of memory/services/beliefs.py, looked up when it is asked for (so
    this module loads, and its tests run, on a branch without it)."""
    return _engine_part("memory.services.beliefs", "belief_revise")


def default_claim_class():
    """memory.beliefs.detect.Claim, looked up when it is asked for."""
    return _engine_part("memory.beliefs.detect", "Claim")


def _engine_part(module: str, name: str):
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise LookupError(f"{module}.{name} is not available") from exc


def claim_of(case: dict, message, claim_class=None):
    """The evidence's claim, as the reflection extractor would hand it over: a fact's key and
    value or a note's content, the message's words, where and when it was said. The claim
    states no qualifier of its own (mode/scope ""): where it was said is `said_mode` /
    `said_scope`. Built from whichever of these fields `claim_class` has (a dataclass), or as a
    dict when `claim_class` is dict."""
    evidence = case["evidence"]
    values = {
        "kind": case["belief"]["kind"],
        "key": evidence["key"],
        "value": evidence["value"],
        "content": evidence["content"],
        "text": message.text,
        "mode": "",
        "scope": "",
        "said_mode": message.conversation.mode,
        "said_scope": message.conversation.scope,
        "at": message.occurred_at,
    }
    claim_class = claim_class or default_claim_class()
    if claim_class is dict:
        return values
    names = {f.name for f in fields(claim_class)} if is_dataclass(claim_class) else set(values)
    return claim_class(**{k: v for k, v in values.items() if k in names})


def _rollback() -> None:
    transaction.set_rollback(True)


def case_run(
    case: dict, *, app, actor, config, reviser: Reviser, claim_class=None, keep: bool = False
) -> CaseResult:
    """Run one case in its own subject inside a transaction rolled back afterwards (`keep`:
    committed instead, to look at it in the dashboard)."""
    from memory.services import subject_get_or_create
    from memory.services.conversations import conversation_get_or_create, message_add
    from memory.services.evidence import evidence_record
    from memory.services.facts import fact_set
    from memory.services.notes import note_store

    belief, evidence = case["belief"], case["evidence"]
    result = CaseResult(
        id=case["id"],
        split=case["split"],
        kind=belief["kind"],
        expected=case["expected"],
        got=NONE,
        why=case.get("why", ""),
    )
    with transaction.atomic():
        subject = subject_get_or_create(app=app, external_id=f"revision-eval:{case['id']}")
        said_in, _ = conversation_get_or_create(
            subject=subject,
            external_id=f"{case['id']}:belief",
            mode=belief["mode"],
            scope=belief["scope"],
            actor=actor,
        )
        said, _ = message_add(
            conversation=said_in,
            role="user",
            text=belief["said"],
            occurred_at=_time(belief["at"]),
            actor=actor,
        )
        evidence_record(message=said, category="", actor=actor, config=config)
        stored: ProfileFact | Note
        if belief["kind"] == "fact":
            stored, _ = fact_set(
                subject=subject,
                key=belief["key"],
                value=belief["value"],
                origin="reflection",
                source_message=said,
                actor=actor,
            )
        else:
            stored, _ = note_store(
                subject=subject,
                content=belief["content"],
                conversation=said_in,
                source_message=said,
                origin="reflection",
                actor=actor,
                config=config,
            )
        result.belief_id = stored.pk
        heard_in, _ = conversation_get_or_create(
            subject=subject,
            external_id=f"{case['id']}:evidence",
            mode=evidence["mode"],
            scope=evidence["scope"],
            actor=actor,
        )
        heard, _ = message_add(
            conversation=heard_in,
            role="user",
            text=evidence["text"],
            occurred_at=_time(evidence["at"]),
            actor=actor,
        )
        evidence_record(message=heard, category="", actor=actor, config=config)
        before = history_snapshot(subject)
        try:
            with transaction.atomic():
                reviser(
                    subject=subject,
                    claim=claim_of(case, heard, claim_class),
                    message=heard,
                    actor=actor,
                    config=config,
                )
        except Exception as exc:  # noqa: BLE001 — a failing case is reported, the run goes on
            result.error = f"{type(exc).__name__}: {exc}"
        recorded = BeliefRevision.objects.filter(subject=subject).order_by("pk")
        result.revisions = [
            {
                "action": r.action,
                "belief": f"{r.belief_kind[0]}:{r.belief_id}",
                "result_ids": list(r.result_ids),
                "decided_by": r.decided_by,
                "reason": r.reason,
            }
            for r in recorded
        ]
        on_belief = [r for r in recorded if r.belief_kind == belief["kind"] and r.belief_id == stored.pk]
        if on_belief:
            result.got = on_belief[0].action
        result.history = history_problems(before, history_snapshot(subject))
        if not keep:
            _rollback()
    return result


def eval_config(llm: bool = False) -> dict:
    """The eval App's config: every model component off (the rules) unless `llm`, where the
    deployment's own configuration decides."""
    if llm:
        return {}
    from memoryweb.llm.spec import COMPONENTS

    return {"memory": {"llm": {"default": "none", **{c: "none" for c in COMPONENTS}}}}


def measure(
    cases: list[dict],
    *,
    split: str = "all",
    reviser: Reviser | None = None,
    claim_class=None,
    llm: bool = False,
    keep: bool = False,
    actor=None,
) -> Report:
    """Run every case; ValueError when the set is malformed (`set_errors`). Nothing is written
    unless `keep` (then the App `revision-eval-<time>` and its subjects stay)."""
    from memory.config import get_config
    from memory.services import Actor
    from memory.services.apps import app_create

    errors = set_errors(cases)
    if errors:
        raise ValueError("the revision set is malformed:\n" + "\n".join(errors))
    reviser = reviser or default_reviser()
    actor = actor or Actor.system("revision-eval")
    results = []
    with transaction.atomic():
        app = app_create(
            name=f"revision-eval-{timezone.now():%Y%m%d-%H%M%S-%f}", config=eval_config(llm), actor=actor
        )
        config = get_config(app)
        for case in cases:
            results.append(
                case_run(
                    case,
                    app=app,
                    actor=actor,
                    config=config,
                    reviser=reviser,
                    claim_class=claim_class,
                    keep=keep,
                )
            )
        if not keep:
            _rollback()
    return Report(results, split=split, decider="llm" if llm else "rules")


# --- output --------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return f"{value:.0%}" if value is not None else "—"


def format_table(report: Report, title: str) -> str:
    data = report.scores()
    lines = [
        title,
        f"{'action':<16} {'support':>7} {'predicted':>9} {'precision':>9} {'recall':>7} {'F1':>6}",
    ]
    for label in LABELS:
        row = data["per_action"].get(label)
        if row is None:
            continue
        lines.append(
            f"{label:<16} {row['support']:>7} {row['predicted']:>9} {_pct(row['precision']):>9} "
            f"{_pct(row['recall']):>7} {_pct(row['f1']):>6}"
        )
    macro = data["macro"]
    lines.append(
        f"{'macro':<16} {'':>7} {'':>9} {_pct(macro['precision']):>9} {_pct(macro['recall']):>7} {_pct(macro['f1']):>6}"
    )
    lines.append(f"accuracy {_pct(data['accuracy'])} ({data['correct']}/{data['cases']})")
    kinds = ", ".join(f"{kind} {_pct(acc)}" for kind, acc in report.by_kind().items())
    if kinds:
        lines.append(f"by kind: {kinds}")
    broken = report.history_broken()
    lines.append(f"history intact: {len(report.results) - len(broken)}/{len(report.results)}")
    errors = sum(1 for r in report.results if r.error)
    if errors:
        lines.append(f"engine errors: {errors}")
    lines.append("")
    lines.append("confusion (rows expected, columns taken):")
    present = [label for label in LABELS if label in data["per_action"]]
    short = {
        label: label.replace("SPLIT_BY_", "S_").replace("MARK_EXCEPTION", "EXCEPT")[:9] for label in present
    }
    lines.append(" " * 16 + "".join(f"{short[label]:>10}" for label in present))
    for expected in present:
        row = data["confusion"].get(expected)
        if not row:
            continue
        lines.append(f"{expected:<16}" + "".join(f"{row.get(got, 0) or '.':>10}" for got in present))
    return "\n".join(lines) + "\n"


def format_misses(report: Report) -> str:
    lines = []
    for result in report.results:
        if result.correct and result.history_intact and not result.error:
            continue
        lines.append(f"MISS {result.id} [{result.kind}] expected {result.expected}, took {result.got}")
        if result.why:
            lines.append(f"  why: {result.why}")
        for revision in result.revisions:
            lines.append(
                f"  revision {revision['action']} on {revision['belief']} by {revision['decided_by']}: {revision['reason']}"
            )
        if result.error:
            lines.append(f"  error: {result.error}")
        lines += [f"  history: {problem}" for problem in result.history]
    return "\n".join(lines) + ("\n" if lines else "")
