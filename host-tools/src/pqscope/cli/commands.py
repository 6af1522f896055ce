"""The pqscope command line: each command parses its options, hands the work to the runner (or a
check) and shows the result through the views."""

import contextlib
import json
import os
import signal
from dataclasses import asdict
from pathlib import Path

import click
from rich.console import Console
from rich.table import Column, Table

from .. import views
from ..analysis.replay import FLASH_TIMINGS
from ..analysis.taint import EXACT_CHECK_SIGNATURES
from ..jobs import falcon_compare, matrix
from ..jobs.bench import emulator_speed
from ..jobs.modelcheck import run_model_check
from ..jobs.suite import (CT_LEAST_SIGNATURES, CT_SIGNATURES, ct_members, ct_seconds, ct_size, display_name,
                          suite_document)
from ..measure.runner import Measurement, Member, SampleCapture, board_at_clock, new_suite, resumed
from ..project.boards import get_board, load_boards
from ..project.build import build_emulator
from ..project.catalogue import find_implementation, load_catalogue
from ..project.console import stderr, working
from ..project.errors import PqscopeError
from ..project.paths import repo_root
from ..project.toolchain import COMPILERS, OPT_LEVELS, Toolchain
from ..results import store
from ..results.rundir import is_suite, suite_parameters
from ..results.runs import find_runs, load_run, newest_measured_run, runs_document
from ..results.tls import budget_rows, has_sign_and_verify, parse_assignments, resolve_assignment, signer_from_run
from ..targets.target import Link, open_target, target_kind
from ..targets.vboard_serve import DEFAULT_LINK, SerialDeviceServer
from .options import (CLOCK_OPTION, JSON_OPTION, MSG_LEN_OPTION, SEED_OPTION, TOOLCHAIN_OPTIONS, VIRTUAL_BOARD,
                      connection_options, implementation_options, own_implementation, parse_ops, parse_seed,
                      probe_options, refuse_fixed_options, run_directory, runner, select, shard_runner, variant,
                      wide_console)

# What `pqscope run` measures without --scheme: one representative of each family (those the
# catalogue has), Falcon in its three floating-point modes.
DEFAULT_SUITE = (
    ("ml-dsa-44", "m4f"),
    ("falcon-512", "fpnative"), ("falcon-512", "fpemu-c"), ("falcon-512", "fpemu-m4"),
    ("fndsa_provisional-512", "m4f"),
    ("sphincs-sha2-128f-simple", "clean"),
    ("ecdsa-p256", "mbedtls"),
)
TLS_WIDTH = 150  # a mixed assignment's name and every figure of the TLS budget on one line
RESUME_OPTION_HELP = ("Continue an interrupted measurement in this directory to its -n, with its parameters "
                      "(meta.json, or a suite's suite.json), on any boards: -j, --port, --labgrid-place and the other "
                      "connection options may be given again.")


class _OneLineErrors(click.Group):
    """Reports expected failures and usage mistakes as one line on stderr, without a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except PqscopeError as error:
            if error.details:
                click.echo(error.details.rstrip(), err=True)
            raise click.ClickException(str(error)) from None
        except click.UsageError as error:
            if error.ctx is None:
                raise
            # A new error without a context: click prints no usage block for it.
            raise click.UsageError(f"{error.format_message()} (see: {error.ctx.command_path} --help)") from None


@click.group(cls=_OneLineErrors)
@click.version_option(package_name="pqscope")
def cli() -> None:
    """Build, run and measure post-quantum signature firmware on a board or the virtual board."""


def main() -> None:
    cli(prog_name="pqscope")


def _print_json(document: dict) -> None:
    click.echo(json.dumps(document, indent=2))


REPORT_OPTION = click.option("--report/--no-report", "with_report", default=True, show_default=True,
                             help="Write report.md and report.html (`pqscope report --format md|html` prints them "
                                  "later).")


def _show(kind: str, document: dict, as_json: bool) -> None:
    if as_json:
        _print_json(document)
    else:
        views.show(wide_console(), kind, document)


def _keep(path: Path, kind: str, document: dict, with_report: bool) -> Path:
    """Keeps `document` in `path`, and its reports if asked for; returns the HTML report's path."""
    store.save(path, kind, document)
    return views.write_pages(path) if with_report else path / "report.html"


