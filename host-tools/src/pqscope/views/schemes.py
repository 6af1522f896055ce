"""The catalogue's listing (`pqscope schemes`): a table where the terminal is wide enough for it
whole, else one plain line per row, so that no name is ever cut short ("ml-dsa-…")."""

from rich.console import Console
from rich.table import Column, Table

from ..project.catalogue import Implementation

SIZES = ("pk", "sk", "sig", "stack")
UNKNOWN = "-"

# Wide enough to measure any table at its natural width, not at the terminal's.
UNBOUNDED_WIDTH = 1 << 20


def _sizes(row: Implementation) -> tuple[str, ...]:
    """Its sizes; a discovered row's key and signature sizes are the device's to tell (INFO)."""
    return tuple(f"{n:,}" if n else UNKNOWN for n in (row.pk_bytes, row.sk_bytes, row.sig_bytes, row.stack_bytes))


def print_schemes(console: Console, rows: list[Implementation], boards: dict[str, str]) -> None:
    """The rows with their sizes and their status on each of `boards` (a board's name: the firmware
    board whose images it runs, which the catalogue's statuses are given for)."""
    table = Table("scheme", "impl", "family", *(Column(f"{size} B", justify="right") for size in SIZES), *boards)
    for row in rows:
        table.add_row(row.scheme, row.impl, row.family, *_sizes(row),
                      *(row.status_on(firmware) for firmware in boards.values()))
    if console.measure(table, options=console.options.update_width(UNBOUNDED_WIDTH)).maximum <= console.width:
        console.print(table)
        return
    for row in rows:
        sizes = ", ".join(f"{size} {n} B" for size, n in zip(SIZES, _sizes(row)) if n != UNKNOWN)
        statuses = ", ".join(f"{name} {row.status_on(firmware)}" for name, firmware in boards.items())
        # Printed as it is: wider than the terminal, the terminal wraps it, never rich.
        console.print(f"{row.scheme}/{row.impl} ({row.family}): {sizes}; {statuses}", soft_wrap=True, markup=False,
                      highlight=False)
