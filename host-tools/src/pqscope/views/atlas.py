"""The view of `pqscope atlas`: the rows' figures and verdicts on the terminal; the page (report.md,
report.html) with the figure of signature size against signing time per family and the findings
section; and, in pqm4's shapes, benchmarks.md (its speed, memory, hashing and size tables, with a
constant-time column) and benchmarks.csv (its speed table's columns, then the verdict and the board).
Every view lists the rows the atlas chose but did not measure on a board, with their status and reason."""

import csv
import io

from rich.console import Console

from ..results.documents.atlas import (DECLASSIFIED, LEAK, NOTE, OPS, SORTS, UNCHANGED, UNSORTED, AtlasDocument,
                                       AtlasEntry, AtlasFinding, ListedRow)
from .page import Bullets, Figure, Page, Section, Table, rich_table
from .taint import KINDS, source_text

KEYGEN, SIGN, VERIFY = OPS
OP_WORDS = {KEYGEN: "Key Generation", SIGN: "Sign", VERIFY: "Verify"}
CSV_HEADINGS = ("Scheme", "Implementation", *(f"{OP_WORDS[op]} [cycles] ({what})" for op in OPS
                                              for what in ("mean", "min", "max")), "Constant time", "Board",
               "Status", "Reason")
SPEED_HEADINGS = ("scheme", "implementation", "key generation [cycles]", "sign [cycles]", "verify [cycles]",
                  "constant time")


def _scheme_cell(entry: AtlasEntry) -> str:
    return f"{entry.key.scheme} ({entry.samples} executions)"


def _speed_cell(entry: AtlasEntry, op: str, separator: str) -> str:
    stats = entry.cycles.get(op)
    if stats is None:
        return "-"
    return separator.join((f"AVG: {round(stats.mean):,}", f"MIN: {stats.min:,}", f"MAX: {stats.max:,}"))


def _mechanism(finding: AtlasFinding) -> str:
    kind = f"{finding.kind} ({finding.region})" if finding.region else finding.kind
    return f"{kind}: {KINDS.get(finding.kind, finding.kind)}" + (
        "; its load time follows the address behind the flash wait states" if finding.timed else "")


def _source(finding: AtlasFinding) -> str:
    return source_text(finding.file, finding.line, finding.address)


def _boards(document: AtlasDocument) -> list[str]:
    return list(dict.fromkeys(entry.key.board for entry in document.entries))


def _listed_by_board(document: AtlasDocument) -> list[tuple[str, list[ListedRow]]]:
    return [(board, [row for row in document.plan.listed if row.key.board == board]) for board in document.plan.boards
            if any(row.key.board == board for row in document.plan.listed)]


def _by_board(document: AtlasDocument) -> list[tuple[str, list[AtlasEntry]]]:
    return [(board, [entry for entry in document.entries if entry.key.board == board]) for board in _boards(document)]


def benchmarks_md(document: AtlasDocument) -> str:
    """pqm4's benchmarks.md for the atlas's rows: its four evaluations' signature tables, the speed
    table with a constant-time column, a table per board where there are several; then the rows not
    measured, with their status and reason."""
    groups = _by_board(document)

    def heading(board: str) -> str:
        return "## Signature Schemes" + (f" ({board})" if len(document.plan.boards) > 1 else "")

    def table(headings: tuple[str, ...], rows: list[list[str]]) -> list[str]:
        return ["| " + " | ".join(headings) + " |", "| " + " | ".join("-" * len(text) for text in headings) + " |",
                *("| " + " | ".join(row) + " |" for row in rows)]

    lines = ["# Speed Evaluation"]
    for board, entries in groups:
        lines += [heading(board), *table(SPEED_HEADINGS, [
            [_scheme_cell(entry), entry.key.impl, *(_speed_cell(entry, op, " <br /> ") for op in OPS), entry.verdict]
            for entry in entries])]
    lines.append("# Memory Evaluation")
    for board, entries in groups:
        lines += [heading(board), *table(("Scheme", "Implementation", "Key Generation [bytes]", "Sign [bytes]",
                                          "Verify [bytes]"), [
            [entry.key.scheme, entry.key.impl, *(str(entry.stack_bytes.get(op, "-")) for op in OPS)]
            for entry in entries])]
    lines.append("# Hashing Evaluation")
    for board, entries in groups:
        lines += [heading(board), *table(("Scheme", "Implementation", "Sign [%]"), [
            [entry.key.scheme, entry.key.impl, "-" if entry.hashing_share is None else f"{entry.hashing_share:.1%}"]
            for entry in entries])]
    lines.append("# Size Evaluation")
    for board, entries in groups:
        lines += [heading(board), *table(("Scheme", "Implementation", ".text [bytes]", ".data [bytes]", ".bss [bytes]",
                                          "Total [bytes]"), [
            [entry.key.scheme, entry.key.impl, str(entry.text_bytes), str(entry.data_bytes), str(entry.bss_bytes),
             str(entry.text_bytes + entry.data_bytes + entry.bss_bytes)] for entry in entries])]
    listed = _listed_by_board(document)
    if listed:
        lines.append("# Not Measured")
    for board, rows in listed:
        lines += [heading(board), *table(("Scheme", "Implementation", "Status", "Reason"), [
            [row.key.scheme, row.key.impl, row.status, row.reason.replace("|", "\\|")] for row in rows])]
    return "\n".join(lines) + "\n"


