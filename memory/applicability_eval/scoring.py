"""Asking each question in its mode, checking the context against its expectations, and the
report: pass rate overall and per category, and why each failing question failed."""

from dataclasses import dataclass, field

from django.utils import timezone

from memory.applicability_eval.labelled import CATEGORIES, set_errors
from memory.applicability_eval.loader import LoadedPersona, eval_config, persona_load
from memory.config import get_config
from memory.context import Context, context_build
from memory.services import Actor, app_create
from memory.services.conversations import conversation_get_or_create

RENDERED_KINDS = ("fact", "note", "evidence")


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
