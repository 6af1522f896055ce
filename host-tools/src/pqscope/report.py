"""Showing results: the JSON document of a run and a rich table for people."""

from pathlib import Path

from rich.console import Console
from rich.table import Table

RESULTS_SCHEMA = 1


def run_document(board: str, clock_hz: int, run_dir: Path, results: list[dict]) -> dict:
    return {"schema": RESULTS_SCHEMA, "board": board, "clock_hz": clock_hz, "run_dir": str(run_dir), "results": results}


def print_results(console: Console, document: dict) -> None:
    results = document["results"]
    clock_hz = document["clock_hz"]
    first = results[0]
    table = Table(title=f"{first['scheme']} {first['impl']} on {document['board']} at {clock_hz / 1e6:g} MHz")
    for heading in ("op", "n", "verified", "min", "median", "mean", "p95", "max", "stdev", "median ms", "stack B"):
        table.add_column(heading, justify="left" if heading == "op" else "right")
    for result in results:
        cycles = result["cycles"]
        if cycles is None:
            figures = ["-"] * 7
        else:
            figures = [f"{cycles[key]:,.0f}" for key in ("min", "median", "mean", "p95", "max", "stdev")]
            figures.append(f"{cycles['median'] / clock_hz * 1e3:,.2f}")
        stack = result["stack_bytes"]
        table.add_row(result["op"], str(result["n"]), str(result["verified"]), *figures,
                      "-" if stack is None else f"{stack:,}")
    console.print(table)
    console.print(f"code {first['code_bytes']:,} bytes; run saved in {document['run_dir']}")
