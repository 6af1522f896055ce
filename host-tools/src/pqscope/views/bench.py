"""The view of `pqscope vboard-bench`: the emulator's speed per workload."""

from rich.console import Console
from rich.table import Table as RichTable

from ..results.documents.bench import EmulatorSpeed


def show(console: Console, document: EmulatorSpeed) -> None:
    table = RichTable("scheme", "impl", "model cycles", "emulation s", "model cycles/s")
    for workload in document.workloads:
        table.add_row(workload.scheme, workload.impl, f"{workload.model_cycles:,}", f"{workload.run_seconds:.2f}",
                      f"{workload.model_cycles_per_second:,.0f}")
    console.print(table)
