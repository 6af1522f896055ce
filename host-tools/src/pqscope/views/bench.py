"""The view of `pqscope vboard-bench`: the emulator's speed per workload."""

from rich.console import Console
from rich.table import Table as RichTable


def show(console: Console, document: dict) -> None:
    table = RichTable("scheme", "impl", "model cycles", "emulation s", "model cycles/s")
    for entry in document["benchmarks"]:
        table.add_row(entry["scheme"], entry["impl"], f"{entry['model_cycles']:,}", f"{entry['run_seconds']:.2f}",
                      f"{entry['model_cycles_per_second']:,.0f}")
    console.print(table)
