"""`pqscope matrix`: constant time is a property of the binary. The exact check (pqscope taint) of
catalogue rows built by every compiler at every optimisation level (toolchain.Toolchain), an
emulator per core and resumable; each cell that leaks where its row's default build does not is
then tested on timing by `pqscope ct` on that build, which confirms it or bounds what it could be.

A matrix directory holds matrix-plan.json (what it covers), builds/<tree>.log, and a directory per
cell, <scheme>-<impl>/<compiler>.<level>/, with the cell's exact check (taint/; its first
signature's cycles are the cell's, the same seed in every cell, so the same signing path), its
statistical test (ct/) and its summary (cell.json, written last: a cell that has one is done).
Cells whose code is byte for byte another cell's of the same row (-O3 is the catalogue's own
level) take its results.

A matrix can also go on from its document alone (matrix.json, e.g. one kept in git while its tests
on timing take more than a day): a new directory takes the document's plan and keeps the document
(earlier-matrix.json), and each cell whose build has the same code as the document's cell takes that
cell's results, since they are the binary's; the rest are checked anew.

Before its exact check, each build makes a key and signs once on the plain emulator (twenty times
faster than tracking the key), within a budget of cycles: HANG_FACTOR times what its row's default
build takes (the same seed: the same path). A build that runs out of it never signs: the emulator is
deterministic, so its cell is a definite `hang`, decided in seconds and on any machine alike."""

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from ..link.protocol import Op, Status
from ..project.boards import Board
from ..project.build import build_images, code_digest
from ..project.catalogue import Implementation, find_implementation
from ..project.errors import PqscopeError
from ..project.metadata import load_json
from ..project.toolchain import COMPILERS, DEFAULT_TOOLCHAIN, OPT_LEVELS, Toolchain
from ..results import store
from ..results.records import sample_seed
from ..results.rundir import make_empty_directory, write_atomically
from ..targets.kinds import open_target
from ..targets.target import Link

PLAN = "matrix-plan.json"
CELL = "cell.json"
SIGNING = "signing.json"  # a cell's key and signature on the plain emulator, within its budget
EARLIER = "earlier-matrix.json"  # the document a matrix went on from
DEFINITE = ("no-leak", "leak", "hang")  # an exact check's outcomes that hold for the code, wherever it ran
# The rows without --row: every ML-DSA, FN-DSA and Falcon row, and SPHINCS+'s fast 128-bit ones.
DEFAULT_FAMILIES = ("ML-DSA", "FN-DSA", "Falcon")
DEFAULT_EXTRA_ROWS = (("sphincs-sha2-128f-simple", "clean"), ("sphincs-shake-128f-simple", "clean"))
CT_SIGNATURES = 10_000  # the most signatures of a leaking cell's statistical test
# Signatures of each cell's exact check: one path per build, the same seed in every cell, so that
# the builds are compared on the same path (pqscope taint checks two by default).
EXACT_SIGNATURES = 1
# Seconds per signature of a cell's exact check (it only bounds a failure: the build has signed
# within its budget before): SPHINCS+ at -O0 takes minutes.
TAINT_TIMEOUT = 3600
# A build's budget of emulator cycles, from its start to a key and a signature: this many times its
# row's default build's (-O0 took up to seven times as many); the default build's own: DEFAULT_BUDGET.
HANG_FACTOR = 25
DEFAULT_BUDGET = 50_000_000_000
MSG_LEN = 32  # pqscope taint's default


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

    def options(self) -> list[str]:
        return ["--scheme", self.row.scheme, "--impl", self.row.impl, "--compiler", self.toolchain.compiler,
                "--opt", self.toolchain.opt]


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

    def to_json(self) -> dict:
        return {"schema": 1, "kind": "matrix", "board": self.board, "seed": self.seed,
                "ct_signatures": self.ct_signatures, "exact_signatures": self.exact_signatures,
                "rows": [{"scheme": row.scheme, "impl": row.impl} for row in self.rows],
                "toolchains": [toolchain.to_json() for toolchain in self.toolchains]}


def start(path: Path, plan: Plan, earlier: Path | None = None) -> None:
    """A new matrix directory holding its plan, written before any cell starts, and the `earlier`
    matrix document whose cells it takes where the code is the same."""
    make_empty_directory(path, "matrix")
    if earlier is not None:
        shutil.copyfile(earlier, path / EARLIER)
    write_atomically(path / PLAN, json.dumps(plan.to_json(), indent=2) + "\n")


