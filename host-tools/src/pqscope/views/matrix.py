"""The view of `pqscope matrix`: for each compiler, the exact check's verdict and the cycles of
one signature of each row at each optimisation level; then each leaking cell's instructions
(function and source line) and what its statistical test on that build made of it."""

from dataclasses import asdict

from rich.console import Console
from rich.table import Table as RichTable

from ..results.documents.matrix import MatrixCell, MatrixDocument
from .page import Page, Section, Table
from .taint import source_text

# What a cell shows for each exact-check status besides the verdicts.
STATUS_TEXT = {"build-failed": "does not build", "failed": "failed", "hang": "NO SIGNATURE"}


def _cell_text(cell: MatrixCell) -> str:
    status = cell.result.status
    if status not in ("leak", "no-leak"):
        return STATUS_TEXT.get(status, status)
    verdict = "LEAK" if status == "leak" and not cell.expected else status
    if status == "leak" and cell.expected:
        verdict = "leak (as default)"
    same = f" (= {cell.same_code_as[1]})" if cell.same_code_as is not None else ""
    return f"{verdict}, {cell.result.sign_cycles / 1e6:.2f} M{same}"


def _levels(document: MatrixDocument) -> list[str]:
    return list(dict.fromkeys(toolchain.opt for toolchain in document.plan.toolchains))


def _compiler_rows(document: MatrixDocument, compiler: str) -> list[list[str]]:
    cells = {(c.scheme, c.impl, c.toolchain.opt): c for c in document.cells if c.toolchain.compiler == compiler}
    return [[f"{scheme}/{impl}", *(_cell_text(cells[(scheme, impl, level)]) if (scheme, impl, level) in cells else "-"
                                   for level in _levels(document))] for scheme, impl in document.plan.rows]


def _compilers(document: MatrixDocument) -> list[str]:
    return list(dict.fromkeys(toolchain.compiler for toolchain in document.plan.toolchains))


def _leaking(document: MatrixDocument) -> list[MatrixCell]:
    return [cell for cell in document.cells if cell.result.status == "leak" and not cell.expected
            and cell.same_code_as is None]


def _finding_rows(document: MatrixDocument) -> list[list[str]]:
    rows = []
    for cell in _leaking(document):
        confirmation = cell.result.confirmation
        confirmation_text = (confirmation.text if confirmation is not None else "not tested yet"
                             if document.plan.ct_signatures else "not tested (--ct-n 0)")
        for leak in cell.result.leaks:
            rows.append([f"{cell.scheme}/{cell.impl}", f"{cell.toolchain.compiler} {cell.toolchain.opt}", leak.kind,
                         leak.function or "?", source_text(leak.file, leak.line, "?"), str(leak.instructions),
                         f"{leak.count:,}" + (", each one way" if leak.one_way else ""), confirmation_text])
    return rows


FINDING_HEADINGS = ("row", "build", "kind", "function", "source", "instructions", "executions", "on timing")


def _summary(document: MatrixDocument) -> list[str]:
    cells = document.cells
    counts = {status: sum(cell.result.status == status for cell in cells)
              for status in ("no-leak", "leak", "hang", "build-failed")}
    undecided = len(cells) - sum(counts.values())
    leaking = _leaking(document)
    tested = sum(cell.result.confirmation is not None for cell in leaking)
    plan = document.plan
    return [f"{len(plan.rows)} rows x {len(plan.toolchains)} builds on {plan.board}: "
            f"{counts['no-leak']} cells without a leak, {counts['leak']} leaking ({len(leaking)} where the "
            f"row's default build does not), {counts['hang']} whose build gives no signature, "
            f"{counts['build-failed']} that the compiler refuses to build, {undecided} undecided",
            *([] if document.complete else [
                f"still running, or stopped (pqscope matrix --resume): {tested} of {len(leaking)} tests on timing "
                "done, the cheapest first"]),
            "this invocation's seconds: " + ", ".join(f"{what.replace('_', ' ')} {seconds:,}"
                                                     for what, seconds in asdict(document.seconds).items())]


def page(document: MatrixDocument, _data=None) -> Page:
    levels = _levels(document)
    signatures = document.plan.exact_signatures
    checked = "one signature" if signatures == 1 else f"{signatures} signatures"
    sections = [Section(f"Built by {compiler}", [
        f"The exact check's verdict over {checked} and the cycles of one signature (the same seed in every cell: "
        "the same signing path); LEAK: a leak the row's default build (gcc12, its catalogue flags) does not have; "
        "(= level): the same code as that level's build.",
        Table(("row", *levels), _compiler_rows(document, compiler))]) for compiler in _compilers(document)]
    sections.append(Section("Leaks the default build does not have", [
        "Each leaking source line: its instructions and their executions in the exact check; \"each one way\": "
        "every branch there went the same way every time (a secret decides it, but these signatures' secrets never "
        "changed the path, so it cost no time difference); on timing: the build's statistical test.",
        Table(FINDING_HEADINGS, _finding_rows(document), left=5)] if _leaking(document) else ["None."]))
    return Page("pqscope matrix: constant time across compilers and optimisation levels", _summary(document), sections)


def show(console: Console, document: MatrixDocument) -> None:
    for compiler in _compilers(document):
        table = RichTable("row", *_levels(document), title=f"built by {compiler}", box=None)
        for row in _compiler_rows(document, compiler):
            table.add_row(*(text.replace("LEAK", "[bold red]LEAK[/]") for text in row))
        console.print(table)
    if _leaking(document):
        table = RichTable(*FINDING_HEADINGS, title="leaks the default build does not have", box=None)
        for row in _finding_rows(document):
            table.add_row(*row)
        console.print(table)
    for line in _summary(document):
        console.print(line)
