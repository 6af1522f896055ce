"""Showing results: the JSON document of a run or suite, a rich table, Markdown, CSV and a
self-contained HTML page with plots."""

import base64
import csv
import html
import io
import re
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .rundir import write_atomically
from .runs import Run
from .tls import budget_rows, has_sign_and_verify, signer_from_run

RESULTS_SCHEMA = 1
STAT_KEYS = ("min", "p05", "median", "mean", "p95", "max", "stdev")
TLS_HEADINGS = ("scheme", "bytes", "≤ 9 kB", "≤ cwnd 10", "≤ cwnd 30", "extra RTT (cwnd 10)", "verify cycles",
                "verify ms", "sign cycles", "sign ms")
TLS_NOTE = ("Six signatures (CertificateVerify, two certificate-chain signatures, an OCSP staple, two SCTs) and two "
            "public keys (leaf, intermediate) per handshake; only their bytes are counted. The client verifies all "
            "six signatures (verify; the root's self-signature is neither sent nor checked); the server signs "
            "CertificateVerify online (sign). cwnd: initial congestion windows of 1460-byte segments; extra round trips "
            "(RTT) = ceil(bytes / window) - 1, ignoring slow start. Cycles are the runs' medians; n/a: no run, "
            "catalogue sizes only.")
TABLE_HEADINGS = ("scheme", "impl", "op", "n", "verified", "min", "median", "mean", "p95", "max", "stdev",
                  "median ms", "stack B", "code B")
PROBE_HEADINGS = ("scheme", "impl", "op", "function", "mean cycles", "mean calls", "share of op")
PROBE_NOTE = ("On-device probes: each function's cycles include its callees, with the probes' own cost taken out by "
              "the device. The operations' totals include what the probes added (inflation, per op below).")


def write_reports(path: Path, document: dict, runs: list[Run]) -> Path:
    """report.md and report.html of the run or suite at `path`; returns the HTML's path."""
    write_atomically(path / "report.md", markdown(document, runs))
    write_atomically(path / "report.html", html_page(document, runs))
    return path / "report.html"


def run_document(board: str, clock_hz: int, run_dir: Path, results: list[dict],
                 flash_wait_states: int | None = None) -> dict:
    return {"schema": RESULTS_SCHEMA, "board": board, "clock_hz": clock_hz, "flash_wait_states": flash_wait_states,
            "run_dir": str(run_dir), "results": results}


def runs_document(path: Path, runs: list[Run]) -> dict:
    """The document of run directories read back from disk (one run, or the runs of a suite)."""
    first = runs[0].meta
    results = [result for run in runs for result in run.results()]
    return run_document(first.board, first.clock_hz or 0, path, results, first.flash_wait_states)


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


def _probe_rows(document: dict) -> list[list[str]]:
    def share(value: float | None) -> str:
        return "-" if value is None else f"{value:.2%}"

    rows = []
    for result in document["results"]:
        for probe in result.get("probes", []):
            rows.append([result["scheme"], result["impl"], result["op"], probe["function"],
                         f"{probe['mean_cycles']:,.0f}", f"{probe['mean_calls']:,.1f}", share(probe["share_of_total"])])
        if "probe_inflation" in result:
            inflation = result["probe_inflation"]
            rows.append([result["scheme"], result["impl"], result["op"], "(probe inflation of the total)",
                         f"{inflation['mean_cycles']:,.0f}", "", share(inflation["share_of_total"])])
    return rows


def clock_text(clock_hz: int, flash_wait_states: int | None) -> str:
    """"168 MHz, 5 flash wait states" (runs from before wait states were recorded: the clock alone)."""
    if flash_wait_states is None:
        return f"{clock_hz / 1e6:g} MHz"
    return f"{clock_hz / 1e6:g} MHz, {flash_wait_states} flash wait state{'s' if flash_wait_states != 1 else ''}"


def _title(document: dict) -> str:
    return f"pqscope on {document['board']} at {clock_text(document['clock_hz'], document.get('flash_wait_states'))}"


