"""Phase 2: a scope's extractions → MEMORY.md, memory_summary.md and skills.

TO BE WRITTEN (helper "compose"): the heuristic path and the LLM path."""

from chat.summaries.blocks import Composition, Skill


def documents_compose(*, subject, scope, extractions, config) -> Composition:
    raise NotImplementedError


def skill_markdown(skill: Skill) -> str:
    raise NotImplementedError
