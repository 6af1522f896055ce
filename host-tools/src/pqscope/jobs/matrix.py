"""`pqscope matrix`: constant time is a property of the binary. The exact check (pqscope taint) of
catalogue rows built by every compiler at every optimisation level (toolchain.Toolchain), an
emulator per core and resumable; each cell that leaks where its row's default build does not is
then tested on timing (pqscope ct) on that build, which confirms it or bounds what it could be.
Both run in this process (matrix_cells.py); the plan and the cells' files: matrix_plan.py.

A cell's exact check checks its first signature, whose cycles are the cell's (the same seed in
every cell, so the same signing path). Cells whose code is byte for byte another cell's of the
same row (-O3 is the catalogue's own level) take its results.

A matrix can also go on from its document alone (matrix.json, e.g. one kept in git while its tests
on timing take more than a day): a new directory takes the document's plan and keeps the document
(earlier-matrix.json), and each cell whose build has the same code as the document's cell takes that
cell's results, since they are the binary's; the rest are checked anew.

Before its exact check, each build makes a key and signs once on the plain emulator (twenty times
faster than tracking the key), within a budget of cycles: HANG_FACTOR times what its row's default
build takes (the same seed: the same path). A build that runs out of it never signs: the emulator is
deterministic, so its cell is a definite `hang` (the virtual board's CycleBudgetExhausted), decided
in seconds and on any machine alike."""

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..project.boards import Board
from ..project.build import build_images, code_digest
from ..project.errors import PqscopeError
from ..project.toolchain import DEFAULT_TOOLCHAIN
from ..results import store
from ..results.documents.matrix import (CellResult, Confirmation, MatrixCell, MatrixDocument, Seconds, Signing,
                                        confirmation, definite_results, exact_check_result)
from . import matrix_cells
from .matrix_plan import EARLIER, Cell, Plan

# A build's budget of emulator cycles, from its start to a key and a signature: this many times its
# row's default build's (-O0 took up to seven times as many); the default build's own: DEFAULT_BUDGET.
HANG_FACTOR = 25
DEFAULT_BUDGET = 50_000_000_000