def _resume_option(command):
    return click.option("--resume", "resume_path", type=click.Path(exists=True, file_okay=False, path_type=Path),
                        help=RESUME_OPTION_HELP)(command)


def _measure(ctx: click.Context, measurement: Measurement, connection: dict) -> None:
    """Measures every member not complete yet, on the boards the connection options name; an
    interruption ends the command with status 130, everything captured kept."""
    if _interrupted(measurement, connection):
        ctx.exit(130)


def _interrupted(measurement: Measurement, connection: dict, announce=lambda member: None) -> bool:
    measure = runner if "port" in connection else shard_runner
    return measure(repo_root(), measurement.board, capture=measurement.what, **connection).measure_members(
        measurement.members, measurement.what, announce)


class _Steps:
    """The main job's progress, a line per step: its number, its name and what it will take."""

    def __init__(self, total: int):
        self.total, self.done = total, 0

    def announce(self, text: str) -> None:
        self.done += 1
        stderr().print(f"[{self.done}/{self.total}] {text}", markup=False, highlight=False)


@cli.command()
@implementation_options(board_default=None)
@CLOCK_OPTION
@TOOLCHAIN_OPTIONS
@probe_options
@JSON_OPTION
def build(board_name, scheme, impl, impl_dir, stack_bytes, clock_name, compiler, opt_level, probed, probe_names,
          as_json) -> None:
    """Build one image and check that it fits the board."""
    root = repo_root()
    board, implementation = select(root, board_name, scheme, impl, impl_dir, stack_bytes, clock_name,
                                   Toolchain.parse(compiler, opt_level))
    image = open_target(root, board).image(implementation, stderr(), variant(probed, probe_names))
    if as_json:
        _print_json({"images": [{
            "board": board.name, "scheme": implementation.scheme, "impl": implementation.impl,
            "toolchain": board.toolchain.to_json(), "elf": str(image.elf),
            **asdict(image.size), "stack_bytes": implementation.stack_bytes,
        }]})
    else:
        size = image.size
        click.echo(f"{image.elf}: text {size.text}, data {size.data}, bss {size.bss} bytes; fits {board.name}")


@cli.command()
@JSON_OPTION
def boards(as_json: bool) -> None:
    """List the boards."""
    found = load_boards(repo_root()).values()
    if as_json:
        _print_json({"boards": [board.describe() for board in found]})
        return
    table = Table(Column("board", no_wrap=True), "runs on", "clock", "flash", "ram", "description")
    for board in found:
        table.add_row(board.name, target_kind(board).runs_on(board), f"{board.clock_hz / 1e6:g} MHz",
                      f"{board.flash_bytes // 1024} KiB", f"{board.ram_bytes // 1024} KiB", board.description)
    Console().print(table)


@cli.command()
@JSON_OPTION
def schemes(as_json: bool) -> None:
    """List the scheme implementations of the catalogue."""
    catalogue = load_catalogue(repo_root())
    if as_json:
        _print_json({"schemes": [asdict(row) for row in catalogue]})
        return
    table = Table("scheme", "impl", "family", "pk B", "sk B", "sig B", "stack B", "status")
    for row in catalogue:
        table.add_row(row.scheme, row.impl, row.family, *(f"{n:,}" for n in (row.pk_bytes, row.sk_bytes,
                      row.sig_bytes, row.stack_bytes)), row.status)
    Console().print(table)


