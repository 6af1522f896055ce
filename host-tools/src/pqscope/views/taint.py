"""The view of the exact check (`pqscope taint`, and beside `pqscope ct`): every instruction whose
time can depend on the secret, where it is, how often it ran and what it is; the
declassifications that applied and the coverage."""

import re
from collections.abc import Sequence

import click
from rich.console import Console
from rich.table import Table as RichTable

from ..project.toolchain import built_with_text
from ..results.documents.ct import TaintBeside
from ..results.documents.declassifications import AppliedDeclassification
from ..results.documents.taint import Coverage, Finding, TaintDocument
from .page import Bullets, Page, Section, Table

# What each kind of finding means on this board, at either clock.
KINDS = {
    "branch": "a branch or conditional on the secret: the path, and so the time, depends on it",
    "jump": "a jump to an address computed from the secret",
    "division": "UDIV/SDIV with a secret operand: 2-12 cycles, depending on the operands",
    "address": "a memory access at an address computed from the secret: a note where every address costs the same "
               "(SRAM and CCM, flash at 0 wait states), a leak where the time follows the address (flash behind wait "
               "states and the ART's data cache)",
    "select": "an IT block on the secret whose instructions each take one cycle, executed or skipped: a "
              "constant-time select",
}
FINDING_HEADINGS = ("kind", "function", "source", "executions", "what")
# How a finding that would convict is confirmed (issue #54), for the views' explanations.
CONFIRMATION = ("A finding that would convict is compared, execution by execution, between the check's signatures and"
                " a few more made alike (each with a key and signing randomness of its own, the message the same): "
                "one whose branch direction, address, division cycles or jump target differed is confirmed, with the "
                "pair that shows it; one that never differed is 'unchanged': tainted (e.g. by arithmetic whose secret"
                " parts cancel), never changed by a secret in the variants tried. That is evidence, not proof (a "
                "secret not tried may change it): it is kept apart and is not a leak.")


def taint_kind(finding: Finding) -> str:
    """A finding's kind, with the memory an address finding hit (what its cost depends on)."""
    return f"{finding.kind} ({finding.region})" if finding.region else finding.kind


def source_text(file: str | None, line: int | None, address: str) -> str:
    """Where an instruction is: its source line, a dependency's file by the dependency's name, a
    row's configured copy of its sources (a build tree's sources/SCHEME/IMPL) by the row; without a
    file, its address."""
    if not file:
        return address
    file = re.sub(r"^(build/[^/]+/)?_deps/([^/]+)-src/", r"\2:", file)
    file = re.sub(r"^build/[^/]+/sources/", "", file)
    return f"{file}:{line}"


def taint_source(finding: Finding) -> str:
    """Where a finding is (`source_text`)."""
    return source_text(finding.file, finding.line, finding.hex_address)


def taint_executions(finding: Finding) -> str:
    """How often a finding's instruction ran; for a branch, which way it went (one way every time:
    the secret decides the path, but the secrets of these signatures never changed it)."""
    count, taken = finding.count, finding.taken
    if taken is None:
        return f"{count:,}"
    if taken in (0, count):
        return f"{count:,}, always {'taken' if taken else 'not taken'}"
    return f"{count:,}, {taken:,} taken"


def taint_what(finding: Finding) -> str:
    """What a finding is: a leak, declassified (and by which of the catalogue's reasons), or a note."""
    if finding.declassified:
        reasons = ", ".join(finding.declassified_by)
        inside = f" (in a call of {finding.within})" if finding.within else ""
        return (f"declassified: {reasons}" if reasons else "declassified") + inside
    relational = finding.relational
    if finding.unchanged:
        return f"unchanged: {relational.describe()}"
    confirmed = f" ({relational.describe()})" if relational else ""
    if finding.timed:
        return "LEAK: behind flash wait states the ART's data cache makes a load's time follow its address" + confirmed
    return "LEAK" + confirmed if finding.leak else "note"


def _finding_rows(findings: Sequence[Finding]) -> list[list[str]]:
    return [[taint_kind(f), f.function or "?", taint_source(f), taint_executions(f), taint_what(f)]
            for f in findings]


def findings_section(taint: TaintDocument | TaintBeside, heading: str) -> Section:
    """The findings as a report section: each with its function, source line, executions and what it is."""
    blocks = [f"{taint.verdict} over {taint.signatures} signatures, one execution path each: every "
              "instruction whose time can depend on a secret (the key, the signing randomness or a value derived from "
              "them). The statistics point at the function where the time "
              "goes (a callee doing the extra work); the exact check at the instruction that decides on the secret "
              "(often in its caller).", CONFIRMATION]
    blocks.append(Table(FINDING_HEADINGS, _finding_rows(taint.findings), left=3) if taint.findings else
                  "No instruction's timing depends on a secret.")
    return Section(heading, blocks)


def _used_declassifications(document: TaintDocument) -> list[AppliedDeclassification]:
    """The catalogue's declassifications that some finding was declassified by, each once."""
    used = {reason for finding in document.findings for reason in finding.declassified_by}
    applied = map(AppliedDeclassification.from_json, document.declassifications or ())
    return [item for item in {item.reason: item for item in applied}.values() if item.reason in used]


def _coverage_text(coverage: Coverage) -> str:
    return (f"{coverage.instructions:,} distinct instructions ran; new ones per signature: "
            f"{', '.join(f'{n:,}' for n in coverage.new_instructions)}")


def page(document: TaintDocument, _data=None) -> Page:
    sections = [findings_section(document, "Findings")]
    used = _used_declassifications(document)
    if used:
        sections.append(Section("Declassified: why", [Bullets([f"{item.reason}: {item.why}" for item in used])]))
    sections.append(Section("Coverage", [f"{_coverage_text(document.coverage)}. Each signature follows one path: "
                                         "code that no signature reached is not checked."]))
    return Page(f"pqscope taint: {document.scheme} {document.impl} on {document.board}",
                [f"at {document.checked_at.describe()}, built with {built_with_text(document.built_with)}"], sections)


def show(console: Console, document: TaintDocument) -> None:
    """The findings as the `taint` command prints them."""
    click.echo(f"{document.scheme} {document.impl} on {document.board} at {document.checked_at.describe()}: "
               f"{document.verdict} "
               f"({document.signatures} signatures, {document.instructions:,} instructions checked; built with "
               f"{built_with_text(document.built_with)})")
    if document.findings:
        table = RichTable(*FINDING_HEADINGS, box=None)
        for row in _finding_rows(document.findings):
            table.add_row(*row)
        console.print(table)
        for kind in dict.fromkeys(finding.kind for finding in document.findings):
            click.echo(f"  {kind}: {KINDS[kind]}")
        if any(finding.relational for finding in document.findings):
            click.echo(f"  {CONFIRMATION}")
    click.echo(f"coverage: {_coverage_text(document.coverage)}")
    for item in _used_declassifications(document):
        click.echo(f"  declassified, {item.reason}: {item.why}")
