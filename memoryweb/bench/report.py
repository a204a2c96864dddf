"""Small helpers shared by the benchmarks: percentiles and plain-text tables."""

import json
import math
from collections.abc import Sequence
from pathlib import Path


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100) with linear interpolation between closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def latency_summary(values_ms: Sequence[float]) -> dict[str, float | None]:
    if not values_ms:
        return {"p50": None, "p95": None, "mean": None}
    return {
        "p50": round(percentile(values_ms, 50), 3),
        "p95": round(percentile(values_ms, 95), 3),
        "mean": round(sum(values_ms) / len(values_ms), 3),
    }


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def fmt(value, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def table(headers: list[str], rows: list[list]) -> str:
    """A plain, left-aligned first column and right-aligned other columns."""
    cells = [headers, *[[fmt(c) for c in row] for row in rows]]
    widths = [max(len(str(row[i])) for row in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        parts = [str(row[0]).ljust(widths[0])] + [
            str(c).rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(parts))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_json(path: str | Path, data: dict) -> None:
    Path(path).write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")