def _new_runs(root: Path, board_name, clock_name, built_with, scheme, impl, impl_dir, stack_bytes, out,
              what: SampleCapture, members: tuple[str, ...], ct_signatures: int,
              replay: bool) -> tuple[Path, Measurement]:
    """A new run of one implementation, or of a suite without --scheme and --impl-dir (the
    `members`, SCHEME/IMPL, or the default suite's), its signing then tested for constant time on
    `ct_signatures` (0: not), on a board with its `replay` or not."""
    board = board_at_clock(root, board_name, clock_name, built_with)
    catalogue = load_catalogue(root)
    own = own_implementation(impl_dir, scheme, impl, stack_bytes)
    if own is None and (scheme is None) != (impl is None):
        raise PqscopeError("give both --scheme and --impl, or neither for the default suite")
    if members and (own is not None or scheme is not None):
        raise PqscopeError("--member names the rows of a suite: give it without --scheme, --impl and --impl-dir")
    if own is None and scheme is None:
        path = run_directory(root, out, board, "suite")
        suite = [find_implementation(catalogue, *_member(text)) for text in members] if members else [
            row for row in catalogue if (row.scheme, row.impl) in DEFAULT_SUITE and row.status == "ok"]
        return path, Measurement(board, what, new_suite(path, board, suite, what, ct_signatures=ct_signatures,
                                                        ct_replay=replay))
    only = own or find_implementation(catalogue, scheme, impl)
    path = run_directory(root, out, board, f"{only.scheme}-{only.impl}")
    return path, Measurement(board, what, [Member(only, path)])


def _member(text: str) -> tuple[str, str]:
    scheme, slash, impl = text.partition("/")
    if not (scheme and slash and impl):
        raise PqscopeError(f"--member {text}: give SCHEME/IMPL, e.g. ml-dsa-44/m4f")
    return scheme, impl


