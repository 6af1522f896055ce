"""The compiler matrix's documents (`pqscope matrix`): its plan (matrix-plan.json, and the head of
matrix.json), each cell's signing within its budget of cycles (signing.json) and its result
(cell.json), and the matrix's document (matrix.json) with a cell per row and build."""

from dataclasses import dataclass, replace

from ...project.errors import PqscopeError
from ...project.toolchain import Toolchain
from .ct import CtDocument
from .parsing import optional, refused_as
from .taint import Finding, TaintDocument

DEFINITE = ("no-leak", "leak", "hang")  # an exact check's outcomes that hold for the code, wherever it ran
# Plans from before the count was recorded checked pqscope taint's default, two signatures.
EARLIER_EXACT_SIGNATURES = 2


@dataclass(frozen=True)
class LeakLine:
    """The exact check's leaks at one source line of one kind: its instructions and their
    executions; for branches, whether each went one way every time (one_way)."""

    kind: str
    function: str | None
    file: str | None
    line: int | None
    instructions: int
    count: int
    one_way: bool

    def to_json(self) -> dict:
        return {"kind": self.kind, "function": self.function, "file": self.file, "line": self.line,
                "instructions": self.instructions, "count": self.count, "one_way": self.one_way}

    @classmethod
    def from_json(cls, data: dict) -> "LeakLine":
        return cls(data["kind"], data["function"], data["file"], data["line"], data["instructions"], data["count"],
                   data["one_way"])


@dataclass(frozen=True)
class Confirmation:
    """A leaking cell's statistical test, read as confirming its exact check ("confirmed"),
    bounding the leak ("not-seen") or not done ("failed": tried again by a resume)."""

    outcome: str
    text: str
    signatures: int | None = None
    bound_share_of_mean: float | None = None  # not-seen: no difference above this share of the mean (None: unknown)

    @property
    def failed(self) -> bool:
        return self.outcome == "failed"

    def to_json(self) -> dict:
        if self.failed:
            return {"outcome": self.outcome, "text": self.text}
        if self.outcome == "confirmed":
            return {"outcome": self.outcome, "signatures": self.signatures, "text": self.text}
        return {"outcome": self.outcome, "signatures": self.signatures,
                "bound_share_of_mean": self.bound_share_of_mean, "text": self.text}

    @classmethod
    def from_json(cls, data: dict) -> "Confirmation":
        return cls(data["outcome"], data["text"], data.get("signatures"), data.get("bound_share_of_mean"))


@dataclass(frozen=True)
class CellResult:
    """What a cell's build did (cell.json): its exact check's verdict ("no-leak", "leak"), "hang"
    (no key and signature within its budget), "failed" (tried again by a resume) or
    "build-failed", with the cycles of its first signature, the digest of its code, its leaks
    by line or its error, and a leaking cell's statistical test."""

    status: str
    sign_cycles: int | None = None
    code_sha256: str | None = None
    leaks: tuple[LeakLine, ...] | None = None
    error: str | None = None
    confirmation: Confirmation | None = None

    @property
    def definite(self) -> bool:
        return self.status in DEFINITE

    def to_json(self, expected: bool | None = None) -> dict:
        """The result's fields, with `expected` (whether the row's default build leaks too, in
        the matrix's document) before the confirmation, as the matrix adds them."""
        fields = {"status": self.status, "sign_cycles": self.sign_cycles, "code_sha256": self.code_sha256,
                  "leaks": None if self.leaks is None else [leak.to_json() for leak in self.leaks],
                  "error": self.error, "expected": expected,
                  "confirmation": None if self.confirmation is None else self.confirmation.to_json()}
        return {name: value for name, value in fields.items() if value is not None}

    @classmethod
    def from_json(cls, data: dict) -> "CellResult":
        with refused_as("a matrix cell's result"):
            return cls(data["status"], data.get("sign_cycles"), data.get("code_sha256"),
                       optional(data, "leaks", lambda leaks: tuple(LeakLine.from_json(leak) for leak in leaks)),
                       data.get("error"), optional(data, "confirmation", Confirmation.from_json))


@dataclass(frozen=True)
class Signing:
    """A build's key and signature on the plain emulator (signing.json): the budget of cycles it
    was given and the cycles it took, None when it ran out of the budget before."""

    budget: int
    cycles: int | None

    def to_json(self) -> dict:
        return {"budget": self.budget, "cycles": self.cycles}

    @classmethod
    def from_json(cls, data: dict) -> "Signing":
        with refused_as("a matrix cell's signing (signing.json)"):
            return cls(data["budget"], data["cycles"])


@dataclass(frozen=True)
class MatrixPlan:
    """What a matrix covers (matrix-plan.json, and the head of matrix.json): its board, seed, the
    signatures of each cell's exact check and the most of a leaking cell's statistical test (0:
    none), its rows (scheme, impl) and builds."""

    board: str
    seed: str  # hex
    ct_signatures: int
    exact_signatures: int
    rows: tuple[tuple[str, str], ...]
    toolchains: tuple[Toolchain, ...]

    def to_json(self) -> dict:
        return {"kind": "matrix", "board": self.board, "seed": self.seed, "ct_signatures": self.ct_signatures,
                "exact_signatures": self.exact_signatures,
                "rows": [{"scheme": scheme, "impl": impl} for scheme, impl in self.rows],
                "toolchains": [toolchain.to_json() for toolchain in self.toolchains]}

    @classmethod
    def from_json(cls, data: dict) -> "MatrixPlan":
        with refused_as("a matrix's plan"):
            return cls(data["board"], data["seed"], data["ct_signatures"],
                       data.get("exact_signatures", EARLIER_EXACT_SIGNATURES),
                       tuple((row["scheme"], row["impl"]) for row in data["rows"]),
                       tuple(Toolchain.from_json(toolchain) for toolchain in data["toolchains"]))

    @staticmethod
    def is_plan(data: object) -> bool:
        """Whether `data` (a stored document) is a matrix's plan or document."""
        return isinstance(data, dict) and data.get("kind") == "matrix"


