"""Counting: per-action precision, recall and F1, the accuracy and the confusion."""

from collections import Counter

from memory.beliefs.evaluation.cases import ACTIONS, LABELS


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 3) if den else None


def scores(pairs: list[tuple[str, str]]) -> dict:
    """Per-label precision, recall, F1 and support from (expected, got) pairs, the accuracy, the
    macro averages over the actions that occur, and the confusion (expected → got → n).
    A label never predicted has no precision (None), never expected no recall."""
    confusion: dict[str, Counter] = {}
    for expected, got in pairs:
        confusion.setdefault(expected, Counter())[got] += 1
    per: dict[str, dict] = {}
    for label in LABELS:
        tp = sum(1 for e, g in pairs if e == label and g == label)
        predicted = sum(1 for _, g in pairs if g == label)
        support = sum(1 for e, _ in pairs if e == label)
        if not predicted and not support:
            continue
        precision, recall = _ratio(tp, predicted), _ratio(tp, support)
        f1 = (
            round(2 * precision * recall / (precision + recall), 3)
            if precision is not None and recall is not None and (precision + recall) > 0
            else (0.0 if precision is not None and recall is not None else None)
        )
        per[label] = {
            "tp": tp,
            "predicted": predicted,
            "support": support,
            "precision": precision,
            "recall": recall,
            "f1": f1,
        }
    expected_actions = [a for a in ACTIONS if a in per and per[a]["support"]]

    def macro(metric: str) -> float | None:
        values = [per[a][metric] or 0.0 for a in expected_actions]
        return round(sum(values) / len(values), 3) if values else None

    correct = sum(1 for e, g in pairs if e == g)
    return {
        "cases": len(pairs),
        "correct": correct,
        "accuracy": _ratio(correct, len(pairs)),
        "per_action": per,
        "macro": {"precision": macro("precision"), "recall": macro("recall"), "f1": macro("f1")},
        "confusion": {e: dict(sorted(row.items())) for e, row in sorted(confusion.items())},
    }
