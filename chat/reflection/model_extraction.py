"""The LLM path of reflection as an extractor that extraction_eval can score.

`ModelExtractor(client, config)` is called like `heuristics.extract` — one labelled message in,
an `Extraction` out — and runs the same code reflection runs (`chat.reflection.llm`'s
`model_operations`, the shipped prompt and schema, the provider's HTTP client, the defensive
JSON reading), with an empty profile and no related notes, "now" being the message's time. Its
operations are mapped back the way `chat.reflect` would store them: SET → fact, NOTE → note
(kind = first tag), RETRACT → retraction, and an item the model left without a consent
category gets the one `classify_category` gives it, as `chat.reflect._prepare` does.

When the model's answer is unusable (timeout, invalid JSON, truncated, schema mismatch …) the
heuristic extractor answers instead, as in a real reflection, and the fallback is tallied by
the reason the client counted (`llm.fallback.reflection.<reason>`).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from chat.reflection.heuristics import extract
from chat.reflection.llm import model_operations
from chat.reflection.ops import Extraction, FactOp, FactRetraction, NoteOp, Operation
from memory.categories import classify_category
from memoryweb.counters import counter_values

FALLBACK_COUNTERS = "llm.fallback.reflection."


@dataclass
class LabelledTurn:
    """What the prompt reads of a message; stands in for a stored `Message`."""

    text: str
    role: str
    occurred_at: datetime
    pk: int = 0


def extraction_from_operations(ops: list[Operation]) -> Extraction:
    result = Extraction()
    for op in ops:
        category = op.category or classify_category(op.content or f"{op.key} {op.value}")
        if op.op == "SET":
            result.facts.append(
                FactOp(
                    op.key,
                    op.value,
                    pinned=op.pinned,
                    keywords=op.keywords,
                    confidence=op.confidence,
                    category=category,
                )
            )
        elif op.op == "NOTE":
            result.notes.append(
                NoteOp(op.content, tags=op.tags, occurred_at=op.occurred_at, category=category)
            )
        elif op.op == "RETRACT":
            result.retractions.append(FactRetraction(op.key, op.value))
    return result


class ModelExtractor:
    """An extractor backed by a model; keeps the tally of answers, fallbacks and time spent.

    Every message is asked once: scoring the same message again (it is in "all" and in its
    split) reuses the first answer."""

    def __init__(self, client, config, *, on_message=None):
        self.client = client
        self.config = config
        self.on_message = on_message  # called with (text, source, seconds) after each new message
        self.answered = 0
        self.fallbacks: Counter[str] = Counter()
        self.seconds = 0.0
        self._seen: dict[tuple[str, str, datetime], Extraction] = {}

    @property
    def asked(self) -> int:
        return self.answered + sum(self.fallbacks.values())

    def __call__(self, text: str, *, role: str = "user", occurred_at: datetime) -> Extraction:
        key = (text, role, occurred_at)
        if key in self._seen:
            return self._seen[key]
        before = counter_values(FALLBACK_COUNTERS)
        started = time.monotonic()
        ops = model_operations(
            self.client,
            [LabelledTurn(text, role, occurred_at)],
            profile="(empty)",
            notes="(none)",
            note_ids=set(),
            now=occurred_at,
            config=self.config,
            operation_class=Operation,
        )
        spent = time.monotonic() - started
        self.seconds += spent
        if ops is None:
            after = counter_values(FALLBACK_COUNTERS)
            reasons = [
                name.removeprefix(FALLBACK_COUNTERS) for name in after if after[name] > before.get(name, 0)
            ]
            self.fallbacks[reasons[0] if reasons else "unknown"] += 1
            result = extract(text, role=role, occurred_at=occurred_at)
            source = "heuristic"
        else:
            self.answered += 1
            result = extraction_from_operations(ops)
            source = "llm"
        self._seen[key] = result
        if self.on_message:
            self.on_message(text, source, spent)
        return result

    def summary(self) -> dict:
        return {
            "messages": self.asked,
            "answered": self.answered,
            "fallbacks": dict(self.fallbacks),
            "seconds_per_message": round(self.seconds / self.asked, 2) if self.asked else 0.0,
        }