def csv_text(document: AtlasDocument) -> str:
    """pqm4's benchmarks.csv speed columns, a row each, then the verdict, the board and the row's status
    there; a row not measured has its status and reason and no figures."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADINGS)
    for entry in document.entries:
        figures = []
        for op in OPS:
            stats = entry.cycles.get(op)
            figures += ["", "", ""] if stats is None else [round(stats.mean), stats.min, stats.max]
        writer.writerow([_scheme_cell(entry), entry.key.impl, *figures, entry.verdict, entry.key.board, "ok", ""])
    for row in document.plan.listed:
        writer.writerow([row.key.scheme, row.key.impl, *[""] * 3 * len(OPS), "", row.key.board, row.status, row.reason])
    return buffer.getvalue()


def files(document: AtlasDocument) -> dict[str, str]:
    """The files the atlas's reports add to report.md and report.html."""
    return {"benchmarks.md": benchmarks_md(document), "benchmarks.csv": csv_text(document)}


def _sorted_counts(document: AtlasDocument) -> str:
    counts = {sort: sum(finding.sort == sort for finding in document.findings) for sort in SORTS}
    return (f"{len(document.findings)} findings of the exact check: {counts[LEAK]} reported leaks, "
            f"{counts[DECLASSIFIED]} declassified by the catalogue, {counts[UNCHANGED]} unchanged by any secret "
            f"tried, {counts[NOTE]} notes; {counts[UNSORTED] or 'none'} unsorted")


def summary(document: AtlasDocument) -> list[str]:
    verdicts = [entry.verdict for entry in document.entries]
    shard = "" if document.shard is None else f", shard {document.shard.text} of the plan's {len(document.plan.rows)}"
    leaking = [f"{entry.key.name} ({entry.key.board})" for entry in document.entries if entry.verdict == "leak"]
    lines = [f"{len(document.entries)} rows on {', '.join(document.plan.boards)}{shard}, {document.plan.samples} "
             f"samples each: {verdicts.count('no-leak')} no-leak, {verdicts.count('leak')} leak, "
             f"{len(verdicts) - verdicts.count('no-leak') - verdicts.count('leak')} otherwise",
             _sorted_counts(document)]
    if leaking:
        lines.append(f"leaking: {', '.join(leaking)}")
    statuses = [row.status for row in document.plan.listed]
    if statuses:
        lines.append(f"{len(statuses)} rows not measured (their status on the board is not ok): " + ", ".join(
            f"{statuses.count(status)} {status}" for status in dict.fromkeys(sorted(statuses))))
    if not document.complete:
        lines.append(f"not complete: {len(document.owned_rows) - len(document.entries)} rows still to measure "
                     "(pqscope atlas --resume)")
    return lines


def _speed_rows(document: AtlasDocument) -> list[list[str]]:
    return [[entry.key.name, entry.key.board, *(_speed_cell(entry, op, "; ") for op in OPS), entry.verdict]
            for entry in document.entries]


def _memory_rows(document: AtlasDocument) -> list[list[str]]:
    return [[entry.key.name, entry.key.board, entry.family, *(f"{entry.stack_bytes.get(op, 0):,}" for op in OPS),
             f"{entry.text_bytes:,}", "-" if entry.hashing_share is None else f"{entry.hashing_share:.1%}",
             f"{entry.pk_bytes:,}", f"{entry.sig_bytes:,}"] for entry in document.entries]


MEMORY_HEADINGS = ("row", "board", "family", "keygen stack B", "sign stack B", "verify stack B", ".text B",
                   "hashing in signing", "pk B", "sig B")


