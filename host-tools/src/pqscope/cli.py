"""The pqscope command line."""

import contextlib
import json
import secrets
import sys
import tempfile
import time
from dataclasses import asdict
from importlib.metadata import version
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Column, Table

from .boards import Board, get_board, load_boards
from .build import build_emulator, build_image, check_fits, read_size
from .capture import capture, check_info, connect
from .catalogue import Implementation, find_implementation, load_catalogue
from .errors import PqscopeError
from .metadata import load_json
from .paths import repo_root
from .protocol import Op
from .report import print_results, run_document
from .rundir import RunDirectory
from .stats import summarize

VIRTUAL_BOARD = "virtual"
# (scheme, impl) pairs vboard-bench measures, when the catalogue has them.
BENCH_IMPLEMENTATIONS = (("ml-dsa-44", "m4f"), ("falcon-512", "m4-ct"))
BENCH_SAMPLES = 3
BENCH_MSG_LEN = 32
BENCH_SEED = b"vboard-bench"
RESULTS_WIDTH = 120


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


def _select(root: Path, board_name: str, scheme: str, impl: str) -> tuple[Board, Implementation]:
    board = get_board(root, board_name)
    implementation = find_implementation(load_catalogue(root), scheme, impl)
    return board, implementation


def _build_checked(root: Path, board: Board, implementation: Implementation, console: Console):
    with _working(console, f"building image.{implementation.scheme}.{implementation.impl}"):
        elf = build_image(root, board, implementation.scheme, implementation.impl)
    size = read_size(elf)
    check_fits(board, elf, size, implementation.stack_bytes)
    return elf, size


def _build_emulator(root: Path, console: Console) -> Path:
    with _working(console, "building the emulator"):
        return build_emulator(root)


@cli.command()
@click.option("--board", "board_name", required=True)
@click.option("--scheme", required=True)
@click.option("--impl", required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def build(board_name: str, scheme: str, impl: str, as_json: bool) -> None:
    """Build one image and check that it fits the board."""
    root = repo_root()
    board, implementation = _select(root, board_name, scheme, impl)
    elf, size = _build_checked(root, board, implementation, _stderr())
    image = {
        "board": board.name, "scheme": scheme, "impl": impl, "elf": str(elf),
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
        _print_json({"boards": [asdict(board) for board in found]})
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
        _print_json({"implementations": [asdict(row) for row in catalogue]})
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


def _default_run_dir(root: Path, board: Board, implementation: Implementation) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return root / "runs" / f"{stamp}-{board.name}-{implementation.scheme}-{implementation.impl}"


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=console, transient=True, disable=not console.is_terminal,
    )


@cli.command()
@click.option("--board", "board_name", default=VIRTUAL_BOARD, show_default=True)
@click.option("--scheme", required=True)
@click.option("--impl", required=True)
@click.option("--ops", "ops_text", default="keygen,sign,verify", show_default=True, help="Operations to report.")
@click.option("-n", "samples", default=10, show_default=True, type=click.IntRange(1, 2**32 - 1), help="Samples.")
@click.option("--seed", help="Master seed in hex (default: random; recorded in meta.json).")
@click.option("--msg-len", default=32, show_default=True, type=click.IntRange(0, 0xFFFF))
@click.option("--port", help="Serial port or pyserial URL of a real board.")
@click.option("--baud", type=click.IntRange(1), help="Baud rate (default: the board's).")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(0, min_open=True),
              help="Seconds to wait for each record of a sample.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Run directory (default: runs/<timestamp>-<board>-<scheme>-<impl>).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def run(ctx: click.Context, board_name, scheme, impl, ops_text, samples, seed, msg_len, port, baud, timeout,
        out, as_json) -> None:
    """Measure an implementation: build, run samples on the board, save and summarize them."""
    root = repo_root()
    board, implementation = _select(root, board_name, scheme, impl)
    ops = _parse_ops(ops_text)
    master_seed = _parse_seed(seed)
    if not board.is_virtual and port is None:
        raise PqscopeError(f"board {board.name} is reached over a serial port: pass --port (e.g. /dev/ttyACM0)")
    err = _stderr()
    if implementation.status != "ok":
        err.print(f"warning: the catalogue marks {scheme}/{impl} as '{implementation.status}'")
    elf, size = _build_checked(root, board, implementation, err)
    emulator = _build_emulator(root, err) if board.is_virtual else None
    if not board.is_virtual:
        err.print(f"note: pqscope does not flash yet: {elf} must be flashed onto the board")

    with RunDirectory(out or _default_run_dir(root, board, implementation)) as run_dir:
        meta = {
            "schema": 1, "tool_version": version("pqscope"), "command_line": sys.argv,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "board": board.name,
            "scheme": scheme, "impl": impl, "elf": str(elf), "image": asdict(size),
            "ops": [op.label for op in ops], "samples": samples, "msg_len": msg_len,
            "master_seed": master_seed.hex(), "seed_derivation": "sha256(master_seed || u32le(sample_id))",
            "status": "running", "samples_completed": 0,
        }
        run_dir.write_meta(meta)
        rows = []
        try:
            with connect(board, elf=elf, emulator=emulator, port=port, baud=baud or board.baud,
                         stats_path=run_dir.path / "vboard-stats.json", on_receive=run_dir.write_raw,
                         sample_timeout=timeout) as connection:
                info = connection.session.hello()
                check_info(info, board, implementation, msg_len)
                meta.update(port=connection.port, clock_hz=info.clock_hz, info=asdict(info))
                run_dir.write_meta(meta)
                with _progress(err) as progress:
                    task = progress.add_task(f"{scheme} {impl}", total=samples)
                    for sample_rows in capture(connection.session, ops=ops, samples=samples, msg_len=msg_len,
                                               master_seed=master_seed):
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
            err.print(f"interrupted after {meta['samples_completed']} of {samples} samples; "
                      f"data kept in {run_dir.path}")
            ctx.exit(130)

    document = run_document(board.name, info.clock_hz, run_dir.path,
                            summarize(rows, ops, implementation, size.text))
    if as_json:
        _print_json(document)
    else:
        # Wide enough that no figure is cut off, even when the output is not a terminal.
        print_results(Console(width=max(Console().width, RESULTS_WIDTH)), document)


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
            "model_cycles": stats.get("model_cycles"), "wall_seconds": stats.get("wall_seconds"),
        })
    # The first (ML-DSA-44) is the reference figure; every workload is listed under "benchmarks".
    document = {**benchmarks[0], "benchmarks": benchmarks}
    if as_json:
        _print_json(document)
        return
    table = Table("scheme", "impl", "model cycles", "wall s", "model cycles/s")
    for entry in benchmarks:
        table.add_row(entry["scheme"], entry["impl"], f"{entry['model_cycles']:,}", f"{entry['wall_seconds']:.2f}",
                      f"{entry['model_cycles_per_second']:,.0f}")
    Console().print(table)