def _malleability_notes(document: dict) -> list[str]:
    """Verifications that also accepted the seed-chosen one-bit corruption of the signature."""
    return [f"{result['scheme']} {result['impl']}: {result['corrupt_accepted']} of {result['n']} signatures stayed "
            f"valid with one bit flipped (the verifier accepts more than one encoding; their cycles are counted)"
            for result in document["results"] if result.get("corrupt_accepted")]


def print_results(console: Console, document: dict) -> None:
    table = Table(title=_title(document))
    for heading in TABLE_HEADINGS:
        table.add_column(heading, justify="left" if heading in ("scheme", "impl", "op") else "right")
    for row in _table_rows(document):
        table.add_row(*row)
    console.print(table)
    probe_rows = _probe_rows(document)
    if probe_rows:
        probes = Table(title="Probes", caption=PROBE_NOTE)
        for heading in PROBE_HEADINGS:
            probes.add_column(heading, justify="left" if heading in PROBE_HEADINGS[:4] else "right")
        for row in probe_rows:
            probes.add_row(*row)
        console.print(probes)
    for note in _malleability_notes(document):
        console.print(note, markup=False)
    console.print(f"run saved in {document['run_dir']}")


def markdown(document: dict, runs: Sequence[Run] = ()) -> str:
    lines = [f"# {_title(document)}", "", f"Run directory: `{document['run_dir']}`", "",
             *_markdown_table(TABLE_HEADINGS, _table_rows(document), ("scheme", "impl", "op"))]
    notes = _malleability_notes(document)
    if notes:
        lines += ["", *(f"- {note}" for note in notes)]
    probe_rows = _probe_rows(document)
    if probe_rows:
        lines += ["", "## Probes", "", *_markdown_table(PROBE_HEADINGS, probe_rows, PROBE_HEADINGS[:4]), "", PROBE_NOTE]
    tls_rows = report_tls_rows(runs)
    if tls_rows:
        lines += ["", "## TLS 1.3 handshake budget", "", *_markdown_table(TLS_HEADINGS, _tls_cells(tls_rows), ("scheme",)),
                  "", TLS_NOTE]
    return "\n".join(lines) + "\n"


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


def print_tls_budget(console: Console, rows: list[dict]) -> None:
    overhead = rows[0]["overhead_bytes"] if rows else 0
    caption = TLS_NOTE + (f" Plus {overhead:,} bytes of other handshake content each (--overhead)." if overhead else "")
    table = Table(title="TLS 1.3 handshake budget", caption=caption)
    cells = _tls_cells(rows)
    table.add_column(TLS_HEADINGS[0], no_wrap=True)
    for index, heading in enumerate(TLS_HEADINGS[1:], 1):
        # Figures are never cut: the headings wrap instead.
        table.add_column(heading, justify="right", min_width=max(len(row[index]) for row in cells))
    for label, *figures in cells:
        table.add_row(label.replace(" ", "\n"), *figures)  # a mixed assignment: one role per line
    console.print(table)


def report_tls_rows(runs: Sequence[Run]) -> list[dict]:
    """The budget of every run that has sign and verify samples (none: the report has no TLS section)."""
    return budget_rows([signer_from_run(run) for run in runs if has_sign_and_verify(run)])


def _markdown_table(headings: tuple[str, ...], rows: list[list[str]], left: tuple[str, ...]) -> list[str]:
    return ["| " + " | ".join(headings) + " |",
            "|" + "|".join("---" if h in left else "---:" for h in headings) + "|",
            *("| " + " | ".join(row) + " |" for row in rows)]


def csv_text(document: dict) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["scheme", "impl", "op", "n", "verified", *STAT_KEYS, "stack_bytes", "code_bytes"])
    for r in document["results"]:
        stats = [r["cycles"][key] for key in STAT_KEYS] if r["cycles"] else [""] * len(STAT_KEYS)
        writer.writerow([r["scheme"], r["impl"], r["op"], r["n"], r["verified"], *stats,
                         "" if r["stack_bytes"] is None else r["stack_bytes"], r["code_bytes"]])
    return buffer.getvalue()


