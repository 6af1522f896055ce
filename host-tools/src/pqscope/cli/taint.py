"""pqscope taint: the exact check of signing on the virtual board."""

from pathlib import Path

import click

from ..analysis.taint import EXACT_CHECK_SIGNATURES
from ..measure.measurement import Measurement, Member, resumed
from ..project.console import stderr
from ..project.paths import repo_root
from ..project.toolchain import Toolchain
from ..results import store
from ..views.ci import of_taint
from .app import cli, end_with_verdict, measure, show
from .ci_outputs import ci_output_options, report_to_ci
from .options import (CLOCK_OPTION, JSON_OPTION, MSG_LEN_OPTION, SEED_OPTION, TOOLCHAIN_OPTIONS, implementation_options,
                      parse_seed, refuse_fixed_options, resume_option, run_directory, select)


@cli.command("taint")
@implementation_options()
@click.option("-n", "signatures", default=EXACT_CHECK_SIGNATURES, show_default=True, type=click.IntRange(1, 10_000),
              help="Signatures, each with a key of its own: each one's path is checked.")
@SEED_OPTION
@MSG_LEN_OPTION
@CLOCK_OPTION
@TOOLCHAIN_OPTIONS
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Directory for taint.json (default: runs/<timestamp>-<board>-<scheme>-<impl>-taint).")
@resume_option
@JSON_OPTION
@ci_output_options
@click.pass_context
def taint_command(ctx: click.Context, board_name, scheme, impl, impl_dir, stack_bytes, signatures, seed, msg_len,
                  clock_name, compiler, opt_level, out, resume_path, as_json) -> None:
    """Check signing exactly on the virtual board: every executed instruction whose time can depend on a secret
    (the key, the signing randomness, anything derived from them), at the clock's timing (--clock fast: a read
    from flash at a secret address is a leak behind the flash wait states and the ART's caches). Exit status: 0 no
    leak, 4 a leak."""
    from ..analysis.taint import TaintCapture

    root = repo_root()
    if resume_path is not None:
        refuse_fixed_options(ctx)
        path, measurement = resume_path, resumed(root, resume_path, TaintCapture)
    else:
        board, implementation = select(root, board_name, scheme, impl, impl_dir, stack_bytes, clock_name,
                                       Toolchain.parse(compiler, opt_level))
        path = run_directory(root, out, board, f"{implementation.scheme}-{implementation.impl}-taint")
        measurement = Measurement(board, TaintCapture(signatures, parse_seed(seed), msg_len),
                                  [Member(implementation, path)])
    # No --timeout: the virtual board's records are awaited without a deadline (targets/virtual.py).
    measure(ctx, measurement, {"port": None, "baud": None, "flash": False})
    document = store.load(path)[1]
    show("taint", document, as_json)
    if not as_json:
        stderr().print(f"findings: {path / 'taint.json'}")
    report_to_ci(ctx, "taint", [of_taint(document)])
    end_with_verdict(ctx, document.verdict)
