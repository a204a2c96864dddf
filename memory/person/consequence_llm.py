"""The LLM path of consequence chains (`llm.consequences`): one call per candidate report,
shown the advice turn and the person's message; its answer is checked field by field, and an
unusable one (the client counts why) leaves the heuristic's chain (memory/person/consequences.py)."""

from dataclasses import dataclass

from memory.config import MemoryConfig
from memoryweb.counters import counter_add
from memoryweb.llm import client_for, prompt_schema

from .consequences import MAX_ACTION_CHARS, MAX_OUTCOME_CHARS, MAX_TENDENCY_CHARS, _clean

MAX_PROMPT_CHARS = 4000  # of each turn: the advice and the report


@dataclass(frozen=True)
class Judged:
    report: bool
    outcome: str = ""
    action: str = ""
    outcome_text: str = ""
    tendency: str = ""
    confidence: float = 0.0


def _usable(answer: dict) -> Judged | None:
    if not isinstance(answer.get("report"), bool):
        return None
    if not answer["report"]:
        return Judged(report=False)
    confidence = answer.get("confidence")
    action, outcome_text, tendency = (answer.get(name) for name in ("action", "outcome_text", "tendency"))
    if (
        answer.get("outcome") not in ("success", "failure")
        or not isinstance(action, str)
        or not isinstance(outcome_text, str)
        or not isinstance(tendency, str)
        or not (
            isinstance(confidence, int | float) and not isinstance(confidence, bool) and 0 <= confidence <= 1
        )
    ):
        return None
    if not action.strip() or not outcome_text.strip():
        return None
    return Judged(
        report=True,
        outcome=answer["outcome"],
        action=_clean(action, MAX_ACTION_CHARS),
        outcome_text=_clean(outcome_text, MAX_OUTCOME_CHARS),
        tendency=_clean(tendency, MAX_TENDENCY_CHARS),
        confidence=float(confidence),
    )


def llm_chain(*, advice: str, message: str, config: MemoryConfig) -> Judged | None:
    """The model's chain for the report `message` of `advice`; None when `llm.consequences` is
    "none", its client cannot run, or its answer is unusable (then the heuristic decides)."""
    if config["llm.consequences"] == "none":
        return None
    client = client_for("consequences", config)
    if client is None:
        return None
    answer = client.complete_json(
        component="consequences",
        prompt="consequences",
        variables={"advice": advice[:MAX_PROMPT_CHARS], "message": message[:MAX_PROMPT_CHARS]},
        schema=prompt_schema("consequences"),
    )
    if answer is None:
        return None
    judged = _usable(answer)
    if judged is None:
        counter_add("llm.fallback.consequences.invalid_chain")
    return judged
