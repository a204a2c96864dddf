"""The LLM distiller: the `consolidation` prompt over a cluster's notes, its answer checked.

The client already turns a failed call, invalid JSON or a schema mismatch into None (logged
and counted). Here the answer is also held to the prompt's own rules: a lesson of 1–3
sentences, a procedure of 2–8 non-empty steps, source ids taken from the cluster. What can be
repaired is (extra sentences or steps are cut, unknown ids dropped); an answer with nothing
usable returns None, counted as `llm.fallback.consolidation.unusable`, and the caller falls
back to the heuristic. Text from the model is scrubbed of secrets like any stored text.
"""

import re

from consolidation.distill import Distillation, ProcedureDraft, SourceNote
from consolidation.distill.procedure import MAX_STEP_CHARS, MAX_STEPS, MIN_STEPS
from consolidation.distill.text import finish, sentences_of
from memory.services.scrub import scrub
from memoryweb.counters import counter_add
from memoryweb.llm import LLMClient, prompt_schema

PROMPT_NOTE_CHARS = 1000
MAX_LESSON_CHARS = 600
LESSON_SENTENCES = 3


def _notes_block(notes: list[SourceNote]) -> str:
    lines = []
    for note in sorted(notes, key=lambda n: (n.when, n.id)):
        text = " ".join(note.content.split())
        if len(text) > PROMPT_NOTE_CHARS:
            text = text[:PROMPT_NOTE_CHARS].rsplit(" ", 1)[0] + " …"
        lines.append(f"[{note.id}] {note.when:%Y-%m-%d}: {text}")
    return "\n".join(lines)


def _lesson(value) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    text = scrub(" ".join(value.split()), where="lesson")
    text = " ".join(sentences_of(text)[:LESSON_SENTENCES])
    if len(text) > MAX_LESSON_CHARS:
        text = text[:MAX_LESSON_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return text or None


def _procedure(value) -> ProcedureDraft | None:
    if not isinstance(value, dict):
        return None
    steps: list[str] = []
    for raw in value.get("steps") or []:
        if not isinstance(raw, str):
            continue
        step = re.sub(r"^\s*(?:\d{1,2}[.)]|[-*•])\s*", "", " ".join(raw.split()))
        step = finish(scrub(step, where="procedure"))[:MAX_STEP_CHARS]
        if step and step not in steps:
            steps.append(step)
    if len(steps) < MIN_STEPS:
        return None
    title = " ".join(str(value.get("title") or "").split())[:200].rstrip(".")
    title = scrub(title, where="procedure") or "Steps that worked"
    return ProcedureDraft(title=title, steps=steps[:MAX_STEPS])


def distill_llm(client: LLMClient, notes: list[SourceNote], *, tag: str) -> Distillation | None:
    """The model's distillation of the cluster, or None to fall back to the heuristic."""
    answer = client.complete_json(
        component="consolidation",
        prompt="consolidation",
        variables={"tag": tag or "(none)", "notes": _notes_block(notes)},
        schema=prompt_schema("consolidation"),
    )
    if answer is None:
        return None
    distiller = str(client.spec)
    lesson = _lesson(answer.get("lesson"))
    procedure = _procedure(answer.get("procedure"))
    if answer.get("lesson") is None and answer.get("procedure") is None:
        return Distillation(lesson=None, procedure=None, source_ids=[], distiller=distiller)
    if lesson is None and procedure is None:
        counter_add("llm.fallback.consolidation.unusable")
        return None
    if lesson is None and procedure is not None:
        lesson = f'Follow the steps in "{procedure.title}".'
    cluster_ids = {note.id for note in notes}
    sources = [i for i in dict.fromkeys(answer.get("source_note_ids") or []) if i in cluster_ids]
    return Distillation(
        lesson=lesson,
        procedure=procedure,
        source_ids=sources or sorted(cluster_ids),
        distiller=distiller,
    )
