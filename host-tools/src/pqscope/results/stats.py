"""Statistics of the captured rows, per operation."""

from collections.abc import Sequence

import numpy as np

from ..link.protocol import Op, Status
from ..results.records import Row
from .documents.runs import CycleStats, OpResult, ProbeSet
from .probes import probe_inflation


def cycle_stats(cycles: Sequence[int]) -> CycleStats:
    values = np.asarray(cycles, dtype=np.float64)
    p05, median, p95 = np.percentile(values, [5, 50, 95])
    return CycleStats(min=int(min(cycles)), p05=float(p05), median=float(median), mean=float(values.mean()),
                      p95=float(p95), max=int(max(cycles)),
                      # Sample standard deviation; a single sample has no spread to estimate.
                      stdev=float(values.std(ddof=1)) if len(values) > 1 else 0.0)


def summarize(rows: list[Row], ops: tuple[Op, ...], scheme: str, impl: str, code_bytes: int,
              probes: ProbeSet | None = None) -> list[OpResult]:
    """One result per requested operation; cycle statistics cover the operations that succeeded.
    With probes, each result also has the probed functions' mean cycles and calls, and what the
    probes added to the total."""
    results = []
    for op in ops:
        op_rows = [row for row in rows if row.op == op]
        timed = [row for row in op_rows if row.status.timed]
        probed = probe_summary(probes, timed) if probes is not None and probes.names and timed else {}
        results.append(OpResult(
            scheme=scheme, impl=impl, op=op.label, n=len(op_rows), verified=sum(row.verified for row in op_rows),
            corrupt_accepted=sum(row.status == Status.CORRUPT_ACCEPTED for row in op_rows),
            cycles=cycle_stats([row.cycles for row in timed]) if timed else None,
            stack_bytes=max((row.stack_bytes for row in op_rows), default=None), code_bytes=code_bytes, **probed))
    return results


def probe_summary(probes: ProbeSet, rows: list[Row]) -> dict:
    """The probed functions' mean cycles and calls per operation, and the probes' inflation of it."""
    mean_total = float(np.mean([row.cycles for row in rows]))
    functions = []
    for index, name in enumerate(probes.names):
        cycles = float(np.mean([row.probes[index].cycles for row in rows]))
        functions.append({"function": name, "mean_cycles": cycles,
                          "mean_calls": float(np.mean([row.probes[index].calls for row in rows])),
                          "share_of_total": cycles / mean_total if mean_total else None})
    return {"probes": functions,
            "probe_inflation": probe_inflation(probes, [row.probes for row in rows], [row.cycles for row in rows])}
