"""The pqscope command line."""

import json
import secrets
import shutil
import tempfile
import time
from itertools import zip_longest
from dataclasses import asdict
from pathlib import Path

import click
from rich.console import Console
from rich.table import Column, Table

from . import falcon_compare
from .build import PLAIN, Variant
from .boards import Board, get_board, load_boards
from .catalogue import IMPL_DIR_STACK_BYTES, Implementation, find_implementation, implementation_from_dir, load_catalogue
from .console import stderr
from .errors import PqscopeError
from .paths import repo_root
from .protocol import Op
from .report import (bound_text, csv_text, function_line, html_page, markdown, print_results, print_tls_budget,
                     runs_document, taint_kind, taint_source, taint_what, write_reports)
from .rundir import resume_parameters
from .runner import (Member, Runner, SampleCapture, board_at_clock, new_suite, resumed_board, resumed_implementation,
                     resumed_run, variant_from_json)
from .runs import find_runs, load_run, newest_measured_run
from .targets import Link, VirtualTarget, open_shard_targets, open_target, target_kind
from .tls import budget_rows, has_sign_and_verify, parse_assignments, resolve_assignment, signer_from_run

VIRTUAL_BOARD = "virtual"
TAINT_SIGNATURES = 2  # the exact check's default: each signature's path is checked whole
# What `pqscope run` measures without --scheme: one representative of each family (those the
# catalogue has), Falcon in its three floating-point modes.
DEFAULT_SUITE = (
    ("ml-dsa-44", "m4f"),
    ("falcon-512", "fpnative"), ("falcon-512", "fpemu-c"), ("falcon-512", "fpemu-m4"),
    ("fndsa_provisional-512", "m4f"),
    ("sphincs-sha2-128f-simple", "clean"),
    ("ecdsa-p256", "mbedtls"),
)
# (scheme, impl) pairs vboard-bench measures, when the catalogue has them.
BENCH_IMPLEMENTATIONS = (("ml-dsa-44", "m4f"), ("falcon-512", "fpemu-m4"))
BENCH_SAMPLES = 20
BENCH_MSG_LEN = 32
BENCH_SEED = b"vboard-bench"
RESULTS_WIDTH = 190
TLS_WIDTH = 150  # a mixed assignment's name and every figure of the TLS budget on one line


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


def _wide_console() -> Console:
    """Wide enough that no figure is cut off, even when the output is not a terminal."""
    return Console(width=max(Console().width, RESULTS_WIDTH))


def _board(root: Path, board_name: str, clock_name: str | None) -> Board:
    return board_at_clock(root, board_name, clock_name)


def _own_implementation(impl_dir: Path | None, scheme: str | None, impl: str | None,
                        stack_bytes: int | None) -> Implementation | None:
    """The --impl-dir implementation, if one is given; --stack-bytes sizes only that one's stack."""
    if impl_dir is None:
        if stack_bytes is not None:
            raise PqscopeError("--stack-bytes sizes the stack of your own implementation (--impl-dir); a catalogue "
                               "row reserves its own (catalogue.json \"stack_bytes\")")
        return None
    return implementation_from_dir(impl_dir, scheme, impl, stack_bytes)


def _select(root: Path, board_name: str, scheme: str | None, impl: str | None,
            impl_dir: Path | None = None, clock_name: str | None = None,
            stack_bytes: int | None = None) -> tuple[Board, Implementation]:
    board = _board(root, board_name, clock_name)
    own = _own_implementation(impl_dir, scheme, impl, stack_bytes)
    if own is not None:
        return board, own
    if scheme is None or impl is None:
        raise PqscopeError("give --scheme and --impl (or --impl-dir with your own implementation)")
    return board, find_implementation(load_catalogue(root), scheme, impl)


# Options several commands share.
CLOCK_OPTION = click.option(
    "--clock", "clock_name", help="The board's clock the image is built for and measured at (board.json \"clocks\"): "
                                  "benchmark (24 MHz, 0 flash wait states; the default) or fast (168 MHz, 5 wait states "
                                  "behind the ART accelerator).")
JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
SEED_OPTION = click.option("--seed", help="Master seed in hex (default: random; recorded in meta.json).")
MSG_LEN_OPTION = click.option("--msg-len", default=32, show_default=True, type=click.IntRange(0, 0xFFFF))
IMPL_DIR_OPTION = click.option(
    "--impl-dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Your own implementation: a directory with the pqm4/NIST signature API (api.h); "
         "--scheme/--impl name it (default: its parent's and its own name).")
STACK_BYTES_OPTION = click.option(
    "--stack-bytes", type=click.IntRange(1024), metavar="BYTES",
    help=f"The stack to reserve for --impl-dir's implementation at link time (default {IMPL_DIR_STACK_BYTES}); an "
         "image whose data, bss and stack exceed the board's RAM is refused.")


def _probe_options(command):
    """--probes and --probe NAME: measure with the probed image (a Variant passed as `variant`)."""
    command = click.option(
        "--probe", "probe_names", multiple=True, metavar="NAME",
        help="Also probe function NAME (repeatable; implies --probes). It must be called across object files: "
             "static or inlined functions cannot be probed.")(command)
    command = click.option(
        "--probes", "probed", is_flag=True,
        help="Use the probed image: the device times the functions its catalogue row names (retry_function, "
             "public_functions, probes) and --probe NAMEs, as a real board can; on the virtual board they replace "
             "the profiler.")(command)
    return command


def _variant(probed: bool, probe_names: tuple[str, ...]) -> Variant:
    return Variant(True, tuple(dict.fromkeys(probe_names))) if probed or probe_names else PLAIN


def _connection_options(timeout: float, *, shards: bool = False):
    """--port, --baud, --timeout and --flash: how a command reaches a real board (a Link); with
    `shards`, also -j and --adapter-serial, and --port may be given once per board."""
    port = (click.option("--port", "ports", multiple=True, help="Serial port or pyserial URL of a real board; once "
                         "per board to shard the measurement across several.") if shards else
            click.option("--port", help="Serial port or pyserial URL of a real board."))
    sharding = (
        click.option("-j", "--jobs", type=click.IntRange(1), help="Shards, each measured by a board of its own "
                     "(default: an emulator per core on the virtual board, a board per --port otherwise); the "
                     "result does not depend on it."),
        click.option("--adapter-serial", "adapters", multiple=True, help="Serial number of the debug probe of each "
                     "--port's board, in the same order, to flash several boards."),
        click.option("--labgrid-place", "places", multiple=True, envvar="LG_PLACE", help="A labgrid place holding "
                     "a board of --board's kind, acquired for the measurement; once per place to shard across them."),
        click.option("--labgrid-coordinator", "coordinator", envvar="LG_COORDINATOR", metavar="HOST:PORT",
                     help="The labgrid coordinator (default: labgrid's)."),
    ) if shards else ()
    options = (
        port,
        click.option("--baud", type=click.IntRange(1), help="Baud rate (default: the board's)."),
        click.option("--timeout", default=timeout, show_default=True, type=click.FloatRange(0, min_open=True),
                     help="Seconds to wait for each record from the board."),
        click.option("--flash/--no-flash", "flash", default=True, show_default=True,
                     help="Flash the image onto a real board before measuring."),
        *sharding,
    )

    def decorate(command):
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def _runner(root: Path, board: Board, port, baud, timeout, flash) -> Runner:
    return Runner(open_target(root, board, Link(port, baud, timeout, flash)), stderr())


def _shard_runner(root: Path, board: Board, ports, baud, timeout, flash, jobs, adapters, places,
                  coordinator) -> Runner:
    """A runner measuring in shards (see _connection_options(shards=True))."""
    if adapters and len(adapters) != len(ports):
        raise PqscopeError(f"{len(adapters)} --adapter-serial for {len(ports)} --port: give one per --port, in the "
                           "same order")
    if places and ports:
        raise PqscopeError("--port and --labgrid-place both name boards: give one or the other")
    links = [Link(port, baud, timeout, flash, adapter) for port, adapter in zip_longest(ports or (None,), adapters)]
    return Runner(open_shard_targets(root, board, links, jobs, places, coordinator), stderr())


