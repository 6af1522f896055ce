"""Builds differ only in their compiler: one row built by each of pqscope's compilers
(--compiler) computes exactly what the GCC 12 build computes (its transcript digest, SHA3-256 of
pk || sk || msg || sig, for fixed seeds), from code that is really another compiler's, with the
same flags; and `pqscope matrix` checks each build of a control and its twin exactly, tests on timing
the leak only GCC at -O0 makes (control-wide-shift), and resumes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EMULATOR, IMAGES, ROOT
from pqscope.jobs import matrix
from pqscope.project.boards import get_board
from pqscope.project.catalogue import find_implementation, load_catalogue
from pqscope.project.build import code_digest
from pqscope.results.records import sample_seed
from pqscope.project.console import stderr
from pqscope.link.protocol import Op, Status
from pqscope.targets.target import Link
from pqscope.targets.virtual import VirtualTarget
from pqscope.project.toolchain import COMPILERS

SCHEME, IMPL = "ml-dsa-44", "m4f"  # C and Thumb-2 assembly, as most rows
MASTER_SEED = b"pqscope toolchain vectors"
MESSAGE_LENGTHS = (0, 59)
COMPILER_IDS = {"gcc12": "GNU 12.", "gcc11": "GNU 11.3", "clang": "Clang "}


def _build(compiler: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-m", "pqscope", "build", "--board", "virtual", "--scheme", SCHEME, "--impl", IMPL,
         "--compiler", compiler, "--json"],
        capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=1800)
    assert result.returncode == 0, result.stderr
    image = json.loads(result.stdout)["images"][0]
    assert image["toolchain"] == {"compiler": compiler, "opt": "catalogue"}
    return image


def _digests(elf: Path, stats_dir: Path) -> list[bytes]:
    target = VirtualTarget(ROOT, get_board(ROOT, "virtual"), Link(timeout=600), emulator=EMULATOR)
    stats_dir.mkdir()
    digests = []
    with target.connect(elf, stderr(), stats_dir=stats_dir) as connection:
        connection.session.hello()
        for index, msg_len in enumerate(MESSAGE_LENGTHS):
            result = connection.session.run_sample(sample_seed(MASTER_SEED, index), msg_len,
                                                   (Op.KEYGEN, Op.SIGN, Op.VERIFY), index, digest=True)
            assert [(sample.op, sample.status) for sample in result.samples] == [(op, Status.OK) for op in Op]
            digests.append(result.digest)
    return digests


@pytest.fixture(scope="module")
def builds() -> dict[str, dict]:
    return {compiler: _build(compiler) for compiler in COMPILERS}


def _build_info(elf: str) -> dict:
    # <tree>/images/<scheme>/<impl>.elf -> <tree>/build-info.json
    return json.loads((Path(elf).parents[2] / "build-info.json").read_text())


@pytest.mark.parametrize("compiler", [compiler for compiler in COMPILERS if compiler != "gcc12"])
def test_each_compiler_computes_what_gcc12_computes(compiler, builds, tmp_path):
    reference, other = builds["gcc12"], builds[compiler]
    # Another compiler's code, in a tree of its own ...
    assert Path(other["elf"]).parents[2] != Path(reference["elf"]).parents[2]
    assert code_digest(Path(other["elf"])) != code_digest(Path(reference["elf"]))
    info, reference_info = _build_info(other["elf"]), _build_info(reference["elf"])
    assert info["compiler"].startswith(COMPILER_IDS[compiler])
    assert reference_info["compiler"].startswith(COMPILER_IDS["gcc12"])
    # ... with the same flags and dependencies ...
    assert (info["c_flags"], info["dependencies"]) == (reference_info["c_flags"], reference_info["dependencies"])
    # ... computes the same keys and signatures.
    assert _digests(Path(other["elf"]), tmp_path / compiler) == _digests(Path(reference["elf"]), tmp_path / "gcc12")


def _pqscope(*arguments: str, status: int) -> dict:
    """The command's document (--json); it must exit with `status`."""
    result = subprocess.run([sys.executable, "-m", "pqscope", *arguments, "--json"], capture_output=True, text=True,
                            env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=1800)
    assert result.returncode == status, result.stderr
    return json.loads(result.stdout)


