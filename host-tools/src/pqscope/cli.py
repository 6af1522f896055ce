"""The pqscope command line."""

import contextlib
import json
import secrets
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Column, Table

from .boards import Board, get_board, load_boards
from .build import build_emulator, build_image, build_impl_dir, build_info, check_fits, code_digest, read_size
from .capture import capture, check_info, connect
from .catalogue import Implementation, find_implementation, implementation_from_dir, load_catalogue
from . import falcon_compare
from .errors import PqscopeError
from .metadata import load_json
from .paths import repo_root
from .protocol import Op
from .flash import flash as flash_image
from .report import ct_page, csv_text, html_page, markdown, print_results, print_tls_budget, run_document, runs_document
from .rundir import (RunDirectory, is_suite, keep_complete_samples, member_state, resume_parameters, start_suite,
                     suite_parameters, write_atomically)
from .runs import find_runs, load_run, newest_run
from .stats import summarize
from .tls import budget_rows, parse_assignments, resolve_assignment, signer_from_run

VIRTUAL_BOARD = "virtual"
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


def _stderr() -> Console:
    return Console(stderr=True)


def _working(console: Console, what: str):
    """A spinner while a slow step runs, on a terminal only."""
    return console.status(what) if console.is_terminal else contextlib.nullcontext()


def _select(root: Path, board_name: str, scheme: str | None, impl: str | None,
            impl_dir: Path | None = None) -> tuple[Board, Implementation]:
    board = get_board(root, board_name)
    if impl_dir is not None:
        return board, implementation_from_dir(impl_dir, scheme, impl)
    if scheme is None or impl is None:
        raise PqscopeError("give --scheme and --impl (or --impl-dir with your own implementation)")
    return board, find_implementation(load_catalogue(root), scheme, impl)


def _build_checked(root: Path, board: Board, implementation: Implementation, console: Console):
    with _working(console, f"building image.{implementation.scheme}.{implementation.impl}"):
        if implementation.directory is not None:
            elf = build_impl_dir(root, board, implementation.directory, implementation.scheme, implementation.impl,
                                 implementation.stack_bytes)
        else:
            elf = build_image(root, board, implementation.scheme, implementation.impl)
    size = read_size(elf)
    check_fits(board, elf, size, implementation.stack_bytes)
    return elf, size


def _code_of(elf: Path, resumed: dict | None, path: Path) -> str:
    """The image's code digest; resuming, it must be the one the run started with (runs from
    before the digest was recorded take it from here on)."""
    code = code_digest(elf)
    if resumed and resumed.get("code_sha256", code) != code:
        raise PqscopeError(f"cannot resume {path}: the code of {elf.name} changed since the run started, and "
                           f"its samples would mix two builds; start a new run (or rebuild the code it began with)")
    return code


def _build_emulator(root: Path, console: Console) -> Path:
    with _working(console, "building the emulator"):
        return build_emulator(root)


def _connection_options(timeout: float):
    """--port, --baud, --timeout and --flash: how a command reaches a real board."""
    options = (
        click.option("--port", help="Serial port or pyserial URL of a real board."),
        click.option("--baud", type=click.IntRange(1), help="Baud rate (default: the board's)."),
        click.option("--timeout", default=timeout, show_default=True, type=click.FloatRange(0, min_open=True),
                     help="Seconds to wait for each record from the board."),
        click.option("--flash/--no-flash", "flash", default=True, show_default=True,
                     help="Flash the image onto a real board before measuring."),
    )

    def decorate(command):
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


