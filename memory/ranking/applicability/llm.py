"""The LLM judge (`llm.applicability`): one batched call per build, bounded by
`applicability.timeoutMs` on a worker thread; what it misses or garbles keeps the heuristic's."""

import logging
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from memory.config import MemoryConfig
from memory.modes import Mode
from memory.ranking.applicability.candidate import Candidate, when
from memoryweb.counters import counter_add
from memoryweb.llm import client_for, prompt_schema

logger = logging.getLogger(__name__)
_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="applicability")

SUB_SCORES = ("task_fit", "mode_fit", "temporal", "epistemic", "risk")


def _llm_judge(message: str, mode: Mode, candidates: list[Candidate], config: MemoryConfig) -> dict | None:
    client = client_for("applicability", config)
    if client is None:
        return None
    lines = "\n".join(
        f"- id {c.id} ({c.kind}, {when(c.obj):%Y-%m-%d}): {' '.join(c.text.split())[:300]}"
        for c in candidates
    )
    knobs = ", ".join(f"{k} {v:g}" for k, v in sorted(mode.applicability.items()))
    return client.complete_json(
        component="applicability",
        prompt="applicability",
        variables={
            "message": message,
            "mode": f"{mode.name}: {mode.description} (knobs: {knobs})",
            "candidates": lines,
        },
        schema=prompt_schema("applicability"),
    )


def _parsed(answer: dict | None) -> dict[str, dict[str, float]]:
    """The usable per-item sub-scores of the judge's answer, by item id."""
    judged: dict[str, dict[str, float]] = {}
    for entry in (answer or {}).get("items", []):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        values = {name: entry.get(name) for name in SUB_SCORES}
        if all(
            isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 1 for v in values.values()
        ):
            judged[entry["id"]] = {name: float(v) for name, v in values.items()}  # type: ignore[arg-type]
    return judged


def llm_scores(message: str, mode: Mode, candidates: list[Candidate], config: MemoryConfig) -> dict:
    """The LLM judge's sub-scores by item id ({} when it is off, slow or unusable)."""
    if config["llm.applicability"] == "none" or not candidates:
        return {}
    future = _pool.submit(_llm_judge, message, mode, candidates, config)
    try:
        answer = future.result(timeout=config["applicability.timeoutMs"] / 1000)
    except FutureTimeout:
        counter_add("llm.fallback.applicability.timeout")
        logger.warning("applicability judge timed out; the heuristic judges this build")
        return {}
    except Exception:  # the hot read never fails because of the judge
        logger.exception("applicability judge failed; the heuristic judges this build")
        counter_add("llm.fallback.applicability.error")
        return {}
    judged = _parsed(answer)
    missed = sum(1 for c in candidates if c.id not in judged)
    if answer is not None and missed:
        counter_add("llm.fallback.applicability.item", missed)
        logger.warning("applicability judge left %d of %d items unjudged", missed, len(candidates))
    return judged
