"""Distilling one cluster of notes into a lesson and, when the notes describe steps, a procedure.

`distill(notes, tag=..., config=...)` asks the LLM configured for `consolidation` when there is
one and falls back to the heuristic (consolidation/distill/lesson.py and procedure.py) when
there is none or its answer is unusable. Nothing here writes to the database except the LLM
client's counters.
"""

from dataclasses import dataclass, field, replace
from datetime import datetime

from consolidation.distill.lesson import lesson_text, topic_phrase
from consolidation.distill.procedure import MAX_STEPS, describes_steps, merge_steps, note_steps
from memory.config import MemoryConfig
from memoryweb.llm import client_for

HEURISTIC = "heuristic"


@dataclass(frozen=True)
class SourceNote:
    id: int
    content: str
    tags: list[str]
    when: datetime  # occurred_at, else created_at


@dataclass(frozen=True)
class ProcedureDraft:
    title: str
    steps: list[str]


@dataclass(frozen=True)
class Distillation:
    """What a cluster yields. `lesson` None means the distiller found nothing general to say
    (the cluster is declined and its notes stay as they are)."""

    lesson: str | None
    procedure: ProcedureDraft | None
    source_ids: list[int]  # the notes it rests on: these are archived into the lesson
    distiller: str
    fallback: bool = field(default=False)  # the LLM was asked but the heuristic answered

    @property
    def declined(self) -> bool:
        return self.lesson is None


def procedure_heuristic(notes: list[SourceNote], tag: str) -> ProcedureDraft | None:
    """A procedure from the notes that describe steps, or None when none does."""
    per_note = []
    for note in notes:
        steps, ordered = note_steps(note.content)
        if describes_steps(steps, ordered):
            per_note.append((note.id, steps))
    steps = merge_steps(per_note)[:MAX_STEPS]
    if len(steps) < 2:
        return None
    topic = topic_phrase(tag)
    title = f"{topic[:1].upper()}{topic[1:]}: steps that worked" if topic else "Steps that worked"
    return ProcedureDraft(title=title, steps=steps)


def distill_heuristic(notes: list[SourceNote], tag: str) -> Distillation:
    notes = sorted(notes, key=lambda n: (n.when, n.id))
    procedure = procedure_heuristic(notes, tag)
    lesson = lesson_text(notes, tag, procedure.steps if procedure else None)
    ids = [note.id for note in notes] if lesson is not None else []
    return Distillation(lesson=lesson, procedure=procedure, source_ids=ids, distiller=HEURISTIC)


def distill(notes: list[SourceNote], *, tag: str, config: MemoryConfig) -> Distillation:
    """The lesson and procedure for a cluster: from the LLM for `consolidation` when one is
    configured and answers usefully, else from the heuristic."""
    client = client_for("consolidation", config)
    if client is not None:
        # imported here: a cycle, distill/llm.py takes the dataclasses from this module
        from consolidation.distill.llm import distill_llm

        result = distill_llm(client, notes, tag=tag)
        if result is not None:
            return result
        return replace(distill_heuristic(notes, tag), fallback=True)
    return distill_heuristic(notes, tag)
