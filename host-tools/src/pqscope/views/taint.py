"""The view of the exact check (`pqscope taint`, and beside `pqscope ct`): every instruction whose
time can depend on the secret, where it is, how often it ran and what it is; the
declassifications that applied and the coverage."""

import re

import click
from rich.console import Console
from rich.table import Table as RichTable

from ..project.toolchain import built_with_text
from ..results.documents.relational import UNCHANGED, RelationalCheck
from ..results.documents.taint import TaintDocument
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
CONFIRMATION = ("A finding that would convict is compared, execution by execution, between the check's signatures "
                "and a few more made alike (each with a key, signing randomness and message of its own): one whose "
                "branch direction, address, division cycles or jump target differed is confirmed, with the pair that "
                "shows it; one that never differed is 'unchanged': tainted (e.g. by arithmetic whose secret parts "
                "cancel), never changed by a secret in the variants tried. That is evidence, not proof (a secret "
                "not tried may change it): it is kept apart and is not a leak.")


def taint_kind(finding: dict) -> str:
    """A finding's kind, with the memory an address finding hit (what its cost depends on)."""
    return f"{finding['kind']} ({finding['region']})" if finding.get("region") else finding["kind"]


def taint_source(finding: dict) -> str:
    """Where a finding is: its source line, a dependency's file by the dependency's name, a row's
    configured copy of its sources (a build tree's sources/SCHEME/IMPL) by the row."""
    if not finding["file"]:
        return finding["address"]
    file = re.sub(r"^(build/[^/]+/)?_deps/([^/]+)-src/", r"\2:", finding["file"])
    file = re.sub(r"^build/[^/]+/sources/", "", file)
    return f"{file}:{finding['line']}"


def taint_executions(finding: dict) -> str:
    """How often a finding's instruction ran; for a branch, which way it went (one way every time:
    the secret decides the path, but the secrets of these signatures never changed it)."""
    count, taken = finding["count"], finding.get("taken")
    if taken is None:
        return f"{count:,}"
    if taken in (0, count):
        return f"{count:,}, always {'taken' if taken else 'not taken'}"
    return f"{count:,}, {taken:,} taken"


def taint_what(finding: dict) -> str:
    """What a finding is: a leak, declassified (and by which of the catalogue's reasons), or a note."""
    if finding["declassified"]:
        reasons = ", ".join(finding["declassified_by"])
        inside = f" (in a call of {finding['within']})" if finding.get("within") else ""
        return (f"declassified: {reasons}" if reasons else "declassified") + inside
    relational = RelationalCheck.from_json(finding["relational"]) if finding.get("relational") else None
    if relational and relational.state == UNCHANGED:
        return f"unchanged: {relational.describe()}"
    confirmed = f" ({relational.describe()})" if relational else ""
    if finding.get("timed"):
        return "LEAK: behind flash wait states the ART's data cache makes a load's time follow its address" + confirmed
    return "LEAK" + confirmed if finding["leak"] else "note"


def _finding_rows(findings: list[dict]) -> list[list[str]]:
    return [[taint_kind(f), f["function"] or "?", taint_source(f), taint_executions(f), taint_what(f)]
            for f in findings]


def findings_section(taint: dict, heading: str) -> Section:
    """The findings as a report section: each with its function, source line, executions and what it is."""
    blocks = [f"{taint['verdict']} over {taint['signatures']} signatures, one execution path each: every "
              "instruction whose time can depend on a secret (the key, the signing randomness or a value derived from "
              "them). The statistics point at the function where the time "
              "goes (a callee doing the extra work); the exact check at the instruction that decides on the secret "
              "(often in its caller).", CONFIRMATION]
    blocks.append(Table(FINDING_HEADINGS, _finding_rows(taint["findings"]), left=3) if taint["findings"] else
                  "No instruction's timing depends on a secret.")
    return Section(heading, blocks)


def _used_declassifications(document: dict) -> list[dict]:
    """The catalogue's declassifications that some finding was declassified by, each once."""
    used = {reason for finding in document["findings"] for reason in finding["declassified_by"]}
    return [item for item in {item["reason"]: item for item in document["declassifications"]}.values()
            if item["reason"] in used]


def _coverage_text(coverage: dict) -> str:
    return (f"{coverage['instructions']:,} distinct instructions ran; new ones per signature: "
            f"{', '.join(f'{n:,}' for n in coverage['new_instructions'])}")


def page(document: dict, _data=None) -> Page:
    sections = [findings_section(document, "Findings")]
    used = _used_declassifications(document)
    if used:
        sections.append(Section("Declassified: why", [Bullets([f"{item['reason']}: {item['why']}" for item in used])]))
    sections.append(Section("Coverage", [f"{_coverage_text(document['coverage'])}. Each signature follows one path: "
                                         "code that no signature reached is not checked."]))
    return Page(f"pqscope taint: {document['scheme']} {document['impl']} on {document['board']}",
                [f"at {_clock_text(document)}, built with {built_with_text(document.get('built_with'))}"], sections)


def _clock_text(document: dict) -> str:
    """The clock whose timing the check priced its findings at (an older check's: the benchmark clock)."""
    return TaintDocument.from_json(document).checked_at.describe()


def show(console: Console, document: dict) -> None:
    """The findings as the `taint` command prints them."""
    click.echo(f"{document['scheme']} {document['impl']} on {document['board']} at {_clock_text(document)}: "
               f"{document['verdict']} "
               f"({document['signatures']} signatures, {document['instructions']:,} instructions checked; built with "
               f"{built_with_text(document.get('built_with'))})")
    if document["findings"]:
        table = RichTable(*FINDING_HEADINGS, box=None)
        for row in _finding_rows(document["findings"]):
            table.add_row(*row)
        console.print(table)
        for kind in dict.fromkeys(finding["kind"] for finding in document["findings"]):
            click.echo(f"  {kind}: {KINDS[kind]}")
        if any(finding.get("relational") for finding in document["findings"]):
            click.echo(f"  {CONFIRMATION}")
    click.echo(f"coverage: {_coverage_text(document['coverage'])}")
    for item in _used_declassifications(document):
        click.echo(f"  declassified, {item['reason']}: {item['why']}")
