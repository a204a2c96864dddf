"""Measure the consent gate: how often `categories(message)` finds the sensitive categories a
labelled message has, scored on each message directly (what the evidence index asks) and, for
the extraction set, over the facts and notes the extractor drew from it (what reflection stores).

Two labelled files: tests/data/consent_labelled.json (short chat messages, splits "dev" and
"heldback") and tests/data/extraction_labelled.json (its own splits, see evaluation.py). A split
called held-back or untouched is only scored when it is named: nothing here reads it otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from chat.reflection.evaluation import DEFAULT_DATA as EXTRACTION_DATA
from chat.reflection.heuristics import extract
from memory.categories import (
    CATEGORY_PRIORITY,
    categories,
    classify_category,
    with_source_categories,
)

CONSENT_DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "consent_labelled.json"
CONSENT_DEVELOPMENT = ("dev",)
CONSENT_HELD_BACK = ("heldback",)


@dataclass
class CategoryScore:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


@dataclass
class GateReport:
    """Per-category scores, their micro total, and the gate itself: a sensitive message is
    caught when `classify_category` gives it any category (then the person is asked)."""

    messages: int = 0
    per_category: dict[str, CategoryScore] = field(
        default_factory=lambda: {slug: CategoryScore() for slug in CATEGORY_PRIORITY}
    )
    gate: CategoryScore = field(default_factory=CategoryScore)
    misses: list[tuple[str, list[str]]] = field(default_factory=list)  # (case id, missed slugs)

    @property
    def total(self) -> CategoryScore:
        return CategoryScore(
            sum(s.tp for s in self.per_category.values()),
            sum(s.fp for s in self.per_category.values()),
            sum(s.fn for s in self.per_category.values()),
        )

    def add(self, case_id: str, predicted: set[str], expected: set[str], flagged: bool) -> None:
        self.messages += 1
        for slug, score in self.per_category.items():
            score.tp += slug in predicted and slug in expected
            score.fp += slug in predicted and slug not in expected
            score.fn += slug not in predicted and slug in expected
        self.gate.tp += flagged and bool(expected)
        self.gate.fp += flagged and not expected
        self.gate.fn += not flagged and bool(expected)
        if expected - predicted:
            self.misses.append((case_id, sorted(expected - predicted)))

    def as_dict(self) -> dict[str, Any]:
        def one(s: CategoryScore) -> dict[str, Any]:
            return {
                "tp": s.tp,
                "fp": s.fp,
                "fn": s.fn,
                "precision": round(s.precision, 3),
                "recall": round(s.recall, 3),
            }

        return {
            "messages": self.messages,
            "gate": one(self.gate),
            "all categories": one(self.total),
            "per_category": {slug: one(s) for slug, s in self.per_category.items()},
        }


def _cases(path: Path, splits: tuple[str, ...]) -> tuple[datetime | None, list[dict]]:
    data = json.loads(Path(path).read_text())
    reference = datetime.fromisoformat(data["reference"]) if "reference" in data else None
    return reference, [c for c in data["cases"] if c.get("split", "dev") in splits]


def evaluate_messages(path: Path | str, splits: tuple[str, ...]) -> GateReport:
    """`categories` and `classify_category` on each message of `splits`, against its labels."""
    report = GateReport()
    for case in _cases(Path(path), splits)[1]:
        text = case["text"]
        report.add(
            case["id"], categories(text), set(case.get("categories", [])), bool(classify_category(text))
        )
    return report


def evaluate_extracted(path: Path | str, splits: tuple[str, ...], inherit: str = "") -> GateReport:
    """The categories on the facts and notes the heuristic extractor draws from each message; with
    `inherit` ("clause", "sentence" or "message") each item's category is first escalated by that
    part of the message it came from (`with_source_categories`), as the extractor itself may do."""
    report = GateReport()
    reference, cases = _cases(Path(path), splits)
    for case in cases:
        at = datetime.fromisoformat(case["occurred_at"]) if "occurred_at" in case else reference
        if at is None:
            raise ValueError(f"{case['id']}: no occurred_at, and the set has no reference time")
        got = extract(case["text"], role=case.get("role", "user"), occurred_at=at)
        if inherit:
            got = with_source_categories(got, case["text"], inherit)
        predicted = {c for c in [*(f.category for f in got.facts), *(n.category for n in got.notes)] if c}
        report.add(case["id"], predicted, set(case.get("categories", [])), bool(predicted))
    return report


def format_report(report: GateReport, title: str) -> str:
    lines = [
        f"consent gate [{title}]: {report.messages} messages",
        f"{'category':<17} {'tp':>4} {'fp':>4} {'fn':>4} {'precision':>9} {'recall':>7}",
    ]
    rows = [("gate (any)", report.gate), ("all categories", report.total), *report.per_category.items()]
    for name, s in rows:
        if s.tp + s.fp + s.fn:
            lines.append(f"{name:<17} {s.tp:>4} {s.fp:>4} {s.fn:>4} {s.precision:>9.3f} {s.recall:>7.3f}")
    return "\n".join(lines)


__all__ = [
    "CONSENT_DATA",
    "CONSENT_DEVELOPMENT",
    "CONSENT_HELD_BACK",
    "EXTRACTION_DATA",
    "GateReport",
    "evaluate_extracted",
    "evaluate_messages",
    "format_report",
]