@cli.command()
@click.option("--board", "board_name", required=True)
@click.option("--scheme")
@click.option("--impl")
@IMPL_DIR_OPTION
@STACK_BYTES_OPTION
@CLOCK_OPTION
@_probe_options
@JSON_OPTION
def build(board_name: str, scheme: str | None, impl: str | None, impl_dir: Path | None, stack_bytes: int | None,
          clock_name: str | None, probed: bool, probe_names: tuple[str, ...], as_json: bool) -> None:
    """Build one image and check that it fits the board."""
    root = repo_root()
    board, implementation = _select(root, board_name, scheme, impl, impl_dir, clock_name, stack_bytes)
    image = open_target(root, board).image(implementation, stderr(), _variant(probed, probe_names))
    size = image.size
    if as_json:
        _print_json({"images": [{
            "board": board.name, "scheme": implementation.scheme, "impl": implementation.impl, "elf": str(image.elf),
            **asdict(size), "stack_bytes": implementation.stack_bytes,
        }]})
    else:
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


def _parse_ops(text: str) -> tuple[Op, ...]:
    names = {op.label: op for op in Op}
    ops = []
    for name in filter(None, (part.strip() for part in text.split(","))):
        if name not in names:
            raise PqscopeError(f"unknown op '{name}'; valid: {', '.join(names)}")
        ops.append(names[name])
    if not ops:
        raise PqscopeError("--ops names no operation")
    return tuple(sorted(set(ops)))


def _parse_seed(text: str | None) -> bytes:
    """The master seed: the bytes of a hex string, an odd number of digits read with a leading 0."""
    if text is None:
        return secrets.token_bytes(32)
    digits = text.strip()
    try:
        seed = bytes.fromhex(digits.zfill(len(digits) + len(digits) % 2))
    except ValueError:
        seed = b""
    if not seed:
        raise PqscopeError(f"--seed must be hex digits (an odd count is read with a leading 0: 7 is 07), "
                           f"not '{text}'")
    return seed


