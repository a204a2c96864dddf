"""Phase 2: a scope's extractions → MEMORY.md, memory_summary.md and skills.

With a model (`client_for("summaries", config)`: the summaries role, else the default role)
the consolidation prompt gets the raw memory blocks and the synopses, newest first, as many
as fit `memories.consolidationInputTokens`; its answer is checked (two documents that are not
empty, skills with a valid unique name and at least two steps, at most `memories.maxSkills`)
and used with the model's spec as its method. Without a model, or when the answer is unusable,
the heuristic path (chat/summaries/heuristic.py) composes the documents from the blocks alone.

Nothing here writes: the pipeline writes the composition (and redacts it on the way,
memory/services/documents.py).
"""

import json
import logging
from datetime import UTC

from chat.summaries.asking import model_answer
from chat.summaries.blocks import Composition, Skill, slug
from chat.summaries.heuristic import heuristic_compose
from memory.documents import NAME
from memory.tokens import estimate_tokens, truncate_to_tokens
from memoryweb.llm import client_for

logger = logging.getLogger(__name__)

PROMPT = "memories/consolidation"
SYSTEM = "memories/consolidation_system"
MAX_STEPS = 12
MAX_PITFALLS = 8


def documents_compose(*, subject, scope, extractions, config) -> Composition:
    """The composition of `scope` from `extractions` (SessionExtraction rows, newest first):
    the model's when one is configured and answers usefully, else the heuristic one."""
    client = client_for("summaries", config)
    if client is not None and extractions:
        composition = _model_compose(client=client, scope=scope, extractions=extractions, config=config)
        if composition is not None:
            return composition
    return heuristic_compose(scope=scope, extractions=extractions, config=config)


def _heading(extraction) -> str:
    when = extraction.last_message_at
    date = when.astimezone(UTC).date().isoformat() if when else "undated"
    title = " ".join((extraction.title or "").split()) or "untitled"
    return f"{title} — {date} — conversation {extraction.conversation_id}"


def model_inputs(*, extractions, config) -> tuple[str, str, int]:
    """(raw_memories, rollout_summaries, how many extractions they hold): the newest
    extractions whose blocks and synopses fit `memories.consolidationInputTokens`."""
    budget = config["memories.consolidationInputTokens"]
    blocks: list[str] = []
    synopses: list[str] = []
    used = 0
    for extraction in extractions:
        heading = _heading(extraction)
        block = f"## {heading}\n{(extraction.raw_memory or '').strip() or '(nothing recorded)'}"
        synopsis = f"- {heading}: {' '.join((extraction.synopsis or '').split()) or '(no synopsis)'}"
        cost = estimate_tokens(block) + estimate_tokens(synopsis) + 2
        if blocks and used + cost > budget:
            break
        if not blocks and cost > budget:  # the newest alone is too large: send what fits of it
            block = truncate_to_tokens(block, max(budget - estimate_tokens(synopsis) - 2, budget // 2))
        blocks.append(block)
        synopses.append(synopsis)
        used += cost
    return "\n\n".join(blocks), "\n".join(synopses), len(blocks)


def _model_compose(*, client, scope, extractions, config) -> Composition | None:
    raw_memories, rollout_summaries, sent = model_inputs(extractions=extractions, config=config)
    variables = {"raw_memories": raw_memories, "rollout_summaries": rollout_summaries}
    answer, input_tokens = model_answer(
        client,
        prompt=PROMPT,
        variables=variables,
        system=SYSTEM,
        max_tokens=config["memories.consolidationOutputTokens"],
    )
    if answer is None:
        return None
    composition = answer_composition(answer, config=config, method=str(client.spec))
    if composition is None:
        logger.warning(
            "summaries: the consolidation answer of %s was unusable (scope %r)", client.spec, scope
        )
        return None
    composition.input_tokens = input_tokens
    composition.output_tokens = estimate_tokens(json.dumps(answer, ensure_ascii=False))
    logger.info("summaries: composed scope %r from %d of %d extractions", scope, sent, len(extractions))
    return composition


def _text(value) -> str:
    return value.strip() if isinstance(value, str) else ""


def answer_composition(answer: dict, *, config, method: str) -> Composition | None:
    """The model's answer as a Composition, or None when it is unusable (an empty MEMORY.md or
    summary). Skills without a valid name (after `slug`) or with fewer than two steps are
    dropped, repeated names keep the first, at most `memories.maxSkills` are kept."""
    memory_md = _text(answer.get("memory_md"))
    summary_md = _text(answer.get("memory_summary"))
    if not memory_md or not summary_md:
        return None
    skills: list[Skill] = []
    names: set[str] = set()
    for raw in answer.get("skills") or []:
        if len(skills) >= config["memories.maxSkills"]:
            break
        if not isinstance(raw, dict):
            continue
        name = slug(_text(raw.get("name")), limit=64)
        steps = [" ".join(s.split()) for s in raw.get("steps") or [] if isinstance(s, str) and s.strip()]
        if not NAME.match(name) or name in names or len(steps) < 2:
            continue
        pitfalls = [
            " ".join(p.split()) for p in raw.get("pitfalls") or [] if isinstance(p, str) and p.strip()
        ]
        description = " ".join(_text(raw.get("description")).split()) or f"Use for {name.replace('-', ' ')}."
        names.add(name)
        skills.append(
            Skill(
                name=name, description=description, steps=steps[:MAX_STEPS], pitfalls=pitfalls[:MAX_PITFALLS]
            )
        )
    return Composition(
        memory_md=truncate_to_tokens(memory_md, config["memories.memoryMaxTokens"]) + "\n",
        summary_md=truncate_to_tokens(summary_md, config["memories.summaryInjectionTokenLimit"]) + "\n",
        skills=skills,
        method=method,
    )


def skill_markdown(skill: Skill) -> str:
    """The SKILL.md of `skill`: front matter (name, when to use it), numbered steps, pitfalls.
    A pure function of the skill, so an unchanged skill adds no version."""
    description = " ".join(skill.description.split())
    lines = [
        "---",
        f"name: {skill.name}",
        f"description: {json.dumps(description, ensure_ascii=False)}",
        "---",
        "",
        f"# {skill.name}",
        "",
        f"**When to use:** {description}" if description else "**When to use:** (not recorded)",
        "",
        "## Steps",
        "",
    ]
    lines += [f"{n}. {' '.join(step.split())}" for n, step in enumerate(skill.steps, start=1)]
    if skill.pitfalls:
        lines += ["", "## Pitfalls", ""]
        lines += [f"- {' '.join(p.split())}" for p in skill.pitfalls]
    return "\n".join(lines) + "\n"
