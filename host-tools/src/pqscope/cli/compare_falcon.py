"""pqscope compare-falcon: Falcon's floating-point modes side by side (jobs/falcon_compare.py)."""

from pathlib import Path

import click

from .. import views
from ..jobs import falcon_compare
from ..project.boards import get_board
from ..project.catalogue import load_catalogue
from ..project.console import stderr
from ..project.paths import repo_root
from ..results import store
from .app import cli, show
from .options import JSON_OPTION, VIRTUAL_BOARD, connection_options, parse_seed, run_directory, runner


@cli.command("compare-falcon")
@click.option("--board", "board_name", default=VIRTUAL_BOARD, show_default=True)
@click.option("--scheme", default="falcon-512", show_default=True, type=click.Choice(falcon_compare.SCHEMES))
@click.option("-n", "samples", default=10, show_default=True, type=click.IntRange(1, 2**32 - 1),
              help="Key generation/signing/verification samples per mode.")
@click.option("--ct-n", "ct_samples", default=200, show_default=True, type=click.IntRange(20, 2**31 - 1),
              help="Signatures of each mode's constant-time test (on a board, a no-leak needs 2000 or more).")
@click.option("--fp-ct-n", "fp_ct_samples", default=400, show_default=True, type=click.IntRange(20, 2**31 - 1),
              help="Signatures of each FP operation's constant-time test, per mode (on a board, a no-leak needs 2000 "
                   "or more).")
@click.option("--seed", help="Master seed in hex (default: random; recorded in each part's meta.json).")
@connection_options(timeout=120.0)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Directory (default: runs/<timestamp>-<board>-compare-<scheme>).")
@JSON_OPTION
def compare_falcon(board_name, scheme, samples, ct_samples, fp_ct_samples, seed, out, as_json, **connection) -> None:
    """Falcon's three FP modes side by side: cycles, stack, constant-time verdicts with
    localisation, each FP primitive's cost and verdict, and the price of constant time.

    On the virtual board the exact check beside every test decides each mode and operation at the
    defaults (docs/pages/statistics.md gives the time they take)."""
    root = repo_root()
    board = get_board(root, board_name)
    steps = falcon_compare.RunnerSteps(runner(root, board, **connection), parse_seed(seed), samples)
    path = run_directory(root, out, board, f"compare-{scheme}")
    document = falcon_compare.run_comparison(load_catalogue(root), scheme, board.name, path, steps,
                                             ct_samples=ct_samples, fp_ct_samples=fp_ct_samples)
    store.save(path, "compare-falcon", document.to_json())
    report_path = views.write_pages(path)
    show("compare-falcon", document, as_json)
    if not as_json:
        stderr().print(f"report: {report_path}")
