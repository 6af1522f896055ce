"""pqscope ct: whether signing time depends on a secret, by statistics and the exact check."""

from pathlib import Path

import click

from ..measure.measurement import Measurement, Member, resumed
from ..project.console import stderr
from ..project.paths import repo_root
from ..project.toolchain import Toolchain
from ..results import store
from ..results.documents.replay import FLASH_TIMINGS
from ..views.ci import load_ct
from .app import cli, end_with_verdict, measure, show
from .ci_outputs import ci_output_options, report_to_ci
from .options import (CLOCK_OPTION, JSON_OPTION, MSG_LEN_OPTION, REPORT_OPTION, SEED_OPTION, TOOLCHAIN_OPTIONS,
                      connection_options, implementation_options, parse_seed, probe_options, refuse_fixed_options,
                      resume_option, run_directory, select, variant)


@cli.command("ct")
@implementation_options()
@click.option("-n", "samples", default=2000, show_default=True, type=click.IntRange(20, 2**31 - 1),
              help="Most signatures: pairs of one fixed-key and one random-key signature, in random order. The "
                   "test stops at the first look (100, 200, 400, ... signatures) whose verdict is definite.")
@click.option("--fixed-n", is_flag=True, help="Always take all -n signatures (no early stop).")
@click.option("--bound", "bound_percent", type=click.FloatRange(0, min_open=True), metavar="PERCENT",
              help="Run until no leak larger than PERCENT of the mean signing time is shown (95% confidence), or -n.")
@SEED_OPTION
@MSG_LEN_OPTION
@CLOCK_OPTION
@TOOLCHAIN_OPTIONS
@click.option("--key-refresh", default=0, show_default=True, type=click.IntRange(0),
              help="Regenerate a random key after this many uses (0: keep the pool's keys).")
@probe_options
@connection_options(timeout=120.0, shards=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Run directory (default: runs/<timestamp>-<board>-<scheme>-<impl>-ct).")
@resume_option
@JSON_OPTION
@click.option("--taint/--no-taint", "taint_check", default=None,
              help="Run the exact check (pqscope taint, 2 signatures; the first alone where it took over 1 G model "
                   "cycles) before the statistics' first look (beside them where it changes nothing they record), and "
                   "decide the verdict on both (default: on the virtual board, and in a real board's replay).")
@click.option("--other-clocks/--no-other-clocks", default=True, show_default=True,
              help="With the exact check: run it at the board's slowest and fastest clocks too, where the test runs at "
                   "another, and give their verdicts beside the test's (a benchmark's clock and a product's).")
@click.option("--replay/--no-replay", "replay", default=True, show_default=True,
              help="On a real board: replay every signature on the virtual board beside it (same image and seeds), "
                   "regress its model cycles out of the board's, and test each exact-check finding on the board.")
@click.option("--replay-flash-timing", type=click.Choice(FLASH_TIMINGS), default="modelled", show_default=True,
              help="How the replay prices flash: as the image configures it, or free (the 24 MHz model of an image "
                   "built for 168 MHz: a predictor without the flash accelerator, e.g. beside a stand-in board).")
@REPORT_OPTION
@ci_output_options
@click.pass_context
def ct_command(ctx: click.Context, board_name, scheme, impl, impl_dir, stack_bytes, samples, fixed_n, bound_percent,
               seed, msg_len, clock_name, compiler, opt_level, key_refresh, probed, probe_names, out, resume_path,
               as_json, taint_check, other_clocks, replay, replay_flash_timing, with_report, **connection) -> None:
    """Test whether signing time depends on a secret: the long-term key by statistics (fixed vs random
    keys, dudect style), and on the virtual board every secret (the key, the signing randomness and
    everything derived from them) by the exact check first. Either's leak is a leak; on the virtual
    board a clean exact check decides no-leak unless the statistics find one. On a real board every
    signature is replayed on the virtual board beside it: the model's cycles leave the statistics,
    and each finding of the exact check is tested on the board. Exit status: 0 no leak, 4 a leak, 5 inconclusive."""
    from ..analysis.ct import CtCapture  # numpy/scipy statistics and matplotlib: loaded only for this test
    from ..analysis.ct_plan import constant_time_test

    root = repo_root()
    if resume_path is not None:
        refuse_fixed_options(ctx)
        path, measurement = resume_path, resumed(root, resume_path, CtCapture)
    else:
        board, implementation = select(root, board_name, scheme, impl, impl_dir, stack_bytes, clock_name,
                                       Toolchain.parse(compiler, opt_level))
        path = run_directory(root, out, board, f"{implementation.scheme}-{implementation.impl}-ct")
        # The virtual board is the model: only a real board's test is replayed.
        what = constant_time_test(board, samples, parse_seed(seed), msg_len, taint_check=taint_check, replay=replay,
                                  at_other_clocks=other_clocks,
                                  replay_flash_timing=replay_flash_timing, key_refresh=key_refresh,
                                  variant=variant(probed, probe_names), fixed_n=fixed_n,
                                  bound=None if bound_percent is None else bound_percent / 100)
        measurement = Measurement(board, what, [Member(implementation, path)])
    measurement.what.reports = with_report
    measure(ctx, measurement, connection)
    document = store.load(path)[1]
    show("ct", document, as_json)
    if not as_json and with_report:
        stderr().print(f"report: {path / 'report.html'}")
    report_to_ci(ctx, "ct", [load_ct(path)])
    end_with_verdict(ctx, document.verdict)
