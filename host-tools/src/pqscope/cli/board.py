"""The commands about a board itself: flash an image, check the virtual board's timing model against
one, serve the virtual board as a serial device, and time the emulator."""

import contextlib
import signal
from pathlib import Path

import click

from .. import views
from ..jobs.bench import emulator_speed
from ..jobs.modelcheck import run_model_check
from ..project.boards import get_board
from ..project.build import build_emulator
from ..project.console import stderr, working
from ..project.errors import PqscopeError
from ..project.paths import repo_root
from ..results.documents.bench import EmulatorSpeed
from ..results.documents.replay import FLASH_TIMINGS
from ..targets.kinds import open_target
from ..targets.target import Link
from ..targets.vboard_serve import DEFAULT_LINK, SerialDeviceServer
from .app import cli, show
from .options import JSON_OPTION, VIRTUAL_BOARD, connection_options, refuse_port_of_emulated, run_directory, select


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
    refuse_port_of_emulated(board, (connection["port"],))
    path = run_directory(root, out, board, "model-check")
    document = run_model_check(root, open_target(root, board, Link(**connection)), stderr(), path)
    views.write_pages(path)
    show("model-check", document, as_json)
    if not as_json:
        stderr().print(f"results: {path / 'model-check.json'}")
    if document.departures:
        ctx.exit(1)


@cli.command("vboard-serve")
@click.option("--link", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_LINK, show_default=True,
              help="Where the board's serial device (a pty) appears; its flash socket is beside it (PATH.flash).")
@click.option("--flash-timing", type=click.Choice(FLASH_TIMINGS), default="modelled", show_default=True,
              help="free: flash fetches cost nothing at any wait states, which runs an image built for 168 MHz "
                   "several times faster (for tests of function; its cycle counts are not a board's).")
@click.option("--without-hse", is_flag=True, help="Start the board without its HSE (see `run --without-hse`).")
@click.option("--board", "board_name", default=VIRTUAL_BOARD, show_default=True,
              help="The virtual board to serve: its emulator models that board's chip (nucleo-l4r5zi-virtual: "
                   "the STM32L4R5).")
def vboard_serve(link: Path, flash_timing: str, without_hse: bool, board_name: str) -> None:
    """Serve a virtual board as a serial device until Ctrl-C, for tools that flash and read a board
    themselves: pqm4's test.py, testvectors.py and benchmarks.py with host-tools/flashers on PATH, e.g.

    \b
    host-tools/pqscope vboard-serve &
    PATH=$PWD/host-tools/flashers:$PATH python3 test.py -p stm32f4discovery -u /tmp/pqscope-vboard ml-dsa-44
    host-tools/pqscope vboard-serve --board nucleo-l4r5zi-virtual &
    PATH=$PWD/host-tools/flashers:$PATH python3 test.py -p nucleo-l4r5zi -u /tmp/pqscope-vboard mayo1

    Each flash (host-tools/flashers/st-flash or openocd, as pqm4 calls them) starts the board afresh on the image."""
    root = repo_root()
    board = get_board(root, board_name)
    if board.emulates is None:
        raise PqscopeError(f"board {board.name} is reached over a serial port: vboard-serve serves a virtual board")
    with working(stderr(), "building the emulator"):
        emulator = build_emulator(root)
    args = (*(("--chip", board.emulator_chip) if board.emulator_chip else ()), "--flash-timing", flash_timing,
            *(("--hse", "absent") if without_hse else ()))
    server = SerialDeviceServer(emulator, link.absolute(), args, log=stderr().print)
    signal.signal(signal.SIGTERM, lambda *_: server.stop())
    with contextlib.suppress(KeyboardInterrupt):
        server.serve()


@cli.command("vboard-bench")
@JSON_OPTION
def vboard_bench(as_json: bool) -> None:
    """Measure the emulator's speed (model cycles per second) on signing workloads."""
    show("vboard-bench", EmulatorSpeed.from_json(emulator_speed(repo_root(), VIRTUAL_BOARD)), as_json)
