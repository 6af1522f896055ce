"""What a CI system is told of the exact check (issue #58): each checked implementation (a `pqscope
taint` or `ct`, a suite's member, a matrix cell) as `CheckedCode`, its findings gathered per source
line and mechanism (`SourceLine`), for the SARIF, JUnit, annotation and code-quality writers
(views/sarif.py, views/junit.py, views/ci_notes.py). Only findings whose kind can time by a
secret on this board appear: a leak, or one declared public (declassified) or never changed by a
secret (unchanged), each with its reason; notes (an address in SRAM, a select) do not."""

import re
from dataclasses import dataclass
from pathlib import Path

from ..jobs.suite import FP_ROUTINE
from ..results import store
from ..results.documents.ct import CtDocument, TaintBeside
from ..results.documents.declassifications import AppliedDeclassification
from ..results.documents.matrix import LeakLine, MatrixDocument
from ..results.documents.suite import SuiteDocument
from ..results.documents.taint import LEAK_KINDS, Finding, TaintDocument
from .taint import KINDS

LEAK, DECLASSIFIED, UNCHANGED = "leak", "declassified", "unchanged"
SECRET = "the secret key or the signing randomness, or a value derived from them"


@dataclass(frozen=True)
class Rule:
    """A mechanism by which a secret times an instruction on the Cortex-M4: a SARIF rule."""

    id: str
    name: str
    short: str
    full: str


# Each kind of leak's rule: its id, name and short description (the full one is the taint view's).
_KIND_RULES = {"branch": ("secret-branch", "SecretBranch", "A branch on a secret"),
               "jump": ("secret-jump", "SecretJump", "A jump to a secret address"),
               "division": ("secret-division", "SecretDivision", "A division with a secret operand")}
RULES = {rule.id: rule for rule in (
    *(Rule(*names, KINDS[kind]) for kind, names in _KIND_RULES.items()),
    Rule("secret-flash-address", "SecretFlashAddress", "A load from flash at a secret address, behind wait states",
         "a load from flash at an address computed from the secret, at a clock with flash wait states: the ART's "
         "data cache holds some lines and a load waits unless its line is held, so its time follows the address"),
    Rule("soft-float-call", "SoftFloatCall", "A floating-point routine on a secret operand",
         "a branch inside a floating-point routine (libgcc's soft-float, libm, or an emulation) on a secret operand: "
         "the routine's time depends on the operands, so each call on a secret value leaks"),
)}


def rule_of(kind: str, function: str | None, timed: bool) -> str | None:
    """The mechanism of a finding of `kind` in `function`; None for a note (its time does not
    follow the secret on this board)."""
    if kind not in LEAK_KINDS and not timed:
        return None
    if function and FP_ROUTINE.match(function):
        return "soft-float-call"
    return _KIND_RULES[kind][0] if kind in _KIND_RULES else "secret-flash-address"


@dataclass(frozen=True)
class SourceLine:
    """The findings of one mechanism and state at one source line of a function: their instructions,
    executions, and the reason (a declassified line's, an unchanged one's) or evidence (a leak's)."""

    rule: str
    state: str  # LEAK, DECLASSIFIED or UNCHANGED
    function: str | None
    file: str | None
    line: int | None
    addresses: tuple[int, ...]  # empty: not known (a matrix keeps its leaks by line)
    executions: int
    why: str

    @property
    def place(self) -> str:
        """"control.c:42 in key_dependent_value", as a headline names it."""
        if self.file:
            where = f"{Path(self.file).name}:{self.line}"
        else:
            where = f"0x{self.addresses[0]:08x}" if self.addresses else "?"
        return f"{where} in {self.function or '?'}"


@dataclass(frozen=True)
class CheckedCode:
    """One implementation's exact check (or, a constant-time test's, its verdict with the check's
    lines): `implementation` is scheme/impl, `build` the compiler and level of a matrix cell."""

    implementation: str
    verdict: str  # "no-leak", "leak", "inconclusive", or a matrix cell's status ("hang", "build-failed", "failed")
    lines: tuple[SourceLine, ...]
    build: str | None = None
    detail: str = ""  # a cell's error, a test's reason

    @property
    def name(self) -> str:
        return f"{self.implementation} {self.build}" if self.build else self.implementation

    @property
    def leaks(self) -> tuple[SourceLine, ...]:
        return tuple(line for line in self.lines if line.state == LEAK)

    def headline(self) -> str:
        """One sentence: the verdict and the leaking lines, the most executed first."""
        leaks = sorted(self.leaks, key=lambda line: -line.executions)
        if not leaks:
            return f"{self.name}: {self.verdict}" + (f" ({self.detail})" if self.detail else "")
        shown = "; ".join(f"{RULES[line.rule].short.lower()} at {line.place}" for line in leaks[:3])
        more = f" and {len(leaks) - 3} more" if len(leaks) > 3 else ""
        return f"{self.name}: leak at {len(leaks)} source line{'s' if len(leaks) > 1 else ''}: {shown}{more}"


