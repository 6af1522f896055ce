"""The view of runs and suites (`pqscope run`, `pqscope report` of a run directory): the cycles
and stack table, probes, the TLS budget of the runs that signed and verified, and the plots."""

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table as RichTable

from ..project.toolchain import built_with_text
from ..results.documents.runs import RunsDocument
from ..results.progress import unfinished
from ..results.runs import Run
from ..results.tls import budget_rows, has_sign_and_verify, signer_from_run
from .page import Bullets, Figure, Page, Section, Table, Verdict

STAT_KEYS = ("min", "p05", "median", "mean", "p95", "max", "stdev")
TLS_HEADINGS = ("scheme", "bytes", "≤ 9 kB", "≤ cwnd 10", "≤ cwnd 30", "extra RTT (cwnd 10)", "verify cycles",
                "verify ms", "sign cycles", "sign ms")
TLS_NOTE = ("Six signatures (CertificateVerify, two certificate-chain signatures, an OCSP staple, two SCTs) and two "
            "public keys (leaf, intermediate) per handshake; only their bytes are counted. The client verifies all "
            "six signatures (verify; the root's self-signature is neither sent nor checked); the server signs "
            "CertificateVerify online (sign). cwnd: initial congestion windows of 1460-byte segments; extra round trips "
            "(RTT) = ceil(bytes / window) - 1, ignoring slow start. Cycles are the runs' medians; n/a: no run, "
            "catalogue sizes only.")
TABLE_HEADINGS = ("implementation", "op", "n", "verified", "min", "median", "mean", "p95", "max", "stdev",
                  "median ms", "stack B", "code B")
MEDIANS_CAPTION = "Median cycles of each operation per implementation, on a log scale: the schemes differ a thousandfold."
ECDF_CAPTION = ("Each operation's cycles over its samples, cumulative: a vertical step is a fixed-time operation, a "
                "staircase one whose time varies.")
TLS_CAPTION = "A TLS handshake's bytes and the client's verification time per implementation: what each costs a handshake."
PROBE_HEADINGS = ("scheme", "impl", "op", "function", "mean cycles", "mean calls", "share of op")
PROBE_NOTE = ("On-device probes: each function's cycles include its callees, with the probes' own cost taken out by "
              "the device. The operations' totals include what the probes added (inflation, per op below).")


def clock_text(clock_hz: int, flash_wait_states: int | None) -> str:
    """"168 MHz, 5 flash wait states" (runs from before wait states were recorded: the clock alone)."""
    if flash_wait_states is None:
        return f"{clock_hz / 1e6:g} MHz"
    return f"{clock_hz / 1e6:g} MHz, {flash_wait_states} flash wait state{'s' if flash_wait_states != 1 else ''}"


def title(document: RunsDocument) -> str:
    built = f", built with {built_with_text(document.built_with)}" if document.built_with else ""
    return f"pqscope on {document.board} at {clock_text(document.clock_hz, document.flash_wait_states)}{built}"


def _table_rows(document: RunsDocument) -> list[list[str]]:
    clock_hz = document.clock_hz
    rows = []
    for result in document.results:
        cycles = result.cycles
        if cycles is None:
            figures = ["-"] * 7
        else:
            figures = [f"{value:,.0f}" for value in (cycles.min, cycles.median, cycles.mean, cycles.p95, cycles.max,
                                                     cycles.stdev)]
            figures.append(f"{cycles.median / clock_hz * 1e3:,.2f}" if clock_hz else "-")
        stack = result.stack_bytes
        rows.append([f"{result.scheme} {result.impl}", result.op, str(result.n), str(result.verified),
                     *figures, "-" if stack is None else f"{stack:,}", f"{result.code_bytes:,}"])
    return rows


# The page splits the terminal's table in two, each narrow enough for a page: the cycles, then
# time and memory.
CYCLE_COLUMNS = ("implementation", "op", "n", "min", "median", "mean", "p95", "max", "stdev")
TIME_AND_MEMORY_COLUMNS = ("implementation", "op", "verified", "median ms", "stack B", "code B")


def detail_tables(document: RunsDocument) -> list[Table]:
    """Every operation's cycle statistics; then its time at the board's clock, stack and code."""
    rows = _table_rows(document)
    return [Table(columns, [[row[TABLE_HEADINGS.index(column)] for column in columns] for row in rows], left=2)
            for columns in (CYCLE_COLUMNS, TIME_AND_MEMORY_COLUMNS)]


def _probe_rows(document: RunsDocument) -> list[list[str]]:
    def share(value: float | None) -> str:
        return "-" if value is None else f"{value:.2%}"

    rows = []
    for result in document.results:
        for probe in result.probed_functions:
            rows.append([result.scheme, result.impl, result.op, probe.function, f"{probe.mean_cycles:,.0f}",
                         f"{probe.mean_calls:,.1f}", share(probe.share_of_total)])
        inflation = result.probes_added
        if inflation is not None:
            rows.append([result.scheme, result.impl, result.op, "(probe inflation of the total)",
                         f"{inflation.mean_cycles:,.0f}", "", share(inflation.share_of_total)])
    return rows