@cli.command()
@click.option("--board", "board_name", default=VIRTUAL_BOARD, show_default=True)
@click.option("--scheme", help="Scheme (default: the default suite, every implementation in DEFAULT_SUITE).")
@click.option("--impl", help="Implementation of --scheme.")
@IMPL_DIR_OPTION
@STACK_BYTES_OPTION
@click.option("--ops", "ops_text", default="keygen,sign,verify", show_default=True, help="Operations to report.")
@click.option("-n", "samples", default=10, show_default=True, type=click.IntRange(1, 2**32 - 1), help="Samples.")
@SEED_OPTION
@MSG_LEN_OPTION
@CLOCK_OPTION
@_probe_options
@_connection_options(timeout=60.0, shards=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Run directory (default: runs/<timestamp>-<board>-<scheme>-<impl>, or -suite).")
@click.option("--resume", "resume_path", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Continue an interrupted run (or default suite) in this directory to its -n samples, with "
                   "its parameters (meta.json, suite.json), on any boards: -j, --port, --labgrid-place and the other "
                   "connection options may be given again.")
@click.option("--report/--no-report", "with_report", default=True, show_default=True,
              help="Write report.md and report.html (`pqscope report --format md|html` prints them later).")
@JSON_OPTION
@click.pass_context
def run(ctx: click.Context, board_name, scheme, impl, impl_dir, stack_bytes, ops_text, samples, seed, msg_len, clock_name, probed,
        probe_names, ports, baud, timeout, flash, jobs, adapters, places, coordinator, out, resume_path, with_report,
        as_json) -> None:
    """Measure an implementation, or the default suite: build, run samples on the board (or boards:
    the samples are dealt to them), save and report."""
    root = repo_root()
    if jobs is None and not ports and not places:
        jobs = 1  # one board unless asked: a run of a few samples is not worth an emulator per core
    if resume_path is not None:
        _refuse_fixed_options(ctx, RESUME_FIXED)
        board, what, members = resumed_run(root, resume_path)
        runner = _shard_runner(root, board, ports, baud, timeout, flash, jobs, adapters, places,
                               coordinator)
        _measure_members(ctx, runner, members, what, resume_path, with_report, as_json)
        return
    board = _board(root, board_name, clock_name)
    catalogue = load_catalogue(root)
    own = _own_implementation(impl_dir, scheme, impl, stack_bytes)
    if own is not None:
        selected = [own]
    elif (scheme is None) != (impl is None):
        raise PqscopeError("give both --scheme and --impl, or neither for the default suite")
    elif scheme is None:
        selected = [row for row in catalogue if (row.scheme, row.impl) in DEFAULT_SUITE and row.status == "ok"]
    else:
        selected = [find_implementation(catalogue, scheme, impl)]
    runner = _shard_runner(root, board, ports, baud, timeout, flash, jobs, adapters, places, coordinator)
    what = SampleCapture(_parse_ops(ops_text), samples, _parse_seed(seed), msg_len,
                         variant=_variant(probed, probe_names))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    if scheme is None and impl_dir is None:
        path = out or root / "runs" / f"{stamp}-{board.name}-suite"
        members = new_suite(path, board, selected, what)
    else:
        only = selected[0]
        path = out or root / "runs" / f"{stamp}-{board.name}-{only.scheme}-{only.impl}"
        members = [Member(only, path)]
    _measure_members(ctx, runner, members, what, path, with_report, as_json)


def _measure_members(ctx: click.Context, runner: Runner, members: list[Member], what: SampleCapture, path: Path,
                     with_report: bool, as_json: bool) -> None:
    """Measures the members of the run or suite at `path`, then reports it and prints its results."""
    interrupted = runner.measure_members(members, what)
    runs = [load_run(run_path) for run_path in find_runs(path)]
    document = runs_document(path, runs)
    report = write_reports(path, document, runs) if with_report else None
    if interrupted:
        ctx.exit(130)
    if as_json:
        _print_json(document)
    else:
        print_results(_wide_console(), document)
        if report:
            stderr().print(f"report: {report}")


# The run's parameters, which --resume takes from meta.json (or a suite's suite.json), by their
# option names.
RESUME_FIXED = {"board_name": "--board", "clock_name": "--clock", "scheme": "--scheme", "impl": "--impl", "impl_dir": "--impl-dir",
                "stack_bytes": "--stack-bytes",
                "ops_text": "--ops", "samples": "-n", "seed": "--seed", "msg_len": "--msg-len", "out": "--out",
                "probed": "--probes", "probe_names": "--probe"}


CT_RESUME_FIXED = {**{name: option for name, option in RESUME_FIXED.items() if name != "ops_text"},
                   "key_refresh": "--key-refresh", "fixed_n": "--fixed-n", "bound_percent": "--bound"}


def _refuse_fixed_options(ctx: click.Context, fixed: dict[str, str]) -> None:
    given = [option for name, option in fixed.items()
             if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
    if given:
        raise PqscopeError(f"--resume takes the run's parameters from its meta.json; drop {', '.join(given)}")


@cli.command("flash")
@click.option("--board", "board_name", required=True)
@click.option("--scheme", required=True)
@click.option("--impl", required=True)
def flash_command(board_name: str, scheme: str, impl: str) -> None:
    """Build an image and flash it onto a real board with OpenOCD (program, verify, reset)."""
    root = repo_root()
    board, implementation = _select(root, board_name, scheme, impl)
    target = open_target(root, board)
    elf = target.image(implementation, stderr()).elf
    target.flash(elf, stderr())
    click.echo(f"flashed {elf} onto {board.name}")


@cli.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["table", "md", "html", "csv", "json"]), default="table",
              show_default=True)