def _html_table(headings: tuple[str, ...], rows: list[list[str]], css_class: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headings)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    opening = f'<table class="{css_class}">' if css_class else "<table>"
    return f"{opening}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_page(document: dict, runs: list[Run]) -> str:
    from .plots import comparison_bars, cycle_ecdfs, tls_budget  # matplotlib is slow to import: only when needed

    def image(png: bytes, alt: str) -> str:
        return f'<img alt="{alt}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'

    with_cycles = [r for r in document["results"] if r["cycles"]]
    figures = []
    if with_cycles:
        figures.append("<h2>Median cycles</h2>" + image(comparison_bars(with_cycles), "median cycles per operation"))
        figures.append("<h2>Cycle distributions</h2>" + image(cycle_ecdfs(runs), "cycle ECDF per operation"))
    probe_rows = _probe_rows(document)
    if probe_rows:
        figures.append("<h2>Probes</h2>" + _html_table(PROBE_HEADINGS, probe_rows, "probes")
                       + f"<p>{html.escape(PROBE_NOTE)}</p>")
    tls_rows = report_tls_rows(runs)
    if tls_rows:
        labels = [tls_label(row) for row in tls_rows]
        figures.append("<h2>TLS 1.3 handshake budget</h2>" + _html_table(TLS_HEADINGS, _tls_cells(tls_rows), "tls")
                       + f"<p>{html.escape(TLS_NOTE)}</p>"
                       + image(tls_budget(labels, tls_rows), "TLS handshake bytes and client verification time"))
    title = html.escape(_title(document))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }}
td:nth-child(-n+3), th:nth-child(-n+3) {{ text-align: left; }}
.tls td, .tls th {{ text-align: right; }}
.probes td:nth-child(-n+4), .probes th:nth-child(-n+4) {{ text-align: left; }}
.tls td:first-child, .tls th:first-child {{ text-align: left; }}
img {{ max-width: 100%; }}
</style></head><body>
<h1>{title}</h1>
<p>Run directory: <code>{html.escape(document['run_dir'])}</code></p>
{_html_table(TABLE_HEADINGS, _table_rows(document))}
{''.join(figures)}
</body></html>
"""


BOARDS_NOTE = ("Each board signed the same keys and messages in the same proportions: its cycles should not differ "
               "from the other boards'. t: per key class, the board's mean cycles less the median of the boards' means, "
               "over the standard error of its mean; the larger of the two. A board past |t| = 4.5 stands out (another "
               "clock, firmware or chip revision) and its signatures deserve a look before the verdict is trusted; "
               "with two boards, both stand out alike.")


def _boards_html(boards: list[dict]) -> str:
    """The per-board summary of a test measured on several boards."""
    if not boards:
        return ""

    def median(value) -> str:
        return "-" if value is None else f"{value:,.0f}"

    body = "".join(
        f"<tr><td>{html.escape(board['board'])}</td>"
        f"<td>{html.escape(board.get('place') or board.get('port') or board.get('target') or '-')}</td>"
        f"<td>{board['signatures']:,}</td><td>{median(board['median_cycles']['fixed'])}</td>"
        f"<td>{median(board['median_cycles']['random'])}</td><td>{'-' if board['t_against_the_boards'] is None else _rounded(board['t_against_the_boards'])}</td>"
        f"<td>{'stands out' if board['stands_out'] else ''}</td></tr>" for board in boards)
    return ("<h2>Boards</h2><table><tr><th>serial number</th><th>place or port</th><th>signatures</th>"
            "<th>median cycles (fixed key)</th><th>median cycles (random keys)</th><th>t against the boards</th>"
            f"<th></th></tr>{body}</table><p>{html.escape(BOARDS_NOTE)}</p>")


def bound_text(bound: dict) -> str:
    """A TOST bound (leakstats.LeakBound's JSON) in words."""
    share = bound.get("share_of_mean")
    return (f"no leak larger than {bound['cycles']:,.1f} cycles" + (f" ({share:.3%} of the mean)" if share is not None
                                                                     else "") + " at 95% confidence")


def _rounded(value) -> str:
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def function_line(function: dict) -> str:
    """A ranked function in words, e.g. "__ieee754_sqrt: t = 88.3, +412 cycles per signature (random
    keys minus the fixed key), 63% of the total's difference"."""
    t = function.get("t")
    t_text = "t: too few samples" if t is None else f"t = {t}" if isinstance(t, str) else f"t = {t:.1f}"
    text = f"{function['function']}: {t_text}, {function['difference']:+,.0f} cycles per signature"
    share = function.get("share")
    if share is not None:
        text += f", {share:.0%} of the total's difference"
    return text


SHARE_NOTE = ("The share is a function's mean difference between the classes (random keys minus the fixed key) over "
              "the total's; functions can differ in opposite directions, so shares may exceed 100% or be negative.")


def taint_html(taint: dict, heading: str) -> str:
    """The exact check's findings as a report section: each with its function, source line,
    executions and what it is (a leak, declassified and why, or a note)."""
    rows = "".join(
        f"<tr><td>{html.escape(taint_kind(f))}</td><td>{html.escape(f['function'] or '?')}</td>"
        f"<td>{html.escape(taint_source(f))}</td><td>{f['count']:,}</td><td>{html.escape(taint_what(f))}</td></tr>"
        for f in taint["findings"])
    table = (f"<table><tr><th>kind</th><th>function</th><th>source</th><th>executions</th><th>what</th></tr>{rows}"
             f"</table>") if rows else "<p>No instruction's timing depends on the key.</p>"
    return (f"<h2>{html.escape(heading)}</h2><p>{html.escape(taint['verdict'])} over {taint['signatures']} "
            f"signatures, one execution path each: every instruction whose time can depend on the key. The "
            f"statistics point at the function where the time goes (a callee doing the extra work); the exact check "
            f"at the instruction that decides on the secret (often in its caller).</p>{table}")


def taint_page(result: dict) -> str:
    """pqscope taint's page: the findings, the declassifications that applied and the coverage."""
    title = html.escape(f"pqscope taint: {result['scheme']} {result['impl']} on {result['board']}")
    coverage = result["coverage"]
    used = {reason for f in result["findings"] for reason in f["declassified_by"]}
    reasons = "".join(f"<li>{html.escape(item['reason'])}: {html.escape(item['why'])}</li>"
                      for item in {item["reason"]: item for item in result["declassifications"]}.values()
                      if item["reason"] in used)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body {{ font-family: sans-serif; margin: 2em; }} table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }}</style>