@cli.command()
@click.option("--board", "board_name", required=True)
@click.option("--scheme")
@click.option("--impl")
@click.option("--impl-dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Your own implementation: a directory with the pqm4/NIST signature API (api.h); "
                   "--scheme/--impl name it (default: its parent's and its own name).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def build(board_name: str, scheme: str | None, impl: str | None, impl_dir: Path | None, as_json: bool) -> None:
    """Build one image and check that it fits the board."""
    root = repo_root()
    board, implementation = _select(root, board_name, scheme, impl, impl_dir)
    elf, size = _build_checked(root, board, implementation, _stderr())
    image = {
        "board": board.name, "scheme": implementation.scheme, "impl": implementation.impl, "elf": str(elf),
        **asdict(size), "stack_bytes": implementation.stack_bytes,
    }
    if as_json:
        _print_json({"images": [image]})
    else:
        click.echo(f"{elf}: text {size.text}, data {size.data}, bss {size.bss} bytes; fits {board.name}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def boards(as_json: bool) -> None:
    """List the boards."""
    found = load_boards(repo_root()).values()
    if as_json:
        _print_json({"boards": [board.describe() for board in found]})
        return
    table = Table(Column("board", no_wrap=True), "runs on", "clock", "flash", "ram", "description")
    for board in found:
        runs_on = f"emulator ({board.emulates} images)" if board.is_virtual else "serial port"
        table.add_row(board.name, runs_on, f"{board.clock_hz / 1e6:g} MHz", f"{board.flash_bytes // 1024} KiB",
                      f"{board.ram_bytes // 1024} KiB", board.description)
    Console().print(table)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
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
    if text is None:
        return secrets.token_bytes(32)
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        seed = b""
    if not seed:
        raise PqscopeError(f"--seed must be a non-empty even number of hex digits, not '{text}'")
    return seed


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=console, transient=True, disable=not console.is_terminal,
    )


@dataclass
class _Measurement:
    """What one implementation's measurement needs besides the implementation itself."""

    root: Path
    board: Board
    ops: tuple[Op, ...]
    samples: int
    master_seed: bytes
    msg_len: int
    port: str | None
    baud: int | None
    timeout: float
    flash: bool


def _measure(m: _Measurement, implementation: Implementation, run_path: Path, err: Console,
             resumed: dict | None = None) -> tuple[dict, bool]:
    """Builds, flashes or loads, and captures one implementation into `run_path` (or, given the
    meta.json of an interrupted run there, its missing samples).

    Returns the run's document and whether it was interrupted (Ctrl-C keeps what was captured)."""
    board, scheme, impl = m.board, implementation.scheme, implementation.impl
    if implementation.status != "ok":
        err.print(f"warning: the catalogue marks {scheme}/{impl} as '{implementation.status}'")
    elf, size = _build_checked(m.root, board, implementation, err)
    code = _code_of(elf, resumed, run_path)
    emulator = _build_emulator(m.root, err) if board.is_virtual else None

    kept = keep_complete_samples(run_path / "samples.csv", m.master_seed) if resumed else []
    with RunDirectory(run_path, resuming=bool(resumed)) as run_dir:
        meta = resumed or {
            "schema": 1, "tool_version": version("pqscope"), "command_line": sys.argv,
            "build": build_info(m.root, board),
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "board": board.name,
            "scheme": scheme, "impl": impl, "elf": str(elf), "image": asdict(size),
            "ops": [op.label for op in m.ops], "samples": m.samples, "msg_len": m.msg_len,
            "master_seed": m.master_seed.hex(), "seed_derivation": "sha256(master_seed || u32le(sample_id))",
            "status": "running", "samples_completed": 0,
        }
        if implementation.directory is not None and not resumed:
            meta["impl_dir"] = str(implementation.directory.resolve())
        meta["code_sha256"] = code
        if resumed:
            meta.update(status="running", samples_completed=len({row.sample_id for row in kept}))
            meta.setdefault("resumed_at", []).append(time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        run_dir.write_meta(meta)
        rows = list(kept)
        info = None
        try:
            with connect(board, elf=elf, emulator=emulator, port=m.port, baud=m.baud or board.baud,
                         stats_path=run_dir.path / "vboard-stats.json", on_receive=run_dir.write_raw,
                         sample_timeout=m.timeout) as connection:
                # Flashed with the port already open, so the port is checked first and the boot
                # announcement of the new image is not missed.
                if not board.is_virtual and m.flash:
                    with _working(err, f"flashing {elf.name} onto {board.name}"):
                        flash_image(board, elf)
                info = connection.session.hello()
                check_info(info, board, implementation, m.msg_len)
                meta.update(port=connection.port, clock_hz=info.clock_hz, info=asdict(info))
                run_dir.write_meta(meta)
                with _progress(err) as progress:
                    task = progress.add_task(f"{scheme} {impl}", total=m.samples,
                                             completed=meta["samples_completed"])
                    for sample_rows in capture(connection.session, ops=m.ops, samples=m.samples,
                                               msg_len=m.msg_len, master_seed=m.master_seed,
                                               skip={row.sample_id for row in kept}):
                        run_dir.write_rows(sample_rows)
                        rows += sample_rows
                        meta["samples_completed"] += 1
                        progress.advance(task)
            meta["status"] = "complete"
        except KeyboardInterrupt:
            meta["status"] = "interrupted"
        except PqscopeError as error:
            meta["status"] = f"failed: {error}"
            raise
        finally:
            meta["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            if board.is_virtual and (run_dir.path / "vboard-stats.json").exists():
                meta["emulator_stats"] = load_json(run_dir.path / "vboard-stats.json")
            run_dir.write_meta(meta)
    if meta["status"] == "interrupted":
        err.print(f"interrupted after {meta['samples_completed']} of {m.samples} samples; data kept in {run_path}")
    clock_hz = info.clock_hz if info else board.clock_hz
    document = run_document(board.name, clock_hz, run_path, summarize(rows, m.ops, scheme, impl, size.text))
    return document, meta["status"] == "interrupted"


def _write_reports(path: Path) -> Path:
    """report.md and report.html beside the samples of a run or suite; returns the HTML's path."""
    runs = [load_run(run_path) for run_path in find_runs(path)]
    document = runs_document(path, runs)
    write_atomically(path / "report.md", markdown(document, runs))
    write_atomically(path / "report.html", html_page(document, runs))
    return path / "report.html"


@cli.command()
@click.option("--board", "board_name", default=VIRTUAL_BOARD, show_default=True)
@click.option("--scheme", help="Scheme (default: the default suite, every implementation in DEFAULT_SUITE).")
@click.option("--impl", help="Implementation of --scheme.")
@click.option("--impl-dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Your own implementation: a directory with the pqm4/NIST signature API (api.h); "
                   "--scheme/--impl name it (default: its parent's and its own name).")
@click.option("--ops", "ops_text", default="keygen,sign,verify", show_default=True, help="Operations to report.")
@click.option("-n", "samples", default=10, show_default=True, type=click.IntRange(1, 2**32 - 1), help="Samples.")
@click.option("--seed", help="Master seed in hex (default: random; recorded in meta.json).")
@click.option("--msg-len", default=32, show_default=True, type=click.IntRange(0, 0xFFFF))
@_connection_options(timeout=60.0)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Run directory (default: runs/<timestamp>-<board>-<scheme>-<impl>, or -suite).")
@click.option("--resume", "resume_path", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Continue an interrupted run (or default suite) in this directory to its -n samples, with "
                   "its parameters (meta.json, suite.json); --port, --baud, --timeout and --flash may be given again.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def run(ctx: click.Context, board_name, scheme, impl, impl_dir, ops_text, samples, seed, msg_len, port, baud,
        timeout, flash, out, resume_path, as_json) -> None:
    """Measure an implementation, or the default suite: build, run samples on the board, save and report."""
    if resume_path is not None:
        _resume(ctx, resume_path, port, baud, timeout, flash, as_json)
        return
    root = repo_root()
    board = get_board(root, board_name)
    catalogue = load_catalogue(root)
    if impl_dir is not None:
        selected = [implementation_from_dir(impl_dir, scheme, impl)]
        scheme, impl = selected[0].scheme, selected[0].impl
    elif (scheme is None) != (impl is None):
        raise PqscopeError("give both --scheme and --impl, or neither for the default suite")
    elif scheme is None:
        selected = [row for row in catalogue if (row.scheme, row.impl) in DEFAULT_SUITE and row.status == "ok"]
    else:
        selected = [find_implementation(catalogue, scheme, impl)]
    if not board.is_virtual and port is None:
        raise PqscopeError(f"board {board.name} is reached over a serial port: pass --port (e.g. /dev/ttyUSB0)")
    measurement = _Measurement(root, board, _parse_ops(ops_text), samples, _parse_seed(seed), msg_len, port, baud,
                               timeout, flash)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    if scheme is not None:
        path = out or root / "runs" / f"{stamp}-{board.name}-{scheme}-{impl}"
        _measure_members(ctx, measurement, [_Member(selected[0], path)], path, as_json)
        return
    path = out or root / "runs" / f"{stamp}-{board.name}-suite"
    start_suite(path, {
        "schema": 1, "kind": "suite", "command_line": sys.argv, "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "board": board.name, "members": [{"scheme": row.scheme, "impl": row.impl} for row in selected],
        "ops": [op.label for op in measurement.ops], "samples": samples, "msg_len": msg_len,
        "master_seed": measurement.master_seed.hex(),
    })
    _measure_members(ctx, measurement, [_Member(row, _member_path(path, row.scheme, row.impl)) for row in selected],
                     path, as_json)


def _member_path(suite: Path, scheme: str, impl: str) -> Path:
    return suite / f"{scheme}-{impl}"


@dataclass(frozen=True)
class _Member:
    """One implementation of a run or suite, and where it stands."""

    implementation: Implementation
    path: Path
    resume_from: dict | None = None  # the meta.json of an interrupted run to go on with
    complete: bool = False  # measured to the end before: kept as it is


def _measure_members(ctx: click.Context, measurement: _Measurement, members: list[_Member], path: Path,
                     as_json: bool) -> None:
    """Measures the members in turn, stopping at an interruption; then reports the run or suite at
    `path` and prints its results."""
    err = _stderr()
    documents = []
    interrupted = False
    for member in members:
        if member.complete:
            run = load_run(member.path)
            documents.append(run_document(run.meta["board"], run.meta.get("clock_hz", measurement.board.clock_hz),
                                          member.path, run.results()))
            continue
        document, interrupted = _measure(measurement, member.implementation, member.path, err,
                                         resumed=member.resume_from)
        documents.append(document)
        if interrupted:
            break
    report = _write_reports(path)
    if interrupted:
        ctx.exit(130)
    document = run_document(measurement.board.name, documents[0]["clock_hz"], path,
                            [result for d in documents for result in d["results"]])
    if as_json:
        _print_json(document)
    else:
        # Wide enough that no figure is cut off, even when the output is not a terminal.
        print_results(Console(width=max(Console().width, RESULTS_WIDTH)), document)
        err.print(f"report: {report}")


# The run's parameters, which --resume takes from meta.json (or a suite's suite.json), by their
# option names.
RESUME_FIXED = {"board_name": "--board", "scheme": "--scheme", "impl": "--impl", "impl_dir": "--impl-dir",
                "ops_text": "--ops", "samples": "-n", "seed": "--seed", "msg_len": "--msg-len", "out": "--out"}


CT_RESUME_FIXED = {**{name: option for name, option in RESUME_FIXED.items() if name != "ops_text"},
                   "key_refresh": "--key-refresh"}


def _refuse_fixed_options(ctx: click.Context, fixed: dict[str, str]) -> None:
    given = [option for name, option in fixed.items()
             if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
    if given:
        raise PqscopeError(f"--resume takes the run's parameters from its meta.json; drop {', '.join(given)}")


def _resumed_implementation(root: Path, meta: dict) -> Implementation:
    """The implementation a run measured: its own directory (--impl-dir) or a catalogue row."""
    if isinstance(meta.get("impl_dir"), str):
        return implementation_from_dir(Path(meta["impl_dir"]), meta["scheme"], meta["impl"])
    return find_implementation(load_catalogue(root), meta["scheme"], meta["impl"])


def _resume(ctx: click.Context, path: Path, port, baud, timeout, flash, as_json) -> None:
    """Continues an interrupted run, or suite: its complete members stay as they are, the
    interrupted one goes on to its -n samples and those not started yet are measured."""
    _refuse_fixed_options(ctx, RESUME_FIXED)
    suite = is_suite(path)
    parameters = suite_parameters(path) if suite else resume_parameters(path)
    root = repo_root()
    board = get_board(root, parameters["board"])
    if not board.is_virtual and port is None:
        raise PqscopeError(f"board {board.name} is reached over a serial port: pass --port (e.g. /dev/ttyUSB0)")
    catalogue = load_catalogue(root)
    ops = tuple(op for op in Op if op.label in parameters["ops"])
    measurement = _Measurement(root, board, ops, parameters["samples"], bytes.fromhex(parameters["master_seed"]),
                               parameters["msg_len"], port, baud, timeout, flash)
    if not suite:
        _measure_members(ctx, measurement, [_Member(_resumed_implementation(root, parameters), path, parameters)],
                         path, as_json)
        return
    members = []
    for member in parameters["members"]:
        implementation = find_implementation(catalogue, member["scheme"], member["impl"])
        run_path = _member_path(path, member["scheme"], member["impl"])
        meta = member_state(run_path)
        complete = (meta is not None and meta.get("status") == "complete"
                    and meta.get("samples_completed") == meta["samples"])
        members.append(_Member(implementation, run_path, meta, complete))
    _measure_members(ctx, measurement, members, path, as_json)


@cli.command("flash")
@click.option("--board", "board_name", required=True)
@click.option("--scheme", required=True)
@click.option("--impl", required=True)
def flash_command(board_name: str, scheme: str, impl: str) -> None:
    """Build an image and flash it onto a real board with OpenOCD (program, verify, reset)."""
    root = repo_root()
    board, implementation = _select(root, board_name, scheme, impl)
    err = _stderr()
    elf, _size = _build_checked(root, board, implementation, err)
    with _working(err, f"flashing {elf.name} onto {board.name}"):
        flash_image(board, elf)
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
        print_results(Console(width=max(Console().width, RESULTS_WIDTH)), document)
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
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
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
    paths = run_paths or (newest_run(repo_root() / "runs"),)
    signers = [signer_from_run(load_run(run_path)) for path in paths for run_path in find_runs(path)]
    mixed = resolve_assignment(assigned, signers, lambda: load_catalogue(repo_root()))
    rows = budget_rows(signers, mixed, overhead_bytes)
    if as_json:
        _print_json({"rows": rows})
    else:
        print_tls_budget(Console(width=max(Console().width, TLS_WIDTH)), rows)


CT_INTERVAL_FUNCTION = "run_sign"  # the harness function around each timed signature


@dataclass
class _CtTest:
    """What one implementation's constant-time test needs besides the implementation itself."""

    root: Path
    board: Board
    samples: int
    master_seed: bytes
    msg_len: int
    key_refresh: int
    port: str | None
    baud: int | None
    timeout: float
    flash: bool


def _run_ct(test: _CtTest, implementation: Implementation, path: Path, err: Console,
            resumed: dict | None = None) -> tuple[dict, list]:
    """Builds, captures and analyses one constant-time test into `path` (ct.csv, ct.json,
    report.html); or, given the meta.json of an interrupted test there, captures its missing
    signatures first. Returns the verdict document and the timed signatures (ct.CtSample)."""
    from . import ct  # numpy/scipy statistics and matplotlib: loaded only for this test
    from .leakstats import plot_t_vs_n, t_against_n
    from .plots import class_ecdfs_png

    root, board, samples, master_seed, msg_len = test.root, test.board, test.samples, test.master_seed, test.msg_len
    port, baud, timeout, flash = test.port, test.baud, test.timeout, test.flash
    scheme, impl = implementation.scheme, implementation.impl
    elf, size = _build_checked(root, board, implementation, err)
    code = _code_of(elf, resumed, path)
    emulator = _build_emulator(root, err) if board.is_virtual else None
    intervals_path = path / "intervals.jsonl"
    # On the virtual board every signature is profiled: the localisation and the attempt counts.
    emulator_args = ("--intervals", str(intervals_path), "--interval-function", CT_INTERVAL_FUNCTION,
                     *(arg for name in implementation.public_functions for arg in ("--public-function", name)))
    collected = ct.keep_captured(path, master_seed, with_intervals=board.is_virtual) if resumed else []
    with RunDirectory(path, samples_name="ct.csv", fields=ct.CT_FIELDS, resuming=bool(resumed)) as run_dir:
        meta = resumed or {
            "schema": 1, "kind": "ct", "tool_version": version("pqscope"), "command_line": sys.argv,
            "build": build_info(root, board), "board": board.name, "scheme": scheme, "impl": impl,
            "elf": str(elf), "image": asdict(size), "samples": samples, "msg_len": msg_len,
            "key_refresh": test.key_refresh, "master_seed": master_seed.hex(), "keys": [],
        }
        if implementation.directory is not None and not resumed:
            meta["impl_dir"] = str(implementation.directory)
        meta["code_sha256"] = code
        if resumed:
            meta.setdefault("resumed_at", []).append(time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        meta.update(status="running", samples_completed=len(collected))
        run_dir.write_meta(meta)
        keys_known = {key["key_id"] for key in meta["keys"]}

        def record_key(key) -> None:
            if key.key_id not in keys_known:  # a resumed test makes its pool's keys again
                keys_known.add(key.key_id)
                meta["keys"].append(asdict(key))

        try:
            with connect(board, elf=elf, emulator=emulator, port=port, baud=baud or board.baud,
                         stats_path=path / "vboard-stats.json", on_receive=run_dir.write_raw, sample_timeout=timeout,
                         emulator_args=emulator_args if board.is_virtual else ()) as connection:
                if not board.is_virtual and flash:
                    with _working(err, f"flashing {elf.name} onto {board.name}"):
                        flash_image(board, elf)
                info = connection.session.hello()
                check_info(info, board, implementation, msg_len)
                meta.update(clock_hz=info.clock_hz, info=asdict(info))
                run_dir.write_meta(meta)
                with _progress(err) as progress:
                    task = progress.add_task(f"ct {scheme} {impl}", total=samples, completed=len(collected))
                    for sample in ct.capture_ct(connection.session, info, samples=samples, master_seed=master_seed,
                                                msg_len=msg_len, key_refresh=test.key_refresh,
                                                done=range(len(collected)), on_key=record_key):
                        run_dir.write_record(ct.ct_record(sample))
                        collected.append(sample)
                        progress.advance(task)
        except KeyboardInterrupt:
            meta.update(status="interrupted", samples_completed=len(collected))
            run_dir.write_meta(meta)
            err.print(f"interrupted after {len(collected)} of {samples} signatures; resume with "
                      f"`pqscope ct --resume {path}`")
            raise click.exceptions.Exit(130) from None
        except PqscopeError as error:
            meta.update(status=f"failed: {error}", samples_completed=len(collected))
            run_dir.write_meta(meta)
            raise
        intervals = ct.load_intervals(intervals_path) if board.is_virtual else None
        document = {"board": board.name, "scheme": scheme, "impl": impl, "run_dir": str(path),
                    **ct.analyse_ct(collected, intervals, implementation.retry_function or None,
                                    implementation.public_functions)}
        meta.update(status="complete", samples_completed=len(collected), result=document)
        run_dir.write_meta(meta)
    classes = [s.key_class for s in collected if s.status.timed]
    cycles = [s.cycles for s in collected if s.status.timed]
    write_atomically(path / "ct.json", json.dumps(document, indent=2) + "\n")
    write_atomically(path / "report.html", ct_page(document, plot_t_vs_n(t_against_n(classes, cycles)),
                                                   class_ecdfs_png(classes, cycles)))
    return document, collected


@cli.command("ct")
@click.option("--board", "board_name", default=VIRTUAL_BOARD, show_default=True)
@click.option("--scheme")
@click.option("--impl")
@click.option("--impl-dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Your own implementation: a directory with the pqm4/NIST signature API (api.h); "
                   "--scheme/--impl name it (default: its parent's and its own name).")
@click.option("-n", "samples", default=2000, show_default=True, type=click.IntRange(20, 2**31 - 1),
              help="Signatures, split at random between the fixed key and random keys.")
@click.option("--seed", help="Master seed in hex (default: random; recorded in meta.json).")
@click.option("--msg-len", default=32, show_default=True, type=click.IntRange(0, 0xFFFF))
@click.option("--key-refresh", default=0, show_default=True, type=click.IntRange(0),
              help="Regenerate a random key after this many uses (0: keep the pool's keys).")
@_connection_options(timeout=120.0)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Run directory (default: runs/<timestamp>-<board>-<scheme>-<impl>-ct).")
@click.option("--resume", "resume_path", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Continue an interrupted test in this directory to its -n signatures, with its parameters "
                   "(meta.json); --port, --baud, --timeout and --flash may be given again.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def ct_command(ctx: click.Context, board_name, scheme, impl, impl_dir, samples, seed, msg_len, key_refresh, port,
               baud, timeout, flash, out, resume_path, as_json) -> None:
    """Test whether signing time depends on the secret key (fixed vs random keys, dudect style)."""
    root = repo_root()
    err = _stderr()
    if resume_path is not None:
        _refuse_fixed_options(ctx, CT_RESUME_FIXED)
        meta = resume_parameters(resume_path, kind="ct")
        board = get_board(root, meta["board"])
        implementation = _resumed_implementation(root, meta)
        test = _CtTest(root, board, meta["samples"], bytes.fromhex(meta["master_seed"]), meta["msg_len"],
                       meta["key_refresh"], port, baud, timeout, flash)
        path = resume_path
    else:
        board, implementation = _select(root, board_name, scheme, impl, impl_dir)
        path = out or root / "runs" / (f"{time.strftime('%Y%m%d-%H%M%S')}-{board.name}-{implementation.scheme}-"
                                       f"{implementation.impl}-ct")
        test = _CtTest(root, board, samples, _parse_seed(seed), msg_len, key_refresh, port, baud, timeout, flash)
        meta = None
    if not board.is_virtual and port is None:
        raise PqscopeError(f"board {board.name} is reached over a serial port: pass --port (e.g. /dev/ttyUSB0)")
    document, signatures = _run_ct(test, implementation, path, err, resumed=meta)
    if as_json:
        _print_json(document)
        return
    click.echo(f"{implementation.scheme} {implementation.impl} on {board.name}: {document['verdict']} "
               f"({document['reason']})")
    if document["corrupt_accepted"]:
        click.echo(f"  {document['corrupt_accepted']} of {len(signatures)} signatures stayed valid with one bit flipped: "
                   f"the verifier accepts more than one encoding of a signature (see ct.csv, corrupt_accepted)")
    for function in document.get("top_functions", [])[:5]:
        click.echo(f"  {function['function']}: share {function['share']}, t = {function['t']}")
    err.print(f"report: {path / 'report.html'}")


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
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def compare_falcon(board_name, scheme, samples, ct_samples, fp_ct_samples, seed, port, baud, timeout, flash, out,
                   as_json) -> None:
    """Falcon's three FP modes side by side: cycles, stack, constant-time verdicts with
    localisation, each FP primitive's cost and verdict, and the price of constant time.

    The defaults take about ten minutes on the virtual board; -n 100 --ct-n 2400 gives no-leak
    verdicts for the emulated modes (about an hour)."""
    from .plots import falcon_modes_png  # matplotlib: loaded only when needed

    root = repo_root()
    board = get_board(root, board_name)
    if not board.is_virtual and port is None:
        raise PqscopeError(f"board {board.name} is reached over a serial port: pass --port (e.g. /dev/ttyUSB0)")
    master_seed = _parse_seed(seed)
    err = _stderr()
    path = out or root / "runs" / f"{time.strftime('%Y%m%d-%H%M%S')}-{board.name}-compare-{scheme}"
    measurement = _Measurement(root, board, tuple(Op), samples, master_seed, 32, port, baud, timeout, flash)

    def measure(implementation: Implementation, run_path: Path) -> dict:
        document, interrupted = _measure(measurement, implementation, run_path, err)
        if interrupted:
            raise click.Abort()
        return document

    def constant_time(implementation: Implementation, n: int, run_path: Path) -> tuple[dict, list]:
        test = _CtTest(root, board, n, master_seed, 32, 0, port, baud, timeout, flash)
        return _run_ct(test, implementation, run_path, err)

    started = time.monotonic()
    document = falcon_compare.run_comparison(load_catalogue(root), scheme, board.name, path,
                                             falcon_compare.Steps(measure, constant_time),
                                             ct_samples=ct_samples, fp_ct_samples=fp_ct_samples)
    document["wall_seconds"] = round(time.monotonic() - started, 1)
    (path / "compare.json").write_text(json.dumps(document, indent=2) + "\n")
    (path / "report.html").write_text(falcon_compare.html_page(document, falcon_modes_png(document)))
    if as_json:
        _print_json(document)
        return
    falcon_compare.print_comparison(Console(width=max(Console().width, RESULTS_WIDTH)), document)
    err.print(f"report: {path / 'report.html'}")


@cli.command("vboard-bench")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def vboard_bench(as_json: bool) -> None:
    """Measure the emulator's speed (model cycles per second) on signing workloads."""
    root = repo_root()
    board = get_board(root, VIRTUAL_BOARD)
    catalogue = load_catalogue(root)
    present = [(s, i) for s, i in BENCH_IMPLEMENTATIONS if any((r.scheme, r.impl) == (s, i) for r in catalogue)]
    if not present:
        raise PqscopeError("the catalogue has none of the benchmark implementations "
                           + ", ".join(f"{s}/{i}" for s, i in BENCH_IMPLEMENTATIONS))
    err = _stderr()
    emulator = _build_emulator(root, err)
    benchmarks = []
    for scheme, impl in present:
        implementation = find_implementation(catalogue, scheme, impl)
        elf, _size = _build_checked(root, board, implementation, err)
        with tempfile.TemporaryDirectory() as scratch:
            with connect(board, elf=elf, emulator=emulator, port=None, baud=board.baud,
                         stats_path=Path(scratch) / "stats.json") as connection:
                check_info(connection.session.hello(), board, implementation, BENCH_MSG_LEN)
                with _working(err, f"signing {BENCH_SAMPLES} times with {scheme} {impl}"):
                    for _rows in capture(connection.session, ops=(Op.SIGN,), samples=BENCH_SAMPLES,
                                         msg_len=BENCH_MSG_LEN, master_seed=BENCH_SEED):
                        pass
            stats = connection.vboard.stats
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