def report(path: Path, fmt: str) -> None:
    """Report a run directory (or a suite of runs) from its samples: table, Markdown, HTML, CSV or JSON."""
    runs = [load_run(run_path) for run_path in find_runs(path)]
    document = runs_document(path, runs)
    if fmt == "table":
        print_results(_wide_console(), document)
    elif fmt == "md":
        click.echo(markdown(document, runs), nl=False)
    elif fmt == "html":
        click.echo(html_page(document, runs), nl=False)
    elif fmt == "csv":
        click.echo(csv_text(document), nl=False)
    else:
        _print_json(document)


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
        runs = [load_run(run_path) for path in run_paths for run_path in find_runs(path)]
    else:
        path, runs = newest_measured_run(repo_root() / "runs", has_sign_and_verify)
        stderr().print(f"runs from {path} (the newest with sign and verify samples; --run chooses others)")
    signers = [signer_from_run(run) for run in runs]
    mixed = resolve_assignment(assigned, signers, lambda: load_catalogue(repo_root()))
    rows = budget_rows(signers, mixed, overhead_bytes)
    if as_json:
        _print_json({"rows": rows})
    else:
        print_tls_budget(Console(width=max(Console().width, TLS_WIDTH)), rows)


@cli.command("ct")
@click.option("--board", "board_name", default=VIRTUAL_BOARD, show_default=True)
@click.option("--scheme")
@click.option("--impl")
@IMPL_DIR_OPTION
@STACK_BYTES_OPTION
@click.option("-n", "samples", default=2000, show_default=True, type=click.IntRange(20, 2**31 - 1),
              help="Most signatures: pairs of one fixed-key and one random-key signature, in random order. The "
                   "test stops at the first look (100, 200, 400, ... signatures) whose verdict is definite.")
@click.option("--fixed-n", is_flag=True, help="Always take all -n signatures (no early stop).")
@click.option("--bound", "bound_percent", type=click.FloatRange(0, min_open=True), metavar="PERCENT",
              help="Run until no leak larger than PERCENT of the mean signing time is shown (95% confidence), or -n.")
@SEED_OPTION
@MSG_LEN_OPTION
@CLOCK_OPTION
@click.option("--key-refresh", default=0, show_default=True, type=click.IntRange(0),
              help="Regenerate a random key after this many uses (0: keep the pool's keys).")
