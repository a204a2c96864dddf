"""The model's decision (`llm.revision`): one call per conflict, strict JSON (the prompt
memoryweb/llm/prompts/revision.txt and its schema). Any failure — no model configured, an
offline profile, a transport error, an answer that is not the schema's — gives None, counted as
`beliefs.revision.llm_fallback.<why>`, and the rules decide (memory/beliefs/decide.py)."""

from __future__ import annotations

import logging

from memory.beliefs.decide import Decision, revision_claim
from memory.beliefs.detect import Claim, Conflict
from memory.config import MemoryConfig
from memory.models import ProfileFact, RevisionAction
from memoryweb.counters import counter_add
from memoryweb.llm import client_for, prompt_schema

logger = logging.getLogger(__name__)

MAX_REASON_CHARS = 300


def _where(mode: str, scope: str) -> str:
    parts = [f"mode {mode}" if mode else "no mode", f"scope {scope}" if scope else "no scope"]
    return ", ".join(parts)


def _belief_text(conflict: Conflict) -> str:
    belief = conflict.belief
    source = belief.source_message
    learned_mode = belief.mode or (source.conversation.mode if source is not None else "")
    learned_scope = belief.scope or (source.conversation.scope if source is not None else "")
    since = getattr(belief, "valid_from", None) or getattr(belief, "occurred_at", None) or belief.created_at
    if isinstance(belief, ProfileFact):
        what = f"fact {belief.key}: {belief.value}"
    else:
        what = f"note: {' '.join(belief.content.split())[:400]}"
    said = f'\nlearned from: "{" ".join(source.text.split())[:400]}"' if source is not None else ""
    return f"{what}\nlearned in: {_where(learned_mode, learned_scope)}, {since:%Y-%m-%d}{said}"


def _evidence_text(claim: Claim) -> str:
    what = (
        f"claim {claim.key}: {claim.value or '(no value: the fact ends)'}"
        if claim.kind == "fact"
        else (f"note: {' '.join(claim.content.split())[:400]}")
    )
    when = f", {claim.at:%Y-%m-%d}" if claim.at is not None else ""
    words = " ".join(claim.words.split())[:600]
    return f'said: "{words}"\n{what}\nsaid in: {_where(claim.where_mode, claim.where_scope)}{when}'


def llm_decide(conflict: Conflict, claim: Claim, config: MemoryConfig) -> Decision | None:
    """The model's revision for one conflict, or None (counted) so the rules decide."""
    if config["llm.revision"] == "none":
        return None
    client = client_for("revision", config)
    if client is None:
        counter_add("beliefs.revision.llm_fallback.unavailable")
        return None
    try:
        answer = client.complete_json(
            component="revision",
            prompt="revision",
            variables={
                "belief": _belief_text(conflict),
                "evidence": _evidence_text(claim),
                "signals": ", ".join(conflict.signals) or "(none)",
            },
            schema=prompt_schema("revision"),
        )
    except Exception:  # a revision never fails because of the model
        logger.exception("llm.revision failed; the rules decide")
        counter_add("beliefs.revision.llm_fallback.error")
        return None
    if answer is None:
        counter_add("beliefs.revision.llm_fallback.no_answer")
        return None
    action, reason = answer.get("action"), answer.get("reason")
    if action not in RevisionAction.values or not isinstance(reason, str) or not reason.strip():
        counter_add("beliefs.revision.llm_fallback.invalid")
        return None
    counter_add("beliefs.revision.llm_decided")
    return Decision(
        action=action,
        reason=" ".join(reason.split())[:MAX_REASON_CHARS],
        signals=list(conflict.signals),
        decided_by="llm",
        claim=revision_claim(action, conflict, claim),
    )