@cli.command()
@implementation_options()
@click.option("--ops", "ops_text", default="keygen,sign,verify", show_default=True, help="Operations to report.")
@click.option("-n", "samples", default=10, show_default=True, type=click.IntRange(1, 2**32 - 1), help="Samples.")
@SEED_OPTION
@MSG_LEN_OPTION
@CLOCK_OPTION
@TOOLCHAIN_OPTIONS
@probe_options
@connection_options(timeout=60.0, shards=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Run directory (default: runs/<timestamp>-<board>-<scheme>-<impl>, or -suite).")
@_resume_option
@REPORT_OPTION
@click.option("--member", "members", multiple=True, metavar="SCHEME/IMPL",
              help="A suite of these catalogue rows instead of the default suite's (repeatable).")
@click.option("--ct-n", "ct_signatures", default=CT_SIGNATURES, show_default=True, type=click.IntRange(0),
              help="A suite: the most signatures of each member's constant-time test of signing (fewer for a slow "
                   "signing), beside the exact check on the virtual board (0: no test).")
@click.option("--replay/--no-replay", "replay", default=True, show_default=True,
              help="A suite on a real board: replay each constant-time test on the virtual board beside it (see ct).")
@JSON_OPTION
@click.pass_context
def run(ctx: click.Context, board_name, scheme, impl, impl_dir, stack_bytes, ops_text, samples, seed, msg_len,
        clock_name, compiler, opt_level, probed, probe_names, out, resume_path, with_report, members, ct_signatures, replay, as_json,
        **connection) -> None:
    """Measure an implementation, or the default suite: build, run samples on the board (or boards:
    the samples are dealt to them), save and report. The default suite then tests each member's
    signing for constant time and writes one report of it all: cycles, stack, variance, verdicts
    and Falcon's floating-point modes compared."""
    root = repo_root()
    if 0 < ct_signatures < CT_LEAST_SIGNATURES:
        raise PqscopeError(f"--ct-n is 0 (no constant-time test) or at least {CT_LEAST_SIGNATURES}")
    if resume_path is not None:
        refuse_fixed_options(ctx)
        path, measurement = resume_path, resumed(root, resume_path, SampleCapture)
    else:
        what = SampleCapture(parse_ops(ops_text), samples, parse_seed(seed), msg_len,
                             variant=variant(probed, probe_names))
        path, measurement = _new_runs(root, board_name, clock_name, Toolchain.parse(compiler, opt_level), scheme, impl,
                                      impl_dir, stack_bytes, out, what,
                                      members, ct_signatures, replay)
    manifest = suite_parameters(path) if is_suite(path) else {}
    if connection["jobs"] is None and not connection["ports"] and not connection["places"] and not manifest:
        connection["jobs"] = 1  # one board unless asked: a run of a few samples is not worth an emulator per core
    tested = manifest.get("ct_signatures", 0)
    steps = _Steps(sum(not member.complete for member in measurement.members)
                   + (sum(not member.complete for member in ct_members(measurement.members)) if tested else 0))
    samples_text = f"{measurement.what.samples} samples of {', '.join(op.label for op in measurement.what.ops)}"
    interrupted = _interrupted(measurement, connection, lambda member: steps.announce(
        f"cycles and stack: {display_name(member.implementation.scheme, member.implementation.impl)}, "
        f"{samples_text}") if manifest else None)
    interrupted = interrupted or (tested > 0 and _constant_time_interrupted(
        measurement, tested, manifest.get("ct_replay", True), connection, steps))
    loaded = [load_run(run_path) for run_path in find_runs(path)]
    kind, document = ("suite", suite_document(path, loaded)) if tested else ("run", runs_document(path, loaded))
    report = None
    if with_report:  # interrupted: what it has
        if tested:
            store.save(path, "suite", document)
        report = views.write_pages(path)
    if interrupted:
        if manifest:
            stderr().print(f"resume the whole suite with `pqscope run --resume {path}`")
        ctx.exit(130)
    _show(kind, document, as_json)
    if report and not as_json:
        stderr().print(f"report: {report}")


def _constant_time_interrupted(measurement: Measurement, signatures: int, replay: bool, connection: dict,
                               steps: _Steps) -> bool:
    """Each suite member's constant-time test of signing (resumed where it stopped), in turn."""
    from ..analysis.ct import CtCapture, constant_time_test  # numpy/scipy statistics: loaded only for the test

    measurement_runner = shard_runner(repo_root(), measurement.board, **connection)
    for run_member, member in zip(measurement.members, ct_members(measurement.members)):
        if member.complete:
            continue
        run = load_run(run_member.path)
        if member.resume_from:
            what = CtCapture.from_meta(member.resume_from)
        else:
            size = ct_size(run, signatures)
            what = constant_time_test(measurement.board, size.signatures, measurement.what.master_seed,
                                      measurement.what.msg_len, replay=replay, random_keys=size.random_keys,
                                      exact_signatures=size.exact_signatures)
        seconds = ct_seconds(run, what.samples, what.random_keys, len(measurement_runner.targets), what.exact_check)
        steps.announce(f"constant-time test: {display_name(member.implementation.scheme, member.implementation.impl)}"
                       f", {what.samples} signatures" + (f" and the exact check of {what.exact_check}"
                                                         if what.exact_check else "")
                       + ("" if seconds is None else f" (about {seconds:,.0f} s)"))
        if measurement_runner.measure(member.implementation, member.path, what, member.resume_from).interrupted:
            return True
    return False


@cli.command("flash")
@click.option("--board", "board_name", required=True)
@click.option("--scheme", required=True)
@click.option("--impl", required=True)
def flash_command(board_name: str, scheme: str, impl: str) -> None:
    """Build an image and flash it onto a real board with OpenOCD (program, verify, reset)."""
    root = repo_root()
    board, implementation = select(root, board_name, scheme, impl)
    target = open_target(root, board)
    elf = target.image(implementation, stderr()).elf
    target.flash(elf, stderr())
    click.echo(f"flashed {elf} onto {board.name}")


@cli.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(views.FORMATS), default="table", show_default=True)
def report(path: Path, fmt: str) -> None:
    """Report any result directory again from what it keeps: a run or suite (from its samples), a
    constant-time test, an exact check, a Falcon comparison or a model check, as a table,
    Markdown, HTML, CSV (runs) or JSON."""
    text = views.render(path, fmt, wide_console())
    if text is not None:
        click.echo(text, nl=False)