@dataclass(frozen=True)
class MatrixCell:
    """A row built by one compiler at one level: its result, whether the row's default build leaks
    too (`expected`; None for a build that failed), and the cell whose code it shares (compiler,
    level), whose results it took."""

    scheme: str
    impl: str
    toolchain: Toolchain
    result: CellResult
    expected: bool | None = None
    same_code_as: tuple[str, str] | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.scheme, self.impl, self.toolchain.compiler, self.toolchain.opt

    def to_json(self) -> dict:
        return {"scheme": self.scheme, "impl": self.impl, **self.toolchain.to_json(),
                **self.result.to_json(self.expected),
                **({} if self.same_code_as is None else {"same_code_as": list(self.same_code_as)})}

    @classmethod
    def from_json(cls, data: dict) -> "MatrixCell":
        with refused_as("a matrix's cell"):
            return cls(data["scheme"], data["impl"], Toolchain(data["compiler"], data["opt"]),
                       CellResult.from_json(data), data.get("expected"), optional(data, "same_code_as", tuple))


@dataclass(frozen=True)
class Seconds:
    """One invocation's seconds of a matrix (a resume reads finished cells back)."""

    builds: int
    exact_checks: int
    timing_tests: int

    def to_json(self) -> dict:
        return {"builds": self.builds, "exact_checks": self.exact_checks, "timing_tests": self.timing_tests}

    @classmethod
    def from_json(cls, data: dict) -> "Seconds":
        return cls(data["builds"], data["exact_checks"], data["timing_tests"])


@dataclass(frozen=True)
class MatrixDocument:
    """The matrix's document (matrix.json): its plan, this invocation's seconds, whether it is
    complete (a day's run is kept before each test on timing) and its cells."""

    plan: MatrixPlan
    seconds: Seconds
    complete: bool
    cells: tuple[MatrixCell, ...]

    def to_json(self) -> dict:
        return {**self.plan.to_json(), "seconds": self.seconds.to_json(), "complete": self.complete,
                "cells": [cell.to_json() for cell in self.cells]}

    @classmethod
    def from_json(cls, data: dict) -> "MatrixDocument":
        with refused_as("a matrix's document (matrix.json)"):
            return cls(MatrixPlan.from_json(data), Seconds.from_json(data["seconds"]), data["complete"],
                       tuple(MatrixCell.from_json(cell) for cell in data["cells"]))


def definite_results(document: dict) -> dict[tuple[str, str, str, str], CellResult]:
    """The definite cells of a matrix's `document` (a plan alone has none), each cell's result as its
    own exact check and test on timing left it (a failed test is tried again), by (scheme, impl,
    compiler, level)."""
    with refused_as("a matrix's document"):
        cells = [MatrixCell.from_json(cell) for cell in document.get("cells", ())]
    return {cell.key: replace(cell.result, confirmation=None)
            if cell.result.confirmation is not None and cell.result.confirmation.failed else cell.result
            for cell in cells if cell.result.definite}


def emulated_cycles(emulator_stats: dict) -> int:
    """The cycles an emulator ran, from its start to its end, as its statistics (vboard-stats.json) give them."""
    with refused_as("the emulator's statistics (vboard-stats.json)"):
        return emulator_stats["model_cycles"]


def leaks_by_line(findings: tuple[Finding, ...]) -> tuple[LeakLine, ...]:
    """The exact check's leaks, one per kind and source line."""
    lines: dict[tuple, LeakLine] = {}
    for finding in findings:
        if finding.leak:
            key = (finding.kind, finding.function, finding.file, finding.line)
            entry = lines.get(key, LeakLine(*key, instructions=0, count=0, one_way=True))
            lines[key] = replace(entry, instructions=entry.instructions + 1, count=entry.count + finding.count,
                                 one_way=entry.one_way and finding.one_way)
    return tuple(lines.values())


def exact_check_result(taint: TaintDocument, code_sha256: str) -> CellResult:
    """A cell's result from its exact check: the verdict, its first signature's cycles (the same
    seed in every cell: the same signing path) and its leaks."""
    if not taint.sign_cycles:
        raise PqscopeError("the cell's exact check (taint.json) has no signature's cycles")
    return CellResult(taint.verdict, taint.sign_cycles[0], code_sha256, leaks_by_line(taint.findings))


def confirmation(test: CtDocument) -> Confirmation:
    """A leaking cell's statistical test, read as confirming its exact check or bounding the leak."""
    total = test.statistics.total
    signatures = total.n.fixed + total.n.random
    if test.verdict == "leak":
        return Confirmation("confirmed", f"confirmed at {signatures:,} signatures ({test.reason})", signatures)
    share = None if total.bound is None else total.bound.share
    # The sequential test stops at the first of its looks that decides: say how far it could have gone.
    most = signatures if test.sequential is None else test.sequential.looks[-1]
    difference = f" (no key-dependent difference above {share:.3%} of the mean)" if share else ""
    if share == 0:  # both classes took one and the same time in every signature (a deterministic board)
        difference = " (every signature of both classes took the same cycles)"
    text = f"not seen in {signatures:,} signatures" + (f" of up to {most:,}" if most > signatures else "") + difference
    return Confirmation("not-seen", text, signatures, share)
