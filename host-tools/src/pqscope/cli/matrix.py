"""pqscope matrix: the exact check of catalogue rows across compilers and optimisation levels
(jobs/matrix.py)."""

import os
from pathlib import Path

import click

from .. import views
from ..jobs import matrix, matrix_plan
from ..project.boards import get_board
from ..project.catalogue import find_implementation, load_catalogue
from ..project.console import stderr
from ..project.paths import repo_root
from ..project.toolchain import COMPILERS, OPT_LEVELS
from ..results import store
from ..results.documents.matrix import MatrixDocument
from ..views.ci import of_matrix
from .app import cli, end_with_verdict, show
from .ci_outputs import ci_output_options, report_to_ci
from .options import (JSON_OPTION, REPORT_OPTION, SEED_OPTION, VIRTUAL_BOARD, parse_member, parse_seed,
                      refuse_fixed_options, run_directory)


@cli.command("matrix")
@click.option("--row", "rows", multiple=True, metavar="SCHEME/IMPL",
              help="A catalogue row (repeatable; default: every ML-DSA, FN-DSA and Falcon row and "
                   "SPHINCS+-SHA2/SHAKE-128f).")
@click.option("--compiler", "compilers", multiple=True, type=click.Choice(COMPILERS),
              help="A compiler (repeatable; default: all).")
@click.option("--opt", "levels", multiple=True, metavar="LEVEL",
              help=f"An optimisation level (repeatable; default: all of {', '.join(OPT_LEVELS)}).")
@SEED_OPTION
@click.option("--ct-n", "ct_signatures", default=matrix_plan.CT_SIGNATURES, show_default=True,
              type=click.IntRange(0),
              help="The most signatures of the statistical test of each cell that leaks where its row's default build "
                   "does not (0: none).")
@click.option("--taint-n", "exact_signatures", default=matrix_plan.EXACT_SIGNATURES, show_default=True,
              type=click.IntRange(1, 100),
              help="Signatures of each cell's exact check, each with a key of its own (the same seeds in every cell).")
@click.option("-j", "--jobs", type=click.IntRange(1), help="Emulators at a time (default: one per core).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Directory (default: runs/<timestamp>-virtual-matrix).")
@click.option("--resume", "resume_path", type=click.Path(exists=True, path_type=Path),
              help="Go on with the matrix in this directory (finished cells are read back), or from this matrix "
                   "document (matrix.json) in a new directory: each cell whose build has the same code takes the "
                   "document's results.")
@REPORT_OPTION
@JSON_OPTION
@ci_output_options
@click.pass_context
def matrix_command(ctx: click.Context, rows, compilers, levels, seed, ct_signatures, exact_signatures, jobs, out,
                   resume_path, with_report, as_json) -> None:
    """Is constant time a property of the binary? The exact check of catalogue rows built by each compiler at
    each optimisation level (each build in a tree of its own), on the virtual board, one emulator per core; then
    each cell that leaks where its row's default build (gcc12 at the catalogue's flags) does not is tested on
    timing on that build (fixed against random keys), which confirms it or bounds it. Prints a matrix per
    compiler: verdicts, cycles of signing and the leaking instructions with their source lines. Exit status: 0 no
    build leaks, 4 one does (its row's default build too or not), 5 none does but one has no verdict."""
    root = repo_root()
    catalogue = load_catalogue(root)
    if resume_path is not None:
        refuse_fixed_options(ctx, allowed=() if resume_path.is_dir() else ("out",))
        plan = matrix_plan.resumed_plan(resume_path, catalogue)
        path = resume_path
        if not resume_path.is_dir():
            path = run_directory(root, out, get_board(root, plan.board), "matrix")
            matrix_plan.start(path, plan, earlier=resume_path)
    else:
        chosen = ([find_implementation(catalogue, *parse_member(text)) for text in rows]
                  or matrix_plan.default_rows(catalogue))
        plan = matrix_plan.Plan(VIRTUAL_BOARD, parse_seed(seed).hex(), ct_signatures, chosen,
                                matrix_plan.toolchains(compilers, levels), exact_signatures)
        path = run_directory(root, out, get_board(root, VIRTUAL_BOARD), "matrix")
        matrix_plan.start(path, plan)
    stderr().print(f"matrix: {len(plan.rows)} rows x {len(plan.toolchains)} builds in {path}")
    document = matrix.Matrix(root, path, get_board(root, plan.board), plan, jobs or os.cpu_count() or 1,
                             lambda text: stderr().print(text, markup=False, highlight=False)).run(
        keep=lambda so_far: _keep(path, "matrix", so_far.to_json(), with_report))
    report = _keep(path, "matrix", document.to_json(), with_report)
    show("matrix", document, as_json)
    if with_report and not as_json:
        stderr().print(f"report: {report}")
    report_to_ci(ctx, "matrix", of_matrix(document))
    end_with_verdict(ctx, gate_verdict(document))


def gate_verdict(document: MatrixDocument) -> str:
    """The matrix's verdict as a CI gate: a leak if any build leaks, where its row's default build
    leaks too (still a leaking binary); else inconclusive if any build that compiled has no verdict
    (no signature within its budget, a check that failed); else no leak. A build the compiler
    refuses is no binary to gate: the matrix names it."""
    statuses = {cell.result.status for cell in document.cells}
    if "leak" in statuses:
        return "leak"
    return "inconclusive" if statuses - {"no-leak", "build-failed"} else "no-leak"


def _keep(path: Path, kind: str, document: dict, with_report: bool) -> Path:
    """Keeps `document` in `path`, and its reports if asked for; returns the HTML report's path."""
    store.save(path, kind, document)
    return views.write_pages(path) if with_report else path / "report.html"