def resumed_plan(path: Path, catalogue: list[Implementation]) -> Plan:
    """The plan of the matrix directory `path`, or of the matrix document `path` (its plan is in it)."""
    source = path / PLAN if path.is_dir() else path
    data = (load_json(source) if path.is_dir() else store.read(source)) if source.is_file() else None
    if not isinstance(data, dict) or data.get("kind") != "matrix":
        raise PqscopeError(f"cannot resume {path}: it is neither a matrix directory (with {PLAN}) nor a matrix's "
                           "document (matrix.json)")
    # Plans from before the count was recorded checked pqscope taint's default, two signatures.
    return Plan(data["board"], data["seed"], data["ct_signatures"],
                [find_implementation(catalogue, row["scheme"], row["impl"]) for row in data["rows"]],
                [Toolchain.from_json(toolchain) for toolchain in data["toolchains"]],
                data.get("exact_signatures", 2))


class Matrix:
    """Runs the plan's cells at `path` on the board (the virtual board: the exact check needs it),
    `jobs` emulators at a time, telling `say` what it does."""

    def __init__(self, root: Path, path: Path, board: Board, plan: Plan, jobs: int, say: Callable[[str], None]):
        self.root, self.path, self.board, self.plan, self.jobs, self.say = root, path, board, plan, jobs, say
        self.earlier = _earlier_results(path / EARLIER)

    def run(self, keep: Callable[[dict], None] = lambda document: None) -> dict:
        """The matrix's document; `keep` gets it as it stands before each test on timing (a day's
        run can be read while it goes on: "complete" false, untested cells without a confirmation)."""
        started = time.monotonic()
        images = self._build()
        same_as = self._same_code(images)
        building = round(time.monotonic() - started)
        checked = [cell for cell in self.plan.cells if isinstance(images[cell.key], Path) and cell.key not in same_as]
        with ThreadPoolExecutor(self.jobs) as pool:
            budgets = self._budgets(pool, [cell for cell in checked if cell.toolchain.is_default], images)
            summaries = dict(zip((cell.key for cell in checked), pool.map(lambda cell: self._exact_check(
                cell, images[cell.key], budgets.get(cell.key[:2], DEFAULT_BUDGET)), checked)))
        checking = round(time.monotonic() - started) - building
        for cell in checked:
            default = summaries.get((cell.row.scheme, cell.row.impl, DEFAULT_TOOLCHAIN.compiler, DEFAULT_TOOLCHAIN.opt))
            summaries[cell.key]["expected"] = bool(default and default["status"] == "leak")

        def summary(cell: Cell) -> dict:
            if cell.key in same_as:
                return {**summaries[same_as[cell.key]], "same_code_as": list(same_as[cell.key][2:])}
            if not isinstance(images[cell.key], Path):
                return {"status": "build-failed", "error": images[cell.key]}
            return summaries[cell.key]

        def document(complete: bool) -> dict:
            # This invocation's seconds (a resume reads finished cells back).
            seconds = {"builds": building, "exact_checks": checking,
                       "timing_tests": round(time.monotonic() - started) - building - checking}
            return {**self.plan.to_json(), "board": self.board.name, "seconds": seconds, "complete": complete,
                    "cells": [{"scheme": cell.row.scheme, "impl": cell.row.impl, **cell.toolchain.to_json(),
                               **summary(cell)} for cell in self.plan.cells]}

        unexpected = [cell for cell in checked if summaries[cell.key]["status"] == "leak"
                      and not summaries[cell.key]["expected"]] if self.plan.ct_signatures else []
        # Cheapest first: a run stopped early has tested as many cells as its time allowed.
        for cell in sorted(unexpected, key=lambda cell: summaries[cell.key]["sign_cycles"]):
            if "confirmation" not in summaries[cell.key]:
                keep(document(False))
            summaries[cell.key]["confirmation"] = self._confirm(cell, summaries[cell.key])
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

    def _budgets(self, pool: ThreadPoolExecutor, defaults: list[Cell], images: dict[tuple, Path | str]
                 ) -> dict[tuple[str, str], int]:
        """Each row's budget of cycles for a key and a signature: HANG_FACTOR times its default
        build's, measured first (a row without one measured: DEFAULT_BUDGET)."""
        def measured(cell: Cell) -> int | None:
            try:
                return self._signing_cycles(cell, images[cell.key], DEFAULT_BUDGET)
            except PqscopeError:
                return None  # the cell's exact check tries again and says why
        return {cell.key[:2]: HANG_FACTOR * cycles for cell, cycles in zip(defaults, pool.map(measured, defaults))
                if cycles}

    def _signing_cycles(self, cell: Cell, image: Path, budget: int) -> int | None:
        """Cycles of a key and a signature of the plan's seed on the plain emulator, or None when
        the build did not sign within `budget` cycles; measured once (signing.json)."""
        directory = cell.directory(self.path)
        directory.mkdir(parents=True, exist_ok=True)
        if (directory / SIGNING).is_file():
            return json.loads((directory / SIGNING).read_text())["cycles"]
        cycles = self._sign_once(cell, image, budget)
        write_atomically(directory / SIGNING, json.dumps({"budget": budget, "cycles": cycles}) + "\n")
        return cycles

    def _sign_once(self, cell: Cell, image: Path, budget: int) -> int | None:
        """The emulator's cycles from its start to a key and a signature (the harness's own work
        at the build's level included), or None when it ran out of `budget` before."""
        directory = cell.directory(self.path)
        directory.mkdir(parents=True, exist_ok=True)
        target = open_target(self.root, self.board, Link(timeout=TAINT_TIMEOUT, max_cycles=budget))
        try:
            with target.connect(image, Console(quiet=True), stats_dir=directory) as connection:
                connection.session.hello()
                result = connection.session.run_sample(sample_seed(bytes.fromhex(self.plan.seed), 0), MSG_LEN,
                                                       (Op.KEYGEN, Op.SIGN), 0)
        except PqscopeError as error:
            if "cycle limit" in str(error):
                return None
            raise
        if any(sample.status != Status.OK for sample in result.samples):
            raise PqscopeError(f"the build answered {[sample.status.name for sample in result.samples]}")
        return connection.stats["model_cycles"]

    def _exact_check(self, cell: Cell, image: Path, budget: int) -> dict:
        """The cell's summary: read back if done, else from its exact check (resumed where it
        stopped) and a signature's cycles, once the build has signed within its `budget`; kept in
        cell.json unless the check failed (a resume tries it again)."""
        directory = cell.directory(self.path)
        if (directory / CELL).is_file():
            return json.loads((directory / CELL).read_text())
        directory.mkdir(parents=True, exist_ok=True)
        earlier = self.earlier.get(cell.key)
        if earlier is not None and earlier["code_sha256"] == code_digest(image):
            write_atomically(directory / CELL, json.dumps(earlier, indent=2) + "\n")
            return earlier
        taint = directory / "taint"
        try:
            if not (taint / "meta.json").is_file() and self._signing_cycles(cell, image, budget) is None:
                budget = json.loads((directory / SIGNING).read_text())["budget"]
                summary = {"status": "hang", "code_sha256": code_digest(image),
                           "error": f"no key and signature within {budget:,} cycles" + (
                               "" if budget == DEFAULT_BUDGET else f" ({HANG_FACTOR} times the default build's)")}
                write_atomically(directory / CELL, json.dumps(summary, indent=2) + "\n")
                return summary
            self.say(f"exact check: {cell.row.scheme}/{cell.row.impl} with {cell.toolchain.label}")
            if (taint / store.FILES["taint"]).is_file():
                document = store.read(taint / store.FILES["taint"])
            elif (taint / "meta.json").is_file():
                document = self._pqscope(["taint", "--resume", str(taint), "--timeout", str(TAINT_TIMEOUT)])
            else:
                shutil.rmtree(taint, ignore_errors=True)
                document = self._pqscope(["taint", "--board", self.board.name, *cell.options(), "--seed",
                                          self.plan.seed, "-n", str(self.plan.exact_signatures), "--out", str(taint),
                                          "--timeout", str(TAINT_TIMEOUT)])
        except PqscopeError as error:
            return {"status": "failed", "error": str(error)}
        summary = {"status": document["verdict"], "sign_cycles": document["sign_cycles"][0],
                   "code_sha256": code_digest(image),
                   "leaks": _leaks_by_line(document["findings"])}
        write_atomically(directory / CELL, json.dumps(summary, indent=2) + "\n")
        return summary

    def _confirm(self, cell: Cell, summary: dict) -> dict:
        """The statistical test of a leaking cell on its build (fixed against random keys, without
        the exact check), resumed where it stopped; kept in cell.json unless it failed."""
        if "confirmation" in summary:
            return summary["confirmation"]
        directory = cell.directory(self.path)
        ct = directory / "ct"
        self.say(f"constant-time test of {cell.row.scheme}/{cell.row.impl} with {cell.toolchain.label}: up to "
                 f"{self.plan.ct_signatures:,} signatures")
        fresh = ["ct", "--board", self.board.name, *cell.options(), "-n", str(self.plan.ct_signatures), "--no-taint",
                 "--seed", self.plan.seed, "--out", str(ct), "--no-report", "-j", str(self.jobs)]
        try:
            if (ct / store.FILES["ct"]).is_file():
                document = store.read(ct / store.FILES["ct"])
            elif (ct / "meta.json").is_file():
                try:
                    document = self._pqscope(["ct", "--resume", str(ct), "-j", str(self.jobs)])
                except PqscopeError as error:
                    # Refused (the emulator or the build changed since, say): the test starts anew.
                    kept = _set_aside(ct)
                    self.say(f"its test could not go on ({error}): started anew, the signatures so far kept in "
                             f"{kept}")
                    document = self._pqscope(fresh)
            else:
                shutil.rmtree(ct, ignore_errors=True)
                document = self._pqscope(fresh)
        except PqscopeError as error:
            return {"outcome": "failed", "text": str(error)}
        confirmation = _confirmation(document)
        write_atomically(directory / CELL, json.dumps({**summary, "confirmation": confirmation}, indent=2) + "\n")
        return confirmation

    def _pqscope(self, arguments: list[str]) -> dict:
        """A pqscope command on this matrix's checkout, its JSON output."""
        result = subprocess.run([sys.executable, "-m", "pqscope", *arguments, "--json"], capture_output=True,
                                text=True, env={**os.environ, "PQSCOPE_ROOT": str(self.root)})
        if result.returncode != 0:
            lines = result.stderr.strip().splitlines()
            raise PqscopeError(f"pqscope {arguments[0]}: {lines[-1] if lines else f'exit status {result.returncode}'}")
        return json.loads(result.stdout)