@cli.command("tls-budget")
@click.option("--run", "run_paths", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A run directory or suite; repeat for more (default: the newest under runs/).")
@click.option("--assign", "assignments", multiple=True, metavar="ROLE=SCHEME[/IMPL]",
              help="Give a role of a mixed handshake to an implementation; repeatable (see above).")
@click.option("--overhead", "overhead_bytes", default=0, show_default=True, type=click.IntRange(0),
              help="Bytes per handshake besides signatures and public keys (certificate fields, extensions).")
@JSON_OPTION
def tls_budget(run_paths: tuple[Path, ...], assignments: tuple[str, ...], overhead_bytes: int, as_json: bool) -> None:
    """Which signatures a TLS 1.3 handshake affords: its bytes and board cycles, from measured runs.

    A handshake carries six signatures and two public keys: the server's CertificateVerify and its
    leaf public key (role handshake), the two certificate-chain signatures and the intermediate
    public key (chain), an OCSP staple (ocsp) and two SCTs (sct). Bytes count these only (plus
    --overhead) against the 9 kB target and initial congestion windows of 10 and 30 segments of
    1460 bytes; extra round trips are ceil(bytes / window) - 1, ignoring slow start. The client
    verifies the six signatures (not the root's self-signature, which is never sent); the server
    signs CertificateVerify. Sizes are those the firmware reported, cycles the runs' medians,
    milliseconds at the run's clock.

    Each run gives a row with its implementation in every role. --assign adds a mixed row:

    \b
      --assign handshake=ml-dsa-44/m4f --assign chain=falcon-512/fpemu-m4 --assign ocsp+sct=ecdsa-p256

    ROLE is handshake, chain, ocsp or sct (join several with +); roles not given take the
    handshake's. SCHEME/IMPL must have a run among the runs; a bare SCHEME takes its run, or if it
    has none the catalogue's sizes, with its cycles unavailable.
    """
    assigned = parse_assignments(assignments)
    if run_paths:
        loaded = [load_run(run_path) for path in run_paths for run_path in find_runs(path)]
    else:
        path, loaded = newest_measured_run(repo_root() / "runs", has_sign_and_verify)
        stderr().print(f"runs from {path} (the newest with sign and verify samples; --run chooses others)")
    signers = [signer_from_run(run) for run in loaded]
    rows = budget_rows(signers, resolve_assignment(assigned, signers, lambda: load_catalogue(repo_root())),
                       overhead_bytes)
    if as_json:
        _print_json({"rows": rows})
    else:
        views.runs.show_tls_budget(Console(width=max(Console().width, TLS_WIDTH)), rows)


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
@_resume_option
@JSON_OPTION
@click.option("--taint/--no-taint", "taint_check", default=None,
              help="Run the exact check (pqscope taint, 2 signatures) before the statistics, and decide the verdict on "
                   "both (default: on the virtual board, and in a real board's replay).")
@click.option("--replay/--no-replay", "replay", default=True, show_default=True,
              help="On a real board: replay every signature on the virtual board beside it (same image and seeds), "
                   "regress its model cycles out of the board's, and test each exact-check finding on the board.")
@click.option("--replay-flash-timing", type=click.Choice(FLASH_TIMINGS), default="modelled", show_default=True,
              help="How the replay prices flash: as the image configures it, or free (the 24 MHz model of an image "
                   "built for 168 MHz: a predictor without the flash accelerator, e.g. beside a stand-in board).")
@REPORT_OPTION
@click.pass_context
def ct_command(ctx: click.Context, board_name, scheme, impl, impl_dir, stack_bytes, samples, fixed_n, bound_percent,
               seed, msg_len, clock_name, compiler, opt_level, key_refresh, probed, probe_names, out, resume_path, as_json, taint_check,
               replay, replay_flash_timing, with_report, **connection) -> None:
    """Test whether signing time depends on a secret: the long-term key by statistics (fixed vs random
    keys, dudect style), and on the virtual board every secret (the key, the signing randomness and
    everything derived from them) by the exact check first. Either's leak is a leak; on the virtual
    board a clean exact check decides no-leak unless the statistics find one. On a real board every
    signature is replayed on the virtual board beside it: the model's cycles leave the statistics,
    and each finding of the exact check is tested on the board."""
    from ..analysis.ct import CtCapture  # numpy/scipy statistics and matplotlib: loaded only for this test
    from ..analysis.ct import constant_time_test

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
                                  replay_flash_timing=replay_flash_timing, key_refresh=key_refresh,
                                  variant=variant(probed, probe_names), fixed_n=fixed_n,
                                  bound=None if bound_percent is None else bound_percent / 100)
        measurement = Measurement(board, what, [Member(implementation, path)])
    measurement.what.reports = with_report
    _measure(ctx, measurement, connection)
    _show("ct", store.load(path)[1], as_json)
    if not as_json and with_report:
        stderr().print(f"report: {path / 'report.html'}")


