"""The baseline gate's answer (`pqscope run --baseline`, jobs/baseline.py): per operation, each
figure old and new with its change, and the limits a change broke."""

from ..jobs.baseline import BaselineComparison


def baseline_text(comparison: BaselineComparison) -> str:
    lines = [f"against the baseline {comparison.baseline}:"]
    for change in comparison.changes:
        lines.append(f"  {change.operation}{': REGRESSION' if change.regressed else ''}")
        lines.extend(f"    {figure.describe()}" for figure in change.figures)
    if comparison.missing:
        lines.append(f"  not measured this time: {', '.join(comparison.missing)}")
    broken = [change.operation for change in comparison.changes if change.regressed]
    lines.append(f"regression past the limits in {', '.join(broken)}" if broken else "within the limits")
    return "\n".join(lines)