def _findings_blocks(document: AtlasDocument) -> list:
    by_sort = {sort: [finding for finding in document.findings if finding.sort == sort] for sort in SORTS}
    blocks = [_sorted_counts(document) + ". Each finding of each row's exact check is declassified by the catalogue "
              "(with its reason), a reported leak (with the secret it depends on and what the statistical test says "
              "of it), unchanged (tainted, never changed by a secret tried), or a note (its kind costs the same for "
              "every secret at the check's clock)."]
    if by_sort[LEAK]:
        blocks += ["Reported leaks:", Table(("row", "function", "source", "mechanism", "executions", "secret",
                                             "statistical test"), [
            [f"{finding.key.name} ({finding.key.board})", finding.function or "?", _source(finding),
             _mechanism(finding), f"{finding.executions:,}", finding.secret or "", finding.statistics or ""]
            for finding in by_sort[LEAK]], left=4)]
    if by_sort[DECLASSIFIED]:
        blocks += ["Declassified by the catalogue:", Table(("row", "function", "source", "kind", "executions",
                                                            "reason"), [
            [f"{finding.key.name} ({finding.key.board})", finding.function or "?", _source(finding), finding.kind,
             f"{finding.executions:,}", "; ".join(f"{reason.reason}: {reason.why}" for reason in finding.reasons)]
            for finding in by_sort[DECLASSIFIED]], left=4)]
    others = by_sort[UNCHANGED] + by_sort[NOTE]
    if others:
        blocks += ["Unchanged and notes:", Table(("row", "function", "source", "kind", "sorted", "why"), [
            [f"{finding.key.name} ({finding.key.board})", finding.function or "?", _source(finding), finding.kind,
             finding.sort, finding.detail or ""] for finding in others], left=5)]
    if by_sort[UNSORTED]:
        blocks += ["Unsorted (to be declared in the catalogue or reported):", Bullets([
            f"{finding.key.name} ({finding.key.board}): {finding.kind} in {finding.function or '?'} at "
            f"{_source(finding)}: {finding.detail}" for finding in by_sort[UNSORTED]])]
    return blocks


def _points(document: AtlasDocument) -> list[tuple[str, str, float, int, bool]]:
    boards = len(_boards(document)) > 1
    return [(entry.family, entry.key.name + (f" ({entry.key.board})" if boards else ""),
             entry.cycles.get(SIGN).median, entry.sig_bytes, entry.verdict == "leak")
            for entry in document.entries if entry.cycles.get(SIGN) is not None]


def page(document: AtlasDocument, data=None) -> Page:
    from .plots import signature_map  # matplotlib: only for the HTML page

    points = _points(document)
    return Page("pqscope atlas", [Bullets(summary(document))], [
        Section("Signature size against signing time", [
            Figure(lambda: signature_map(points), "signature bytes against median signing cycles, both on log scales, "
                                                  "per family; a leaking row circled in red"),
            "Each point is a row: its signature's bytes (the device's INFO) against its median signing cycles over "
            "the samples, at the board's clock."]),
        Section("Speed (cycles over the samples)", [Table(("row", "board", "key generation", "sign", "verify",
                                                           "constant time"), _speed_rows(document), left=2)]),
        Section("Stack, size and hashing", [Table(MEMORY_HEADINGS, _memory_rows(document), left=3)]),
        Section("Findings", _findings_blocks(document)),
        Section("Rows not measured", _listed_blocks(document))])


def _listed_blocks(document: AtlasDocument) -> list:
    if not document.plan.listed:
        return ["None: every row chosen was measured."]
    return ["The rows chosen whose status on a board is not ok: listed with that status and why, not measured.",
            Table(("row", "board", "family", "status", "reason"), [
                [row.key.name, row.key.board, row.family, row.status, row.reason] for row in document.plan.listed],
                left=5)]


def show(console: Console, document: AtlasDocument) -> None:
    rows = [[entry.key.name, entry.key.board, *(f"{entry.cycles.get(op).median:,.0f}" if entry.cycles.get(op)
                                                else "-" for op in OPS),
             f"{max(entry.stack_bytes.values(), default=0):,}", f"{entry.text_bytes:,}",
             "-" if entry.hashing_share is None else f"{entry.hashing_share:.2%}", f"{entry.sig_bytes:,}",
             entry.verdict] for entry in document.entries]
    console.print(rich_table(Table(("row", "board", "keygen median", "sign median", "verify median", "stack B",
                                    ".text B", "hashing", "sig B", "constant time"), rows, left=2)))
    for line in summary(document):
        console.print(line, markup=False, highlight=False)
    for key in dict.fromkeys(finding.key for finding in document.leaks):
        leaks = [finding for finding in document.leaks if finding.key == key]
        functions = list(dict.fromkeys(finding.function for finding in leaks))
        first = leaks[0]
        console.print(f"  LEAK {key.name} ({key.board}): {len(leaks)} instruction{'' if len(leaks) == 1 else 's'} in "
                      f"{', '.join(functions[:4])}{', ...' if len(functions) > 4 else ''}; the first, "
                      f"{first.kind} at {_source(first)}, depends on {first.secret}; the statistics: "
                      f"{first.statistics}", markup=False, highlight=False)
    for finding in document.unsorted:
        console.print(f"  UNSORTED {finding.key.name} ({finding.key.board}): {finding.kind} in "
                      f"{finding.function or '?'} at {_source(finding)}: {finding.detail}", markup=False,
                      highlight=False)
