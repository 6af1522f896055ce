"""Statistics of the captured rows, per operation."""

from collections.abc import Sequence

import numpy as np

from .capture import Row
from .protocol import Op, Status


def cycle_stats(cycles: Sequence[int]) -> dict[str, float]:
    values = np.asarray(cycles, dtype=np.float64)
    p05, median, p95 = np.percentile(values, [5, 50, 95])
    return {
        "min": int(min(cycles)),
        "p05": float(p05),
        "median": float(median),
        "mean": float(values.mean()),
        "p95": float(p95),
        "max": int(max(cycles)),
        # Sample standard deviation; a single sample has no spread to estimate.
        "stdev": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
    }


def summarize(rows: list[Row], ops: tuple[Op, ...], scheme: str, impl: str, code_bytes: int) -> list[dict]:
    """One result per requested operation; cycle statistics cover the operations that succeeded."""
    results = []
    for op in ops:
        op_rows = [row for row in rows if row.op == op]
        ok_cycles = [row.cycles for row in op_rows if row.status.timed]
        results.append({
            "scheme": scheme,
            "impl": impl,
            "op": op.label,
            "n": len(op_rows),
            "verified": sum(row.verified for row in op_rows),
            "corrupt_accepted": sum(row.status == Status.CORRUPT_ACCEPTED for row in op_rows),
            "cycles": cycle_stats(ok_cycles) if ok_cycles else None,
            "stack_bytes": max((row.stack_bytes for row in op_rows), default=None),
            "code_bytes": code_bytes,
        })
    return results