def test_the_matrix_checks_each_build_and_resumes_to_the_same_document(tmp_path):
    out = tmp_path / "matrix"
    # gcc12 alone: the other compilers' trees are the test above's (each new tree costs a configure).
    document = _pqscope("matrix", "--row", "control-branch/leaky", "--row", "control-branch/ct", "--row",
                        "control-wide-shift/leaky", "--compiler", "gcc12", "--opt", "catalogue", "--opt", "O0",
                        "--ct-n", "2000", "--seed", "5", "--out", str(out), "--no-report", status=4)  # a leak
    shifts = {cell["opt"]: cell for cell in document["cells"] if cell["scheme"] == "control-wide-shift"}
    # Branch-free C that GCC at -O0 makes a branch on the secret count, going both ways; tested on
    # timing, as the default build does not leak: the M4 takes as long for either way (the taken
    # branch's refill costs what the two instructions it skips do), so not even a cycle shows.
    assert shifts["catalogue"]["status"] == "no-leak"
    assert (shifts["-O0"]["status"], shifts["-O0"]["expected"]) == ("leak", False)
    assert [(leak["kind"], leak["function"], leak["one_way"]) for leak in shifts["-O0"]["leaks"]] == [
        ("branch", "shift_right", False)]
    confirmation = shifts["-O0"]["confirmation"]
    assert (confirmation["outcome"], confirmation["bound_share_of_mean"]) == ("not-seen", 0), confirmation
    cells = {(cell["impl"], cell["compiler"], cell["opt"]): cell for cell in document["cells"]
             if cell["scheme"] == "control-branch"}
    assert len(cells) == 2 * 2
    for (impl, compiler, opt), cell in cells.items():
        # Every cell decided, with the cycles of its signature; the leaky control leaks in every build (as in
        # its default one: expected), at its secret branch.
        assert cell["status"] == ("leak" if impl == "leaky" else "no-leak"), (impl, compiler, opt, cell)
        assert cell["sign_cycles"] > 0
        if impl == "leaky":
            assert cell["expected"] and {leak["kind"] for leak in cell["leaks"]} == {"branch"}
            assert all(leak["file"].endswith(".c") and leak["line"] > 0 for leak in cell["leaks"])
    # -O0 is other code, and slower (cells of the same code: tests/python/test_matrix.py).
    assert cells[("ct", "gcc12", "-O0")]["code_sha256"] != cells[("ct", "gcc12", "catalogue")]["code_sha256"]
    assert cells[("ct", "gcc12", "-O0")]["sign_cycles"] > cells[("ct", "gcc12", "catalogue")]["sign_cycles"]
    # A resume reads every finished cell back.
    kept = {path: path.stat().st_mtime_ns for path in out.glob("*/*/cell.json")}
    assert len(kept) == 3 * 2
    again = _pqscope("matrix", "--resume", str(out), "--no-report", status=4)
    assert again["cells"] == document["cells"]
    assert {path: path.stat().st_mtime_ns for path in out.glob("*/*/cell.json")} == kept


def test_a_build_that_runs_out_of_its_budget_of_cycles_gives_no_signature(tmp_path):
    """The matrix's hang verdict, on the emulator: a key and a signature within their budget give
    their cycles; the same image stopped by --max-cycles before it signs gives none (the emulator's
    own error, not a lost connection)."""
    row = find_implementation(load_catalogue(ROOT), "control-branch", "ct")
    plan = matrix.Plan("virtual", "05", 0, [row], [matrix.DEFAULT_TOOLCHAIN])
    (cell,) = plan.cells
    checker = matrix.Matrix(ROOT, tmp_path, get_board(ROOT, "virtual"), plan, 1, lambda text: None)
    image = IMAGES / "control-branch" / "ct.elf"
    cycles = checker._sign_once(cell, image, matrix.DEFAULT_BUDGET)
    assert cycles > 0
    assert checker._sign_once(cell, image, cycles // 2) is None