def _set_aside(run: Path) -> Path:
    """Moves the run directory `run` to the first free `<name>.unresumable-N` beside it; the new path."""
    number = 1
    while (kept := run.with_name(f"{run.name}.unresumable-{number}")).exists():
        number += 1
    run.rename(kept)
    return kept


def _earlier_results(path: Path) -> dict[tuple, dict]:
    """The definite cells of the matrix document at `path` (none without one), by cell: each cell's
    summary as its own exact check and test on timing left it (a failed test is tried again)."""
    if not path.is_file():
        return {}
    results = {}
    for cell in store.read(path).get("cells", []):  # a plan alone (matrix-plan.json) has none
        if cell["status"] in DEFINITE:
            summary = {name: value for name, value in cell.items() if name not in (
                "scheme", "impl", "compiler", "opt", "same_code_as", "expected")}
            if summary.get("confirmation", {}).get("outcome") == "failed":
                del summary["confirmation"]
            results[(cell["scheme"], cell["impl"], cell["compiler"], cell["opt"])] = summary
    return results


def _leaks_by_line(findings: list[dict]) -> list[dict]:
    """The exact check's leaks, one per kind and source line: its instructions and their
    executions; for branches, whether each went one way every time (one_way)."""
    lines: dict[tuple, dict] = {}
    for finding in findings:
        if finding["leak"]:
            key = (finding["kind"], finding["function"], finding["file"], finding["line"])
            entry = lines.setdefault(key, dict(zip(("kind", "function", "file", "line"), key), instructions=0, count=0,
                                               one_way=True))
            entry["instructions"] += 1
            entry["count"] += finding["count"]
            taken = finding.get("taken")
            entry["one_way"] &= taken is not None and taken in (0, finding["count"])
    return list(lines.values())


def _confirmation(document: dict) -> dict:
    """A leaking cell's statistical test, read as confirming its exact check or bounding the leak."""
    signatures = document["n"]["fixed"] + document["n"]["random"]
    if document["verdict"] == "leak":
        return {"outcome": "confirmed", "signatures": signatures,
                "text": f"confirmed at {signatures:,} signatures ({document['reason']})"}
    bound = document.get("bound") or {}
    share = bound.get("share_of_mean")
    # The sequential test stops at the first of its looks that decides: say how far it could have gone.
    most = (document.get("sequential") or {}).get("looks", [signatures])[-1]
    difference = f" (no key-dependent difference above {share:.3%} of the mean)" if share else ""
    if share == 0:  # both classes took one and the same time in every signature (a deterministic board)
        difference = " (every signature of both classes took the same cycles)"
    text = f"not seen in {signatures:,} signatures" + (f" of up to {most:,}" if most > signatures else "") + difference
    return {"outcome": "not-seen", "signatures": signatures, "bound_share_of_mean": share, "text": text}
