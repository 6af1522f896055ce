"""`pqscope matrix`'s plan and directories: the rows and builds it covers (matrix-plan.json,
written before any cell starts), where each cell keeps its files, and what a resume reads back.

A matrix directory holds matrix-plan.json, builds/<tree>.log, and a directory per cell,
<scheme>-<impl>/<compiler>.<level>/, with the cell's signing within its budget of cycles
(signing.json), its exact check (taint/), its statistical test (ct/) and its result (cell.json,
written last: a cell that has one is done); a matrix that went on from a document keeps that
document (earlier-matrix.json)."""

import shutil
from dataclasses import dataclass
from pathlib import Path

from ..project.catalogue import Implementation, find_implementation
from ..project.errors import PqscopeError
from ..project.toolchain import COMPILERS, OPT_LEVELS, Toolchain
from ..results import store
from ..results.documents.matrix import CellResult, MatrixPlan, Signing
from ..results.rundir import make_empty_directory, write_atomically

PLAN = "matrix-plan.json"
CELL = "cell.json"
SIGNING = "signing.json"  # a cell's key and signature on the plain emulator, within its budget
EARLIER = "earlier-matrix.json"  # the document a matrix went on from
# The rows without --row: every ML-DSA, FN-DSA and Falcon row, and SPHINCS+'s fast 128-bit ones.
DEFAULT_FAMILIES = ("ML-DSA", "FN-DSA", "Falcon")
DEFAULT_EXTRA_ROWS = (("sphincs-sha2-128f-simple", "clean"), ("sphincs-shake-128f-simple", "clean"))
CT_SIGNATURES = 10_000  # the most signatures of a leaking cell's statistical test
# Signatures of each cell's exact check: one path per build, the same seed in every cell, so that
# the builds are compared on the same path (pqscope taint checks two by default).
EXACT_SIGNATURES = 1


def default_rows(catalogue: list[Implementation]) -> list[Implementation]:
    return [row for row in catalogue if row.status == "ok" and (
        row.family in DEFAULT_FAMILIES or (row.scheme, row.impl) in DEFAULT_EXTRA_ROWS)]


def toolchains(compilers: tuple[str, ...], levels: tuple[str, ...]) -> list[Toolchain]:
    return [Toolchain.parse(compiler, level) for compiler in compilers or COMPILERS for level in levels or OPT_LEVELS]


@dataclass(frozen=True)
class Cell:
    row: Implementation
    toolchain: Toolchain

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.row.scheme, self.row.impl, self.toolchain.compiler, self.toolchain.opt

    def directory(self, matrix: Path) -> Path:
        return matrix / f"{self.row.scheme}-{self.row.impl}" / self.toolchain.slug

    def result(self, matrix: Path) -> CellResult | None:
        """The cell's result kept in the matrix directory `matrix` (None: not done yet)."""
        file = self.directory(matrix) / CELL
        return CellResult.from_json(store.read(file)) if file.is_file() else None

    def keep(self, matrix: Path, result: CellResult) -> None:
        write_atomically(self.directory(matrix) / CELL, store.dumps(result.to_json()))

    def signing(self, matrix: Path) -> Signing | None:
        """The cell's signing within its budget, kept in the matrix directory `matrix` (None: not measured yet)."""
        file = self.directory(matrix) / SIGNING
        return Signing.from_json(store.read(file)) if file.is_file() else None

    def keep_signing(self, matrix: Path, signing: Signing) -> None:
        write_atomically(self.directory(matrix) / SIGNING, store.dumps(signing.to_json()))


@dataclass(frozen=True)
class Plan:
    board: str
    seed: str  # hex
    ct_signatures: int
    rows: list[Implementation]
    toolchains: list[Toolchain]
    exact_signatures: int = EXACT_SIGNATURES

    @property
    def cells(self) -> list[Cell]:
        return [Cell(row, toolchain) for row in self.rows for toolchain in self.toolchains]

    def document(self, board: str) -> MatrixPlan:
        """The plan as the matrix's document heads it, measured on `board`."""
        return MatrixPlan(board, self.seed, self.ct_signatures, self.exact_signatures,
                          tuple((row.scheme, row.impl) for row in self.rows), tuple(self.toolchains))


def start(path: Path, plan: Plan, earlier: Path | None = None) -> None:
    """A new matrix directory holding its plan, written before any cell starts, and the `earlier`
    matrix document whose cells it takes where the code is the same."""
    make_empty_directory(path, "matrix")
    if earlier is not None:
        shutil.copyfile(earlier, path / EARLIER)
    write_atomically(path / PLAN, store.dumps(plan.document(plan.board).to_json()))


def resumed_plan(path: Path, catalogue: list[Implementation]) -> Plan:
    """The plan of the matrix directory `path`, or of the matrix document `path` (its plan is in it)."""
    source = path / PLAN if path.is_dir() else path
    data = store.read(source) if source.is_file() else None
    if not MatrixPlan.is_plan(data):
        raise PqscopeError(f"cannot resume {path}: it is neither a matrix directory (with {PLAN}) nor a matrix's "
                           "document (matrix.json)")
    plan = MatrixPlan.from_json(data)
    return Plan(plan.board, plan.seed, plan.ct_signatures,
                [find_implementation(catalogue, scheme, impl) for scheme, impl in plan.rows],
                list(plan.toolchains), plan.exact_signatures)