@cli.command("taint")
@implementation_options()
@click.option("-n", "signatures", default=EXACT_CHECK_SIGNATURES, show_default=True, type=click.IntRange(1, 10_000),
              help="Signatures, each with a key of its own: each one's path is checked.")
@SEED_OPTION
@MSG_LEN_OPTION
@TOOLCHAIN_OPTIONS
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Directory for taint.json (default: runs/<timestamp>-<board>-<scheme>-<impl>-taint).")
@click.option("--timeout", default=600.0, show_default=True, type=click.FloatRange(0, min_open=True),
              help="Seconds to wait for each record: tracking every instruction makes an RSA key generation take "
                   "minutes.")
@_resume_option
@JSON_OPTION
@click.pass_context
def taint_command(ctx: click.Context, board_name, scheme, impl, impl_dir, stack_bytes, signatures, seed, msg_len,
                  compiler, opt_level, out, timeout, resume_path, as_json) -> None:
    """Check signing exactly on the virtual board: every executed instruction whose time can depend on a secret
    (the key, the signing randomness, anything derived from them)."""
    from ..analysis.taint import TaintCapture

    root = repo_root()
    if resume_path is not None:
        refuse_fixed_options(ctx)
        path, measurement = resume_path, resumed(root, resume_path, TaintCapture)
    else:
        board, implementation = select(root, board_name, scheme, impl, impl_dir, stack_bytes,
                                       built_with=Toolchain.parse(compiler, opt_level))
        path = run_directory(root, out, board, f"{implementation.scheme}-{implementation.impl}-taint")
        measurement = Measurement(board, TaintCapture(signatures, parse_seed(seed), msg_len),
                                  [Member(implementation, path)])
    _measure(ctx, measurement, {"port": None, "baud": None, "timeout": timeout, "flash": False})
    _show("taint", store.load(path)[1], as_json)
    if not as_json:
        stderr().print(f"findings: {path / 'taint.json'}")


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
    store.save(path, "compare-falcon", document)
    report_path = views.write_pages(path)
    _show("compare-falcon", document, as_json)
    if not as_json:
        stderr().print(f"report: {report_path}")


@cli.command("matrix")
@click.option("--row", "rows", multiple=True, metavar="SCHEME/IMPL",
              help="A catalogue row (repeatable; default: every ML-DSA, FN-DSA and Falcon row and "
                   "SPHINCS+-SHA2/SHAKE-128f).")
@click.option("--compiler", "compilers", multiple=True, type=click.Choice(COMPILERS),
              help="A compiler (repeatable; default: all).")
@click.option("--opt", "levels", multiple=True, metavar="LEVEL",
              help=f"An optimisation level (repeatable; default: all of {', '.join(OPT_LEVELS)}).")
@SEED_OPTION
@click.option("--ct-n", "ct_signatures", default=matrix.CT_SIGNATURES, show_default=True, type=click.IntRange(0),
              help="The most signatures of the statistical test of each cell that leaks where its row's default build "
                   "does not (0: none).")
