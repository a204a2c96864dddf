"""The report as text: the per-action table with the confusion, and the misses."""

from memory.beliefs.evaluation.cases import LABELS
from memory.beliefs.evaluation.runner import Report


def _pct(value: float | None) -> str:
    return f"{value:.0%}" if value is not None else "—"


def format_table(report: Report, title: str) -> str:
    data = report.scores()
    lines = [
        title,
        f"{'action':<16} {'support':>7} {'predicted':>9} {'precision':>9} {'recall':>7} {'F1':>6}",
    ]
    for label in LABELS:
        row = data["per_action"].get(label)
        if row is None:
            continue
        lines.append(
            f"{label:<16} {row['support']:>7} {row['predicted']:>9} {_pct(row['precision']):>9} "
            f"{_pct(row['recall']):>7} {_pct(row['f1']):>6}"
        )
    macro = data["macro"]
    lines.append(
        f"{'macro':<16} {'':>7} {'':>9} {_pct(macro['precision']):>9} {_pct(macro['recall']):>7} {_pct(macro['f1']):>6}"
    )
    lines.append(f"accuracy {_pct(data['accuracy'])} ({data['correct']}/{data['cases']})")
    kinds = ", ".join(f"{kind} {_pct(acc)}" for kind, acc in report.by_kind().items())
    if kinds:
        lines.append(f"by kind: {kinds}")
    broken = report.history_broken()
    lines.append(f"history intact: {len(report.results) - len(broken)}/{len(report.results)}")
    errors = sum(1 for r in report.results if r.error)
    if errors:
        lines.append(f"engine errors: {errors}")
    lines.append("")
    lines.append("confusion (rows expected, columns taken):")
    present = [label for label in LABELS if label in data["per_action"]]
    short = {
        label: label.replace("SPLIT_BY_", "S_").replace("MARK_EXCEPTION", "EXCEPT")[:9] for label in present
    }
    lines.append(" " * 16 + "".join(f"{short[label]:>10}" for label in present))
    for expected in present:
        row = data["confusion"].get(expected)
        if not row:
            continue
        lines.append(f"{expected:<16}" + "".join(f"{row.get(got, 0) or '.':>10}" for got in present))
    return "\n".join(lines) + "\n"


def format_misses(report: Report) -> str:
    lines = []
    for result in report.results:
        if result.correct and result.history_intact and not result.error:
            continue
        lines.append(f"MISS {result.id} [{result.kind}] expected {result.expected}, took {result.got}")
        if result.why:
            lines.append(f"  why: {result.why}")
        for revision in result.revisions:
            lines.append(
                f"  revision {revision['action']} on {revision['belief']} by {revision['decided_by']}: {revision['reason']}"
            )
        if result.error:
            lines.append(f"  error: {result.error}")
        lines += [f"  history: {problem}" for problem in result.history]
    return "\n".join(lines) + ("\n" if lines else "")