</head><body><h1>{title}</h1>{taint_html(result, "Findings")}
{f"<h2>Declassified: why</h2><ul>{reasons}</ul>" if reasons else ""}
<h2>Coverage</h2><p>{coverage['instructions']:,} distinct instructions ran; new ones per signature:
{html.escape(', '.join(f'{n:,}' for n in coverage['new_instructions']))}. Each signature follows one path: code that
no signature reached is not checked.</p>
</body></html>
"""


def taint_kind(finding: dict) -> str:
    """A finding's kind, with the memory an address finding hit (what its cost depends on)."""
    return f"{finding['kind']} ({finding['region']})" if finding.get("region") else finding["kind"]


def taint_source(finding: dict) -> str:
    """Where a finding is: its source line, a dependency's file by the dependency's name."""
    if not finding["file"]:
        return finding["address"]
    file = re.sub(r"^build/[^/]+/_deps/([^/]+)-src/", r"\1:", finding["file"])
    return f"{file}:{finding['line']}"


def taint_what(finding: dict) -> str:
    """What a finding is: a leak, declassified (and by which of the catalogue's reasons), or a note."""
    if finding["declassified"]:
        return f"declassified: {', '.join(finding['declassified_by'])}"
    return "LEAK" if finding["leak"] else "note"


def ct_page(document: dict, t_series_png: bytes, ecdf_png: bytes) -> str:
    """The constant-time test's page: verdict, the strongest test, localisation, |t| against N
    and the two classes' cycle distributions."""
    title = html.escape(f"pqscope ct: {document['scheme']} {document['impl']} on {document['board']}")
    n = document["n"]
    clock = document.get("clock")
    facts = [("clock", clock_text(clock["hz"], clock["flash_wait_states"]) if clock and clock["hz"] else "not recorded"),
        ("verdict", document["verdict"]), ("why", document.get("reason", "")),
        ("samples", f"{n['fixed']:,} fixed-key, {n['random']:,} random-key"),
        ("max |t|", _rounded(document["max_abs_t"])), ("strongest test", str(document.get("strongest_test"))),
    ]
    if document.get("corrupt_accepted"):
        facts.append(("corrupted signatures accepted", f"{document['corrupt_accepted']:,}: still valid with one bit "
                      "flipped, so the verifier accepts more than one encoding (their signing time is counted)"))
    correction = document.get("correction")
    if correction:
        facts.append(("rejection attempts", f"{correction['retry_function']}: "
                      f"{correction['cycles_per_attempt']:,.0f} cycles each, removed before testing "
                      f"(mean attempts fixed {correction['mean_attempts']['fixed']:.2f}, "
                      f"random {correction['mean_attempts']['random']:.2f}); "
                      f"uncorrected verdict: {document['uncorrected']['verdict']}"))
    def number(value, spec: str) -> str:
        return value if isinstance(value, str) else "-" if value is None else format(value, spec)

    taint = document.get("taint")

    def taint_cell(function: str) -> str:
        found = (taint or {}).get("in_top_functions", {}).get(function)
        return "" if taint is None else f"<td>{found['leaks']} leak, {found['declassified']} declassified</td>" \
            if found and (found["leaks"] or found["declassified"]) else "<td>none</td>"

    functions = "".join(
        f"<tr><td>{html.escape(f['function'])}</td><td>{number(f.get('share'), '.0%')}</td>"
        f"<td>{number(f.get('t'), '.1f')}</td><td>{number(f.get('difference'), '+,.0f')}</td>"
        f"{taint_cell(f['function'])}</tr>"
        for f in document.get("top_functions", []))
    if document.get("bound"):
        requested = document.get("bound_requested")
        facts.append(("bound", bound_text(document["bound"]) + ("" if not requested else
                      f"; asked for {requested['share_of_mean']:.3%}: {'shown' if requested['shown'] else 'not shown'}")))
    inflation = document.get("probe_inflation")
    if inflation:
        share = inflation["share_of_total"]
        facts.append(("probe inflation", f"{inflation['mean_cycles']:,.0f} cycles per signature"
                      + (f" ({share:.2%} of the total)" if share is not None else "")))
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in facts)
    localisation = (f"<h2>Where the time differs ({html.escape(str(document.get('localised_by')))})</h2>"
                    f"<table><tr><th>function</th>"
                    f"<th>share of the difference</th><th>t</th><th>mean difference (cycles)</th>"
                    + ("<th>exact check's findings inside</th>" if taint else "") + "</tr>"
                    f"{functions}</table><p>{html.escape(SHARE_NOTE)}</p>") if functions else ""
    if taint is not None:
        localisation += taint_html(taint, "The exact check beside it (pqscope taint)")
    confirm = document.get("confirm_on_board")
    if confirm:
        unreachable = "".join(f"<li>{html.escape(f['function'])}: {html.escape(f['why'])}</li>"
                              for f in confirm["not_probeable"])
        localisation += (f"<h2>Confirm on a board</h2><p>Probes of {html.escape(', '.join(confirm['probes']))} time "
                         f"these functions on the board itself:</p><pre>{html.escape(confirm['command'])}</pre>"
                         + (f"<ul>{unreachable}</ul>" if unreachable else ""))
    localisation += _boards_html(document.get("boards", []))
    encode = base64.b64encode
    plotted = html.escape(document.get("plotted", "signing cycles"))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body {{ font-family: sans-serif; margin: 2em; }} table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }} img {{ max-width: 100%; }}</style>
</head><body><h1>{title}</h1><table>{rows}</table>{localisation}
<h2>|t| against the number of samples: {plotted}</h2><img alt="|t| against N" src="data:image/png;base64,{encode(t_series_png).decode()}">
<h2>{plotted} per key class</h2><img alt="cycle ECDF per class" src="data:image/png;base64,{encode(ecdf_png).decode()}">
</body></html>
"""