@click.option("--taint-n", "exact_signatures", default=matrix.EXACT_SIGNATURES, show_default=True,
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
@click.pass_context
def matrix_command(ctx: click.Context, rows, compilers, levels, seed, ct_signatures, exact_signatures, jobs, out,
                   resume_path, with_report, as_json) -> None:
    """Is constant time a property of the binary? The exact check of catalogue rows built by each compiler at
    each optimisation level (each build in a tree of its own), on the virtual board, one emulator per core; then
    each cell that leaks where its row's default build (gcc12 at the catalogue's flags) does not is tested on
    timing on that build (fixed against random keys), which confirms it or bounds it. Prints a matrix per
    compiler: verdicts, cycles of signing and the leaking instructions with their source lines."""
    root = repo_root()
    catalogue = load_catalogue(root)
    if resume_path is not None:
        refuse_fixed_options(ctx, allowed=() if resume_path.is_dir() else ("out",))
        plan = matrix.resumed_plan(resume_path, catalogue)
        path = resume_path
        if not resume_path.is_dir():
            path = run_directory(root, out, get_board(root, plan.board), "matrix")
            matrix.start(path, plan, earlier=resume_path)
    else:
        chosen = [find_implementation(catalogue, *_member(text)) for text in rows] or matrix.default_rows(catalogue)
        plan = matrix.Plan(VIRTUAL_BOARD, parse_seed(seed).hex(), ct_signatures, chosen,
                           matrix.toolchains(compilers, levels), exact_signatures)
        path = run_directory(root, out, get_board(root, VIRTUAL_BOARD), "matrix")
        matrix.start(path, plan)
    stderr().print(f"matrix: {len(plan.rows)} rows x {len(plan.toolchains)} builds in {path}")
    document = matrix.Matrix(root, path, get_board(root, plan.board), plan, jobs or os.cpu_count() or 1,
                             lambda text: stderr().print(text, markup=False, highlight=False)).run(
        keep=lambda so_far: _keep(path, "matrix", so_far, with_report))
    report = _keep(path, "matrix", document, with_report)
    _show("matrix", document, as_json)
    if with_report and not as_json:
        stderr().print(f"report: {report}")


@cli.command("model-check")
@click.option("--board", "board_name", default=VIRTUAL_BOARD, show_default=True)
@connection_options(timeout=30.0)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the board's output and model-check.json (default: "
                   "runs/<timestamp>-<board>-model-check).")
@JSON_OPTION
@click.pass_context
def model_check(ctx: click.Context, board_name, out, as_json, **connection) -> None:
    """Time the virtual board's micro-benchmarks (tests/vboard/trm_bench.S) on a board against the
    cycles its timing model prices them at, and published measurements on silicon.

    On a Discovery board, the sequences that do not take what the model says are where the model is
    wrong; on the virtual board, every one must. Exit status 1 when any departs from the model."""
    root = repo_root()
    board = get_board(root, board_name)
    path = run_directory(root, out, board, "model-check")
    document = run_model_check(root, open_target(root, board, Link(**connection)), stderr(), connection["timeout"],
                               path).to_json()
    views.write_pages(path)
    _show("model-check", document, as_json)
    if not as_json:
        stderr().print(f"results: {path / 'model-check.json'}")
    if document["departures"]:
        ctx.exit(1)


@cli.command("vboard-serve")
@click.option("--link", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_LINK, show_default=True,
              help="Where the board's serial device (a pty) appears; its flash socket is beside it (PATH.flash).")
@click.option("--flash-timing", type=click.Choice(FLASH_TIMINGS), default="modelled", show_default=True,
              help="free: flash fetches cost nothing at any wait states, which runs an image built for 168 MHz "
                   "several times faster (for tests of function; its cycle counts are not a board's).")
@click.option("--without-hse", is_flag=True, help="Start the board without its HSE (see `run --without-hse`).")
def vboard_serve(link: Path, flash_timing: str, without_hse: bool) -> None:
    """Serve the virtual board as a serial device until Ctrl-C, for tools that flash and read a board
    themselves: pqm4's test.py, testvectors.py and benchmarks.py with host-tools/flashers on PATH, e.g.

    \b
    host-tools/pqscope vboard-serve &
    PATH=$PWD/host-tools/flashers:$PATH python3 test.py -p stm32f4discovery -u /tmp/pqscope-vboard ml-dsa-44

    Each flash (host-tools/flashers/st-flash, as pqm4 calls st-flash) starts the board afresh on the image."""
    with working(stderr(), "building the emulator"):
        emulator = build_emulator(repo_root())
    args = ("--flash-timing", flash_timing, *(("--hse", "absent") if without_hse else ()))
    server = SerialDeviceServer(emulator, link.absolute(), args, log=stderr().print)
    signal.signal(signal.SIGTERM, lambda *_: server.stop())
    with contextlib.suppress(KeyboardInterrupt):
        server.serve()


@cli.command("vboard-bench")
@JSON_OPTION
def vboard_bench(as_json: bool) -> None:
    """Measure the emulator's speed (model cycles per second) on signing workloads."""
    _show("vboard-bench", emulator_speed(repo_root(), VIRTUAL_BOARD), as_json)