def _state(finding: Finding) -> str:
    if finding.declassified:
        return DECLASSIFIED
    return UNCHANGED if finding.unchanged else LEAK


def _why(finding: Finding, reasons: dict[str, str]) -> str:
    if finding.declassified:
        named = [f"{reason}: {reasons[reason]}" if reason in reasons else reason for reason in finding.declassified_by]
        inside = [f"inside a call of {finding.within}, declared to work on masked values"] if finding.within else []
        return "; ".join(named + inside) or "declared public by the catalogue"
    return finding.relational.describe() if finding.relational else ""


def source_lines(findings: tuple[Finding, ...], reasons: dict[str, str]) -> tuple[SourceLine, ...]:
    """The findings that can time by a secret, one entry per mechanism, state and source line."""
    grouped: dict[tuple, list[Finding]] = {}
    for finding in findings:
        rule = rule_of(finding.kind, finding.function, finding.timed)
        if rule is not None:
            key = (rule, _state(finding), finding.function, finding.file, finding.line)
            grouped.setdefault(key, []).append(finding)
    lines = []
    for key, members in grouped.items():
        whys = list(dict.fromkeys(why for finding in members if (why := _why(finding, reasons))))
        # A leak's evidence: one confirming pair is enough; a declared line's reasons: all of them.
        why = whys[0] if whys and key[1] == LEAK else "; ".join(whys)
        lines.append(SourceLine(*key, tuple(f.address for f in members), sum(f.count for f in members), why))
    return tuple(lines)


def _reasons(document: TaintDocument) -> dict[str, str]:
    return {item.reason: item.why for item in map(AppliedDeclassification.from_json, document.declassifications or ())}


def of_taint(document: TaintDocument) -> CheckedCode:
    return CheckedCode(f"{document.scheme}/{document.impl}", document.verdict,
                       source_lines(document.findings, _reasons(document)),
                       detail=f"at {document.checked_at.describe()}")


def of_ct(document: CtDocument, taint: TaintDocument | None = None) -> CheckedCode:
    """A constant-time test: its verdict, and the lines of its exact check (`taint`, the check's
    own document where it is kept, carries the catalogue's reasons in words)."""
    beside: TaintDocument | TaintBeside | None = taint or document.taint
    reasons = _reasons(taint) if taint else {}
    return CheckedCode(f"{document.scheme}/{document.impl}", document.verdict,
                       source_lines(beside.findings, reasons) if beside else (), detail=document.reason)


def load_ct(directory: Path) -> CheckedCode:
    """The constant-time test kept in `directory`, with its exact check's own document if it has one."""
    document = store.load(directory)[1]
    taint = directory / "taint"
    return of_ct(document, store.load(taint)[1] if store.stored_kind(taint) == "taint" else None)


def of_suite(document: SuiteDocument) -> tuple[CheckedCode, ...]:
    """A suite's members that had a constant-time test, each read from where the test is kept."""
    return tuple(load_ct(Path(entry.constant_time.run_dir)) for entry in document.implementations
                 if entry.constant_time and entry.constant_time.run_dir)


def _matrix_line(leak: LeakLine) -> SourceLine:
    return SourceLine(rule_of(leak.kind, leak.function, leak.kind == "address"), LEAK, leak.function, leak.file,
                      leak.line, (), leak.count, "")


def of_matrix(document: MatrixDocument) -> tuple[CheckedCode, ...]:
    """Each cell of a matrix, its leaks by line; a cell whose row's default build leaks too says so."""
    cells = []
    for cell in document.cells:
        result = cell.result
        detail = result.error or ("its row's default build leaks too" if cell.expected else "")
        cells.append(CheckedCode(f"{cell.scheme}/{cell.impl}", result.status,
                                 tuple(map(_matrix_line, result.leaks or ())),
                                 build=f"{cell.toolchain.compiler} {cell.toolchain.opt}", detail=detail))
    return tuple(cells)


def artifact(file: str, cwd: Path) -> tuple[str, str | None]:
    """A finding's file as a code host links it: (path, base) where base None is the checkout the
    command ran in. An implementation's configured copy (a build tree's sources/SCHEME/IMPL) is
    relative to the implementation's own tree ("IMPLEMENTATION"), a dependency's file to that
    dependency's tree (its name), the compiler's own (libgcc, newlib's libm: "../../..") to the
    toolchain's sources ("TOOLCHAIN"); an absolute path inside the working directory (a
    library's --impl-dir in its CI checkout) relative to it."""
    copied = re.match(r"^build/[^/]+/sources/[^/]+/[^/]+/(.+)$", file)
    if copied:
        return copied[1], "IMPLEMENTATION"
    dependency = re.match(r"^(?:build/[^/]+/)?_deps/([^/]+)-src/(.+)$", file)
    if dependency:
        return dependency[2], dependency[1].upper()
    if file.startswith("../"):
        return re.sub(r"^(\.\./)+", "", file), "TOOLCHAIN"
    path = Path(file)
    if path.is_absolute():
        return (path.relative_to(cwd).as_posix(), None) if path.is_relative_to(cwd) else (path.as_uri(), None)
    return file, None
