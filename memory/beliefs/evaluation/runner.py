"""Running the cases: each in its own subject inside a rolled-back transaction, through the
revision engine (belief_revise), scored and checked for history."""

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass

from django.db import transaction
from django.utils import timezone

from memory.beliefs.evaluation.cases import KINDS, NONE, parse_time, set_errors
from memory.beliefs.evaluation.history import history_problems, history_snapshot
from memory.beliefs.evaluation.scoring import scores
from memory.models import BeliefRevision, Note, ProfileFact

# a revision engine: (subject, claim, message, actor, config) → the revisions it recorded
Reviser = Callable[..., list]


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


def _turn(subject, external_id: str, side: dict, *, text: str, actor, config):
    """A user message saying `text` at `side["at"]`, in a conversation of the side's mode and
    scope, with its Evidence unit (the citation a revision rests on)."""
    from memory.services.conversations import conversation_get_or_create, message_add
    from memory.services.evidence import evidence_record

    conversation, _ = conversation_get_or_create(
        subject=subject, external_id=external_id, mode=side["mode"], scope=side["scope"], actor=actor
    )
    message, _ = message_add(
        conversation=conversation, role="user", text=text, occurred_at=parse_time(side["at"]), actor=actor
    )
    evidence_record(message=message, category="", actor=actor, config=config)
    return message


def case_run(
    case: dict, *, app, actor, config, reviser: Reviser, claim_class=None, keep: bool = False
) -> CaseResult:
    """Run one case in its own subject inside a transaction rolled back afterwards (`keep`:
    committed instead, to look at it in the dashboard)."""
    from memory.services import subject_get_or_create
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
        said = _turn(subject, f"{case['id']}:belief", belief, text=belief["said"], actor=actor, config=config)
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
                conversation=said.conversation,
                source_message=said,
                origin="reflection",
                actor=actor,
                config=config,
            )
        result.belief_id = stored.pk
        heard = _turn(
            subject, f"{case['id']}:evidence", evidence, text=evidence["text"], actor=actor, config=config
        )
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