def _malleability_notes(document: RunsDocument) -> list[str]:
    """Verifications that also accepted the signature with a seed-chosen bit of its first byte flipped."""
    return [f"{result.scheme} {result.impl}: {result.corrupt_accepted} of {result.n} signatures stayed "
            f"valid with one bit flipped (a bit of the signature's first byte, which verification must check; "
            f"their cycles are counted)"
            for result in document.results if result.corrupt_accepted]


def tls_label(row: dict) -> str:
    return f"{row['scheme']}/{row['impl']}" if row["impl"] else row["scheme"]


def _tls_cells(rows: list[dict]) -> list[list[str]]:
    def number(value: float | None, decimals: int) -> str:
        return "n/a" if value is None else f"{value:,.{decimals}f}"

    return [[tls_label(row), f"{row['bytes']:,}",
             *("yes" if row[key] else "no" for key in ("fits_9kB", "fits_initcwnd10", "fits_initcwnd30")),
             str(row["extra_round_trips_initcwnd10"]), number(row["verify_cycles"], 0), number(row["verify_ms"], 2),
             number(row["sign_cycles"], 0), number(row["sign_ms"], 2)]
            for row in rows]


def report_tls_rows(runs: Sequence[Run]) -> list[dict]:
    """The budget of every run that has sign and verify samples (none: the report has no TLS section)."""
    return budget_rows([signer_from_run(run) for run in runs if has_sign_and_verify(run)])


def progress_banner(run_dir: str) -> list[Verdict]:
    """A page's first block where its directory's measurement is not complete: PARTIAL or RUNNING
    and what is missing (results.progress); none for a complete one."""
    headline = unfinished(Path(run_dir))
    return [Verdict("this report", headline.word, headline.detail)] if headline else []


def page(document: RunsDocument, runs: Sequence[Run]) -> Page:
    from . import plots  # matplotlib is slow to import: only when a figure is drawn

    intro = [*progress_banner(document.run_dir), f"Run directory: `{document.run_dir}`", *detail_tables(document)]
    notes = _malleability_notes(document)
    if notes:
        intro.append(Bullets(notes))
    sections = []
    with_cycles = [result for result in document.results if result.cycles]
    if with_cycles:
        sections += [Section("Median cycles", [Figure(lambda: plots.comparison_bars(with_cycles), MEDIANS_CAPTION)]),
                     Section("Cycle distributions", [Figure(lambda: plots.cycle_ecdfs(list(runs)), ECDF_CAPTION)])]
    probe_rows = _probe_rows(document)
    if probe_rows:
        sections.append(Section("Probes", [Table(PROBE_HEADINGS, probe_rows, left=4), PROBE_NOTE]))
    tls_rows = report_tls_rows(runs)
    if tls_rows:
        labels = [tls_label(row) for row in tls_rows]
        sections.append(Section("TLS 1.3 handshake budget", [
            Table(TLS_HEADINGS, _tls_cells(tls_rows)), TLS_NOTE,
            Figure(lambda: plots.tls_budget(labels, tls_rows), TLS_CAPTION)]))
    return Page(title(document), intro, sections)


def show(console: Console, document: RunsDocument) -> None:
    table = RichTable(title=title(document))
    for heading in TABLE_HEADINGS:
        table.add_column(heading, justify="left" if heading in ("implementation", "op") else "right")
    for row in _table_rows(document):
        table.add_row(*row)
    console.print(table)
    probe_rows = _probe_rows(document)
    if probe_rows:
        probes = RichTable(title="Probes", caption=PROBE_NOTE)
        for heading in PROBE_HEADINGS:
            probes.add_column(heading, justify="left" if heading in PROBE_HEADINGS[:4] else "right")
        for row in probe_rows:
            probes.add_row(*row)
        console.print(probes)
    for note in _malleability_notes(document):
        console.print(note, markup=False)
    console.print(f"run saved in {document.run_dir}")


def show_tls_budget(console: Console, rows: list[dict]) -> None:
    overhead = rows[0]["overhead_bytes"] if rows else 0
    caption = TLS_NOTE + (f" Plus {overhead:,} bytes of other handshake content each (--overhead)." if overhead else "")
    table = RichTable(title="TLS 1.3 handshake budget", caption=caption)
    cells = _tls_cells(rows)
    table.add_column(TLS_HEADINGS[0], no_wrap=True)
    for index, heading in enumerate(TLS_HEADINGS[1:], 1):
        # Figures are never cut: the headings wrap instead.
        table.add_column(heading, justify="right", min_width=max(len(row[index]) for row in cells))
    for label, *figures in cells:
        table.add_row(label.replace(" ", "\n"), *figures)  # a mixed assignment: one role per line
    console.print(table)


def csv_text(document: RunsDocument) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["scheme", "impl", "op", "n", "verified", *STAT_KEYS, "stack_bytes", "code_bytes"])
    for r in document.results:
        stats = [getattr(r.cycles, key) for key in STAT_KEYS] if r.cycles else [""] * len(STAT_KEYS)
        writer.writerow([r.scheme, r.impl, r.op, r.n, r.verified, *stats,
                         "" if r.stack_bytes is None else r.stack_bytes, r.code_bytes])
    return buffer.getvalue()