@_probe_options
@_connection_options(timeout=120.0, shards=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Run directory (default: runs/<timestamp>-<board>-<scheme>-<impl>-ct).")
@click.option("--resume", "resume_path", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Continue an interrupted test in this directory to its -n signatures, with its parameters "
                   "(meta.json), on any boards: -j, --port, --labgrid-place and the other connection options may "
                   "be given again.")
@JSON_OPTION
@click.pass_context
@click.option("--taint", "taint_check", is_flag=True,
              help="Also run the exact check (pqscope taint, 2 signatures) on the virtual board and show its findings "
                   "beside the statistical localisation.")
def ct_command(ctx: click.Context, board_name, scheme, impl, impl_dir, stack_bytes, samples, fixed_n, bound_percent, seed, msg_len,
               clock_name, key_refresh, probed, probe_names, ports, baud, timeout, flash, jobs, adapters, places, coordinator, out,
               resume_path, as_json, taint_check) -> None:
    """Test whether signing time depends on the secret key (fixed vs random keys, dudect style)."""
    from .ct import CtCapture  # numpy/scipy statistics and matplotlib: loaded only for this test

    root = repo_root()
    if resume_path is not None:
        _refuse_fixed_options(ctx, CT_RESUME_FIXED)
        meta = resume_parameters(resume_path, kind="ct")
        board, implementation, path = resumed_board(root, meta), resumed_implementation(root, meta), resume_path
        what = CtCapture(meta.samples, meta.seed, meta.msg_len, meta.key_refresh,
                         variant=variant_from_json(meta.variant), fixed_n=bool(meta.fixed_n), bound=meta.bound)
    else:
        board, implementation = _select(root, board_name, scheme, impl, impl_dir, clock_name, stack_bytes)
        path = out or root / "runs" / (f"{time.strftime('%Y%m%d-%H%M%S')}-{board.name}-{implementation.scheme}-"
                                       f"{implementation.impl}-ct")
        what = CtCapture(samples, _parse_seed(seed), msg_len, key_refresh, variant=_variant(probed, probe_names),
                         fixed_n=fixed_n, bound=None if bound_percent is None else bound_percent / 100)
        meta = None
    with tempfile.TemporaryDirectory() as scratch:
        if taint_check:  # first, into scratch: the test's run directory must start empty
            if target_kind(board) is not VirtualTarget:
                raise PqscopeError(f"--taint runs on the virtual board (--board {VIRTUAL_BOARD}), not on {board.name}")
            from .taint import check_signatures
            what.taint = check_signatures(root, board, implementation, TAINT_SIGNATURES, what.master_seed,
                                          what.msg_len, Path(scratch) / "taint", stderr())
        runner = _shard_runner(root, board, ports, baud, timeout, flash, jobs, adapters, places, coordinator)
        outcome = runner.measure(implementation, path, what, resumed=meta)
        if taint_check:
            shutil.copytree(Path(scratch) / "taint", path / "taint", dirs_exist_ok=True)
    if outcome.interrupted:
        ctx.exit(130)
    document = outcome.result
    if as_json:
        _print_json(document)
        return
    click.echo(f"{implementation.scheme} {implementation.impl} on {board.name} at {board.clock.describe()}: "
               f"{document['verdict']} ({document['reason']})")
    if document["verdict"] == "no-leak" and document.get("bound"):
        requested = document.get("bound_requested")
        click.echo(f"  {bound_text(document['bound'])}" + ("" if not requested else " (the bound asked for is shown)"
                                                          if requested["shown"] else " (NOT the bound asked for: raise -n)"))
    if document["corrupt_accepted"]:
        click.echo(f"  {document['corrupt_accepted']} of {len(outcome.records)} signatures stayed valid with one bit "
                   f"flipped: the verifier accepts more than one encoding of a signature (see ct.csv, corrupt_accepted)")
    for function in document.get("top_functions", [])[:5]:
        click.echo(f"  {function_line(function)}")
    taint = document.get("taint")
    if taint:
        leaks = [finding for finding in taint["findings"] if finding["leak"]]
        declassified = sum(finding["declassified"] for finding in taint["findings"])
        click.echo(f"exact check ({taint['signatures']} signatures): {taint['verdict']}, {len(leaks)} leaking "
                   f"instruction{'' if len(leaks) == 1 else 's'}, {declassified} declassified")
        for finding in leaks[:5]:
            click.echo(f"  {finding['kind']} in {finding['function']} at {taint_source(finding)} "
                       f"({finding['count']:,} executions)")
    for board in document.get("boards", []):
        if board["stands_out"]:
            click.echo(f"  board {board['board']} ({board.get('place') or board.get('port')}) stands out: its cycles "
                       f"differ from the boards' consensus (|t| {abs(float(board['t_against_the_boards'])):.1f}); see "
                       f"the report")
    confirm = document.get("confirm_on_board")
    if confirm:
        click.echo(f"confirm on a board with probes of {', '.join(confirm['probes']) or 'none of them'}:\n"
                   f"  {confirm['command']}")
        for function in confirm["not_probeable"]:
            click.echo(f"  {function['function']}: {function['why']}")
    stderr().print(f"report: {path / 'report.html'}")


@cli.command("taint")
@click.option("--board", "board_name", default=VIRTUAL_BOARD, show_default=True)
@click.option("--scheme")
@click.option("--impl")
@IMPL_DIR_OPTION
@STACK_BYTES_OPTION
@click.option("-n", "signatures", default=TAINT_SIGNATURES, show_default=True, type=click.IntRange(1, 10_000),
              help="Signatures, each with a key of its own: each one's path is checked.")
@SEED_OPTION
@MSG_LEN_OPTION
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Directory for taint.json (default: runs/<timestamp>-<board>-<scheme>-<impl>-taint).")
@JSON_OPTION
def taint_command(board_name, scheme, impl, impl_dir, stack_bytes, signatures, seed, msg_len, out, as_json) -> None:
    """Check signing exactly on the virtual board: every executed instruction whose time can depend on the secret key."""
    from .taint import KINDS, check_signatures

    root = repo_root()
    board, implementation = _select(root, board_name, scheme, impl, impl_dir, stack_bytes=stack_bytes)
    if target_kind(board) is not VirtualTarget:
        raise PqscopeError(f"board {board.name} cannot track the key through its instructions: taint runs on the "
                           f"virtual board (--board {VIRTUAL_BOARD})")
    path = out or root / "runs" / (f"{time.strftime('%Y%m%d-%H%M%S')}-{board.name}-{implementation.scheme}-"
                                   f"{implementation.impl}-taint")
    document = check_signatures(root, board, implementation, signatures, _parse_seed(seed), msg_len, path, stderr())
    if as_json:
        _print_json(document)
        return
    click.echo(f"{implementation.scheme} {implementation.impl} on {board.name}: {document['verdict']} "
               f"({document['signatures']} signatures, {document['instructions']:,} instructions checked)")
    table = Table("kind", "function", "source", "executions", "what", box=None)
    for finding in document["findings"]:
        table.add_row(taint_kind(finding), finding["function"] or "?", taint_source(finding), f"{finding['count']:,}",
                      taint_what(finding))
    if document["findings"]:
        _wide_console().print(table)
        for kind in dict.fromkeys(finding["kind"] for finding in document["findings"]):
            click.echo(f"  {kind}: {KINDS[kind]}")
    coverage = document["coverage"]
    click.echo(f"coverage: {coverage['instructions']:,} distinct instructions ran; new ones per signature: "
               f"{', '.join(f'{n:,}' for n in coverage['new_instructions'])}")
    used = {reason for finding in document["findings"] for reason in finding["declassified_by"]}
    for item in document["declassifications"]:
        if item["reason"] in used:
            click.echo(f"  declassified, {item['reason']}: {item['why']}")
            used.discard(item["reason"])
    stderr().print(f"findings: {path / 'taint.json'}")


@cli.command("compare-falcon")
@click.option("--board", "board_name", default=VIRTUAL_BOARD, show_default=True)
@click.option("--scheme", default="falcon-512", show_default=True, type=click.Choice(falcon_compare.SCHEMES))
@click.option("-n", "samples", default=10, show_default=True, type=click.IntRange(1, 2**32 - 1),
              help="Key generation/signing/verification samples per mode.")
@click.option("--ct-n", "ct_samples", default=200, show_default=True, type=click.IntRange(20, 2**31 - 1),
              help="Signatures of each mode's constant-time test (no-leak needs 2400 or more).")
@click.option("--fp-ct-n", "fp_ct_samples", default=2400, show_default=True, type=click.IntRange(20, 2**31 - 1),
              help="Signatures of each FP operation's constant-time test, per mode.")
@click.option("--seed", help="Master seed in hex (default: random; recorded in each part's meta.json).")
@_connection_options(timeout=120.0)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Directory (default: runs/<timestamp>-<board>-compare-<scheme>).")
@JSON_OPTION
def compare_falcon(board_name, scheme, samples, ct_samples, fp_ct_samples, seed, port, baud, timeout, flash, out,
                   as_json) -> None:
    """Falcon's three FP modes side by side: cycles, stack, constant-time verdicts with
    localisation, each FP primitive's cost and verdict, and the price of constant time.

    The defaults take about ten minutes on the virtual board; -n 100 --ct-n 2400 gives no-leak
    verdicts for the emulated modes (about an hour)."""
    from .plots import falcon_modes_png  # matplotlib: loaded only when needed

    root = repo_root()
    board = get_board(root, board_name)
    steps = falcon_compare.RunnerSteps(_runner(root, board, port, baud, timeout, flash), _parse_seed(seed), samples)
    path = out or root / "runs" / f"{time.strftime('%Y%m%d-%H%M%S')}-{board.name}-compare-{scheme}"
    started = time.monotonic()
    document = falcon_compare.run_comparison(load_catalogue(root), scheme, board.name, path, steps,
                                             ct_samples=ct_samples, fp_ct_samples=fp_ct_samples)
    document["wall_seconds"] = round(time.monotonic() - started, 1)
    (path / "compare.json").write_text(json.dumps(document, indent=2) + "\n")
    (path / "report.html").write_text(falcon_compare.html_page(document, falcon_modes_png(document)))
    if as_json:
        _print_json(document)
        return
    falcon_compare.print_comparison(_wide_console(), document)
    stderr().print(f"report: {path / 'report.html'}")


@cli.command("model-check")
@click.option("--board", "board_name", default=VIRTUAL_BOARD, show_default=True)
@_connection_options(timeout=30.0)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the board's output and model-check.json (default: "
                   "runs/<timestamp>-<board>-model-check).")