class Matrix:
    """Runs the plan's cells at `path` on the board (the virtual board: the exact check needs it),
    `jobs` emulators at a time, telling `say` what it does."""

    def __init__(self, root: Path, path: Path, board: Board, plan: Plan, jobs: int, say: Callable[[str], None]):
        self.root, self.path, self.board, self.plan, self.jobs, self.say = root, path, board, plan, jobs, say
        self.earlier = definite_results(store.read(path / EARLIER)) if (path / EARLIER).is_file() else {}

    def run(self, keep: Callable[[MatrixDocument], None] = lambda document: None) -> MatrixDocument:
        """The matrix's document; `keep` gets it as it stands before each test on timing (a day's
        run can be read while it goes on: not complete, untested cells without a confirmation)."""
        started = time.monotonic()
        images = self._build()
        same_as = self._same_code(images)
        building = round(time.monotonic() - started)
        checked = [cell for cell in self.plan.cells if isinstance(images[cell.key], Path) and cell.key not in same_as]
        budgets = self._budgets([cell for cell in checked if cell.toolchain.is_default], images)
        results = dict(zip((cell.key for cell in checked), matrix_cells.in_parallel(lambda cell: self._exact_check(
            cell, images[cell.key], budgets.get(cell.key[:2], DEFAULT_BUDGET)), checked, self.jobs)))
        checking = round(time.monotonic() - started) - building

        def expected(cell: Cell) -> bool:
            default = results.get((cell.row.scheme, cell.row.impl, DEFAULT_TOOLCHAIN.compiler, DEFAULT_TOOLCHAIN.opt))
            return bool(default and default.status == "leak")

        def matrix_cell(cell: Cell) -> MatrixCell:
            row = (cell.row.scheme, cell.row.impl, cell.toolchain)
            if cell.key in same_as:
                return MatrixCell(*row, results[same_as[cell.key]], expected(cell), same_as[cell.key][2:])
            if not isinstance(images[cell.key], Path):
                return MatrixCell(*row, CellResult("build-failed", error=images[cell.key]))
            return MatrixCell(*row, results[cell.key], expected(cell))

        def document(complete: bool) -> MatrixDocument:
            # This invocation's seconds (a resume reads finished cells back).
            seconds = Seconds(building, checking, round(time.monotonic() - started) - building - checking)
            return MatrixDocument(self.plan.document(self.board.name), seconds, complete,
                                  tuple(matrix_cell(cell) for cell in self.plan.cells))

        unexpected = [cell for cell in checked if results[cell.key].status == "leak"
                      and not expected(cell)] if self.plan.ct_signatures else []
        # Cheapest first: a run stopped early has tested as many cells as its time allowed.
        for cell in sorted(unexpected, key=lambda cell: results[cell.key].sign_cycles):
            if results[cell.key].confirmation is None:
                keep(document(False))
            results[cell.key] = self._confirm(cell, results[cell.key])
        return document(True)

    def _build(self) -> dict[tuple, Path | str]:
        """Every cell's image, or why it did not build: a tree per compiler and flags, all rows in
        one build (the catalogue's level and -O3 are the same flags: one tree)."""
        (self.path / "builds").mkdir(exist_ok=True)
        images = {}
        rows = [(row.scheme, row.impl) for row in self.plan.rows]
        trees: dict[tuple[str, str], dict] = {}
        for toolchain in self.plan.toolchains:
            flags = (toolchain.compiler, toolchain.flags)
            if flags not in trees:
                self.say(f"building {len(rows)} images with {toolchain.label}")
                board = self.board.built_with(toolchain)
                trees[flags] = build_images(self.root, board, rows, self.path / "builds" / f"{board.build_tree}.log")
            images.update({(scheme, impl, toolchain.compiler, toolchain.opt): image
                           for (scheme, impl), image in trees[flags].items()})
        return images

    def _same_code(self, images: dict[tuple, Path | str]) -> dict[tuple, tuple]:
        """Cells whose code is an earlier cell's of the same row, to that cell."""
        first: dict[tuple, tuple] = {}
        same = {}
        for cell in self.plan.cells:
            image = images[cell.key]
            if isinstance(image, Path):
                code = (cell.row.scheme, cell.row.impl, code_digest(image))
                if code in first:
                    same[cell.key] = first[code]
                first.setdefault(code, cell.key)
        return same

    def _budgets(self, defaults: list[Cell], images: dict[tuple, Path | str]) -> dict[tuple[str, str], int]:
        """Each row's budget of cycles for a key and a signature: HANG_FACTOR times its default
        build's, measured first (a row without one measured: DEFAULT_BUDGET)."""
        def measured(cell: Cell) -> int | None:
            try:
                return self._signing(cell, images[cell.key], DEFAULT_BUDGET).cycles
            except PqscopeError:
                return None  # the cell's exact check tries again and says why
        return {cell.key[:2]: HANG_FACTOR * cycles for cell, cycles in zip(
            defaults, matrix_cells.in_parallel(measured, defaults, self.jobs)) if cycles}

    def _signing(self, cell: Cell, image: Path, budget: int) -> Signing:
        """The build's key and signature of the plan's seed on the plain emulator within `budget`
        cycles; measured once (signing.json)."""
        cell.directory(self.path).mkdir(parents=True, exist_ok=True)
        signing = cell.signing(self.path)
        if signing is None:
            signing = Signing(budget, self._sign_once(cell, image, budget))
            cell.keep_signing(self.path, signing)
        return signing

    def _sign_once(self, cell: Cell, image: Path, budget: int) -> int | None:
        """The emulator's cycles from its start to a key and a signature (the harness's own work
        at the build's level included), or None when it ran out of `budget` before."""
        directory = cell.directory(self.path)
        directory.mkdir(parents=True, exist_ok=True)
        return matrix_cells.cycles_to_sign(self.root, self.board, image, bytes.fromhex(self.plan.seed), directory,
                                           budget)

    def _exact_check(self, cell: Cell, image: Path, budget: int) -> CellResult:
        """The cell's result: read back if done, else from its exact check (resumed where it
        stopped) and a signature's cycles, once the build has signed within its `budget`; kept in
        cell.json unless the check failed (a resume tries it again)."""
        done = cell.result(self.path)
        if done is not None:
            return done
        cell.directory(self.path).mkdir(parents=True, exist_ok=True)
        earlier = self.earlier.get(cell.key)
        if earlier is not None and earlier.code_sha256 == code_digest(image):
            cell.keep(self.path, earlier)
            return earlier
        taint = cell.directory(self.path) / "taint"
        try:
            if not (taint / "meta.json").is_file():
                signing = self._signing(cell, image, budget)
                if signing.cycles is None:
                    result = CellResult("hang", code_sha256=code_digest(image), error=(
                        f"no key and signature within {signing.budget:,} cycles" + (
                            "" if signing.budget == DEFAULT_BUDGET else f" ({HANG_FACTOR} times the default build's)")))
                    cell.keep(self.path, result)
                    return result
            self.say(f"exact check: {cell.row.scheme}/{cell.row.impl} with {cell.toolchain.label}")
            document = matrix_cells.exact_check(self.root, self.board.built_with(cell.toolchain), cell.row, taint,
                                                self.plan.exact_signatures, bytes.fromhex(self.plan.seed))
        except PqscopeError as error:
            return CellResult("failed", error=f"the exact check: {error}")
        result = exact_check_result(document, code_digest(image))
        cell.keep(self.path, result)
        return result

    def _confirm(self, cell: Cell, result: CellResult) -> CellResult:
        """The cell's result with the statistical test of its leak on its build (fixed against
        random keys, without the exact check), resumed where it stopped; kept in cell.json unless
        the test failed."""
        if result.confirmation is not None:
            return result
        self.say(f"constant-time test of {cell.row.scheme}/{cell.row.impl} with {cell.toolchain.label}: up to "
                 f"{self.plan.ct_signatures:,} signatures")
        try:
            document = matrix_cells.timing_test(
                self.root, self.board.built_with(cell.toolchain), cell.row, cell.directory(self.path) / "ct",
                self.plan.ct_signatures, bytes.fromhex(self.plan.seed), self.jobs, self.say)
        except PqscopeError as error:
            return replace(result, confirmation=Confirmation("failed", f"the test on timing: {error}"))
        confirmed = replace(result, confirmation=confirmation(document))
        cell.keep(self.path, confirmed)
        return confirmed
