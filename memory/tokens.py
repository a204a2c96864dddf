"""The token estimator used for every cap: ceil(characters / 4).

Four characters a token is the usual rule of thumb for English with BPE tokenizers (OpenAI and
Anthropic both document it). It is deliberately simple and the same everywhere, so a section's
cap means the same thing in the API, the dashboard and the benchmarks; for English prose it
overestimates slightly, which keeps the context under the caps a real tokenizer would measure.
"""

import math


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4) if text else 0


def truncate_to_tokens(text: str, tokens: int) -> str:
    """Cut `text` to at most `tokens` (by the same estimate), on a word boundary, with an ellipsis."""
    if estimate_tokens(text) <= tokens:
        return text
    budget = max(tokens * 4 - 1, 0)
    cut = text[:budget]
    if " " in cut[budget // 2 :]:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip() + "…"
