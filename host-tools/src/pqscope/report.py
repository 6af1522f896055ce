"""Showing results: the JSON document of a run or suite, a rich table, Markdown, CSV and a
self-contained HTML page with plots."""

import base64
import csv
import html
import io
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .runs import Run

RESULTS_SCHEMA = 1
STAT_KEYS = ("min", "p05", "median", "mean", "p95", "max", "stdev")
TABLE_HEADINGS = ("scheme", "impl", "op", "n", "verified", "min", "median", "mean", "p95", "max", "stdev",
                  "median ms", "stack B", "code B")


def run_document(board: str, clock_hz: int, run_dir: Path, results: list[dict]) -> dict:
    return {"schema": RESULTS_SCHEMA, "board": board, "clock_hz": clock_hz, "run_dir": str(run_dir), "results": results}


def runs_document(path: Path, runs: list[Run]) -> dict:
    """The document of run directories read back from disk (one run, or the runs of a suite)."""
    first = runs[0].meta
    results = [result for run in runs for result in run.results()]
    return run_document(first["board"], first.get("clock_hz", 0), path, results)


def _table_rows(document: dict) -> list[list[str]]:
    clock_hz = document["clock_hz"]
    rows = []
    for result in document["results"]:
        cycles = result["cycles"]
        if cycles is None:
            figures = ["-"] * 7
        else:
            figures = [f"{cycles[key]:,.0f}" for key in ("min", "median", "mean", "p95", "max", "stdev")]
            figures.append(f"{cycles['median'] / clock_hz * 1e3:,.2f}" if clock_hz else "-")
        stack = result["stack_bytes"]
        rows.append([result["scheme"], result["impl"], result["op"], str(result["n"]), str(result["verified"]),
                     *figures, "-" if stack is None else f"{stack:,}", f"{result['code_bytes']:,}"])
    return rows


def _title(document: dict) -> str:
    return f"pqscope on {document['board']} at {document['clock_hz'] / 1e6:g} MHz"


def print_results(console: Console, document: dict) -> None:
    table = Table(title=_title(document))
    for heading in TABLE_HEADINGS:
        table.add_column(heading, justify="left" if heading in ("scheme", "impl", "op") else "right")
    for row in _table_rows(document):
        table.add_row(*row)
    console.print(table)
    console.print(f"run saved in {document['run_dir']}")


def markdown(document: dict) -> str:
    lines = [f"# {_title(document)}", "", f"Run directory: `{document['run_dir']}`", "",
             "| " + " | ".join(TABLE_HEADINGS) + " |",
             "|" + "|".join("---" if h in ("scheme", "impl", "op") else "---:" for h in TABLE_HEADINGS) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in _table_rows(document)]
    return "\n".join(lines) + "\n"


def csv_text(document: dict) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["scheme", "impl", "op", "n", "verified", *STAT_KEYS, "stack_bytes", "code_bytes"])
    for r in document["results"]:
        stats = [r["cycles"][key] for key in STAT_KEYS] if r["cycles"] else [""] * len(STAT_KEYS)
        writer.writerow([r["scheme"], r["impl"], r["op"], r["n"], r["verified"], *stats,
                         "" if r["stack_bytes"] is None else r["stack_bytes"], r["code_bytes"]])
    return buffer.getvalue()


def html_page(document: dict, runs: list[Run]) -> str:
    from .plots import comparison_bars, cycle_ecdfs  # matplotlib is slow to import: only when needed

    def image(png: bytes, alt: str) -> str:
        return f'<img alt="{alt}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'

    head = "".join(f"<th>{html.escape(h)}</th>" for h in TABLE_HEADINGS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>"
                   for row in _table_rows(document))
    with_cycles = [r for r in document["results"] if r["cycles"]]
    figures = []
    if with_cycles:
        figures.append("<h2>Median cycles</h2>" + image(comparison_bars(with_cycles), "median cycles per operation"))
        figures.append("<h2>Cycle distributions</h2>" + image(cycle_ecdfs(runs), "cycle ECDF per operation"))
    title = html.escape(_title(document))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }}
td:nth-child(-n+3), th:nth-child(-n+3) {{ text-align: left; }}
img {{ max-width: 100%; }}
</style></head><body>
<h1>{title}</h1>
<p>Run directory: <code>{html.escape(document['run_dir'])}</code></p>
<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>
{''.join(figures)}
</body></html>
"""