@JSON_OPTION
@click.pass_context
def model_check(ctx: click.Context, board_name, port, baud, timeout, flash, out, as_json) -> None:
    """Time the virtual board's micro-benchmarks (tests/vboard/trm_bench.S) on a board against the
    cycles its timing model prices them at, and published measurements on silicon.

    On a Discovery board, the sequences that do not take what the model says are where the model is
    wrong; on the virtual board, every one must. Exit status 1 when any departs from the model."""
    from .modelcheck import RESULT_FILE, print_model_check, run_model_check

    root = repo_root()
    board = get_board(root, board_name)
    path = out or root / "runs" / f"{time.strftime('%Y%m%d-%H%M%S')}-{board.name}-model-check"
    check = run_model_check(root, open_target(root, board, Link(port, baud, timeout, flash)), stderr(), timeout, path)
    if as_json:
        _print_json(check.to_json())
    else:
        print_model_check(_wide_console(), check)
        stderr().print(f"results: {path / RESULT_FILE}")
    if check.departures:
        ctx.exit(1)


@cli.command("vboard-bench")
@JSON_OPTION
def vboard_bench(as_json: bool) -> None:
    """Measure the emulator's speed (model cycles per second) on signing workloads."""
    root = repo_root()
    catalogue = load_catalogue(root)
    present = [(s, i) for s, i in BENCH_IMPLEMENTATIONS if any((r.scheme, r.impl) == (s, i) for r in catalogue)]
    if not present:
        raise PqscopeError("the catalogue has none of the benchmark implementations "
                           + ", ".join(f"{s}/{i}" for s, i in BENCH_IMPLEMENTATIONS))
    runner = Runner(open_target(root, get_board(root, VIRTUAL_BOARD)), stderr())
    benchmarks = []
    for scheme, impl in present:
        what = SampleCapture((Op.SIGN,), BENCH_SAMPLES, BENCH_SEED, BENCH_MSG_LEN)
        with tempfile.TemporaryDirectory() as scratch:
            outcome = runner.measure(find_implementation(catalogue, scheme, impl), Path(scratch) / "run", what)
        if outcome.interrupted:
            raise click.Abort()
        stats = outcome.meta.emulator_stats
        if not stats or "model_cycles_per_second" not in stats:
            raise PqscopeError("the emulator wrote no statistics (model_cycles_per_second) on exit")
        benchmarks.append({
            "scheme": scheme, "impl": impl, "model_cycles_per_second": stats["model_cycles_per_second"],
            "model_cycles": stats.get("model_cycles"), "run_seconds": stats.get("run_seconds"),
            "wall_seconds": stats.get("wall_seconds"),
        })
    # The first (ML-DSA-44) is the reference figure; every workload is listed under "benchmarks".
    document = {**benchmarks[0], "benchmarks": benchmarks}
    if as_json:
        _print_json(document)
        return
    table = Table("scheme", "impl", "model cycles", "emulation s", "model cycles/s")
    for entry in benchmarks:
        table.add_row(entry["scheme"], entry["impl"], f"{entry['model_cycles']:,}", f"{entry['run_seconds']:.2f}",
                      f"{entry['model_cycles_per_second']:,.0f}")
    Console().print(table)
