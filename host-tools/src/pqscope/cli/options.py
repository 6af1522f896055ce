"""The options several commands share, and what they are turned into: the board and the
implementation selected, the runner that reaches the boards, seeds, operations, and the
parameters a resumed measurement takes from its meta.json instead."""

import secrets
import time
from itertools import zip_longest
from pathlib import Path

import click
from rich.console import Console

from ..link.protocol import Op
from ..measure.capture import Capture
from ..measure.measurement import board_at_clock
from ..measure.runner import Runner
from ..project.boards import Board
from ..project.build import MAX_MSG_BYTES, PLAIN, Variant
from ..project.catalogue import IMPL_DIR_STACK_BYTES, Implementation, implementation_from_dir
from ..project.console import stderr
from ..project.discovery import find_row
from ..project.errors import PqscopeError
from ..project.toolchain import COMPILERS, DEFAULT_TOOLCHAIN, OPT_LEVELS, Toolchain
from ..targets.kinds import open_shard_targets, open_target
from ..targets.target import Link
from ..views import write_pages

VIRTUAL_BOARD = "virtual"
RESULTS_WIDTH = 190


def wide_console() -> Console:
    """Wide enough that no figure is cut off, even when the output is not a terminal."""
    return Console(width=max(Console().width, RESULTS_WIDTH))


def _decorate(*options):
    def decorate(command):
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


CLOCK_OPTION = click.option(
    "--clock", "clock_name", help="The board's clock the image is built for and measured at (board.json \"clocks\"): "
                                  "benchmark (24 MHz, 0 flash wait states; the default) or fast (168 MHz, 5 wait states "
                                  "behind the ART accelerator).")
TOOLCHAIN_OPTIONS = _decorate(
    click.option("--compiler", type=click.Choice(COMPILERS),
                 help="The compiler of the image's C, the harness's included: gcc12 (Debian's arm-none-eabi-gcc; the "
                      "default), gcc11 (GCC 11.3, pqm4's) or clang (Debian's clang/LLVM for thumbv7em-none-eabihf); "
                      "assembly and linking stay arm-none-eabi-gcc's."),
    click.option("--opt", "opt_level", metavar="LEVEL",
                 help=f"The optimisation level of all of the image's C: {', '.join(OPT_LEVELS[1:])} (the dash may be "
                      f"left out: Os), or {OPT_LEVELS[0]} (the catalogue's own flags, -O3 as pqm4; the default). Each "
                      "toolchain other than the default builds in a tree of its own, build/<preset>.<compiler>.<level>."))


JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
REPORT_OPTION = click.option("--report/--no-report", "with_report", default=True, show_default=True,
                             help="Write report.md and report.html (`pqscope report --format md|html` prints them "
                                  "later).")
SEED_OPTION = click.option("--seed", help="Master seed in hex (default: random; recorded in meta.json).")


def _message_length(ctx: click.Context, param: click.Parameter, value: int) -> int:
    """Refused before anything starts (a run directory, the board) if no image can sign it."""
    if value > MAX_MSG_BYTES:
        raise click.BadParameter(f"{value} bytes: an image signs messages of at most {MAX_MSG_BYTES:,} bytes "
                                 "(its message buffer, PQS_MAX_MSG_BYTES)")
    return value


MSG_LEN_OPTION = click.option("--msg-len", default=32, show_default=True, type=click.IntRange(0), metavar="BYTES",
                              callback=_message_length,
                              help=f"Length of the messages signed, at most {MAX_MSG_BYTES:,} bytes.")


def implementation_options(board_default: str | None = VIRTUAL_BOARD):
    """--board, --scheme, --impl, --impl-dir and --stack-bytes: what to measure, and where."""
    board = (click.option("--board", "board_name", default=board_default, show_default=True) if board_default else
             click.option("--board", "board_name", required=True))
    return _decorate(
        board, click.option("--scheme"), click.option("--impl"),
        click.option("--impl-dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
                     help="Your own implementation: a directory with the pqm4/NIST signature API (api.h); "
                          "--scheme/--impl name it (default: its parent's and its own name)."),
        click.option("--stack-bytes", type=click.IntRange(1024), metavar="BYTES",
                     help=f"The stack to reserve for --impl-dir's implementation at link time (default "
                          f"{IMPL_DIR_STACK_BYTES}); an image whose data, bss and stack exceed the board's RAM is "
                          "refused."))


def probe_options(command):
    """--probes and --probe NAME: measure with the probed image (see `variant`)."""
    return _decorate(
        click.option("--probes", "probed", is_flag=True,
                     help="Use the probed image: the device times the functions its catalogue row names "
                          "(retry_function, public_functions, probes) and --probe NAMEs, as a real board can; on the "
                          "virtual board they replace the profiler."),
        click.option("--probe", "probe_names", multiple=True, metavar="NAME",
                     help="Also probe function NAME (repeatable; implies --probes). It must be called across object "
                          "files: static or inlined functions cannot be probed."))(command)


def resume_option(command):
    """--resume DIR: go on with an interrupted measurement (see `refuse_fixed_options`)."""
    return click.option("--resume", "resume_path", type=click.Path(exists=True, file_okay=False, path_type=Path),
                        help="Continue an interrupted measurement in this directory to its -n, with its parameters "
                             "(meta.json, or a suite's suite.json), on any boards: -j, --port, --labgrid-place and "
                             "the other connection options may be given again.")(command)


def variant(probed: bool, probe_names: tuple[str, ...]) -> Variant:
    return Variant(True, tuple(dict.fromkeys(probe_names))) if probed or probe_names else PLAIN


def connection_options(timeout: float, *, shards: bool = False):
    """--port, --baud, --timeout and --flash: how a command reaches a real board (a Link); with
    `shards`, also -j, --adapter-serial and the labgrid options, and --port may be given once per
    board. The command passes them on as `**connection` (see `runner` and `shard_runner`)."""
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
    return _decorate(
        port,
        click.option("--baud", type=click.IntRange(1), help="Baud rate (default: the board's)."),
        click.option("--timeout", default=timeout, show_default=True, type=click.FloatRange(0, min_open=True),
                     help="Seconds to wait for each record from a real board. The virtual board takes none: its "
                          "records are awaited while its emulator runs, within a budget of model cycles."),
        click.option("--flash/--no-flash", "flash", default=True, show_default=True,
                     help="Flash the image onto a real board before measuring."),
        click.option("--without-hse", is_flag=True,
                     help="Start the virtual board without its HSE, as a Discovery whose ST-LINK gives no clock: the "
                          "image falls back to the HSI and says so."),
        *sharding)


def runner(root: Path, board: Board, *, port, baud, flash, timeout=Link.timeout, without_hse=False,
           capture: Capture | None = None) -> Runner:
    """The runner of a measurement (of `capture`, if known) on one board (connection_options
    without shards; `timeout` a real board's only)."""
    refuse_port_of_emulated(board, (port,))
    return Runner(open_target(root, board, Link(port, baud, timeout, flash, without_hse=without_hse)), stderr(),
                  capture, report=write_pages)


def shard_runner(root: Path, board: Board, *, ports, baud, timeout, flash, without_hse, jobs, adapters, places,
                 coordinator, capture: Capture | None = None) -> Runner:
    """The runner of a measurement (of `capture`, if known) cut into shards (connection_options
    with shards)."""
    refuse_port_of_emulated(board, ports)
    if adapters and len(adapters) != len(ports):
        raise PqscopeError(f"{len(adapters)} --adapter-serial for {len(ports)} --port: give one per --port, in the "
                           "same order")
    if places and ports:
        raise PqscopeError("--port and --labgrid-place both name boards: give one or the other")
    links = [Link(port, baud, timeout, flash, adapter, without_hse)
             for port, adapter in zip_longest(ports or (None,), adapters)]
    return Runner(open_shard_targets(root, board, links, jobs, places, coordinator), stderr(), capture,
                  report=write_pages)


def refuse_port_of_emulated(board: Board, ports: tuple[str | None, ...]) -> None:
    """--port names a real board's serial port: with an emulated board (the default, virtual) it
    would be ignored, and the numbers would not be the board the user meant."""
    given = [port for port in ports if port]
    if given and board.emulates:
        raise PqscopeError(f"--port {given[0]} names a real board's serial port, but board {board.name} emulates "
                           f"{board.emulates} here: give --board {board.emulates} to measure the board on that port, "
                           "or leave --port out")


def own_implementation(impl_dir: Path | None, scheme: str | None, impl: str | None,
                       stack_bytes: int | None) -> Implementation | None:
    """The --impl-dir implementation, if one is given; --stack-bytes sizes only that one's stack."""
    if impl_dir is None:
        if stack_bytes is not None:
            raise PqscopeError("--stack-bytes sizes the stack of your own implementation (--impl-dir); a catalogue "
                               "row reserves its own (catalogue.json \"stack_bytes\")")
        return None
    return implementation_from_dir(impl_dir, scheme, impl, stack_bytes)


def select(root: Path, board_name: str, scheme: str | None, impl: str | None, impl_dir: Path | None = None,
           stack_bytes: int | None = None, clock_name: str | None = None,
           built_with: Toolchain = DEFAULT_TOOLCHAIN) -> tuple[Board, Implementation]:
    board = board_at_clock(root, board_name, clock_name, built_with)
    own = own_implementation(impl_dir, scheme, impl, stack_bytes)
    if own is not None:
        return board, own
    if scheme is None or impl is None:
        raise PqscopeError("give --scheme and --impl (or --impl-dir with your own implementation)")
    return board, find_row(root, scheme, impl)


def run_directory(root: Path, out: Path | None, board: Board, name: str) -> Path:
    """--out, or runs/<timestamp>-<board>-<name>."""
    return out or root / "runs" / f"{time.strftime('%Y%m%d-%H%M%S')}-{board.name}-{name}"


def parse_ops(text: str) -> tuple[Op, ...]:
    names = {op.label: op for op in Op}
    ops = []
    for name in filter(None, (part.strip() for part in text.split(","))):
        if name not in names:
            raise PqscopeError(f"unknown op '{name}'; valid: {', '.join(names)}")
        ops.append(names[name])
    if not ops:
        raise PqscopeError("--ops names no operation")
    return tuple(sorted(set(ops)))


def parse_member(text: str) -> tuple[str, str]:
    """A catalogue row named SCHEME/IMPL (--member, --row)."""
    scheme, slash, impl = text.partition("/")
    if not (scheme and slash and impl):
        raise PqscopeError(f"--member {text}: give SCHEME/IMPL, e.g. ml-dsa-44/m4f")
    return scheme, impl


def parse_seed(text: str | None) -> bytes:
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


# The parameters a measurement takes from its meta.json (or a suite's suite.json) on --resume, by
# their option names.
RESUME_FIXED = {"board_name": "--board", "clock_name": "--clock", "scheme": "--scheme", "impl": "--impl",
                "impl_dir": "--impl-dir", "stack_bytes": "--stack-bytes", "ops_text": "--ops", "samples": "-n",
                "signatures": "-n", "seed": "--seed", "msg_len": "--msg-len", "out": "--out", "probed": "--probes",
                "probe_names": "--probe", "key_refresh": "--key-refresh", "fixed_n": "--fixed-n",
                "bound_percent": "--bound", "taint_check": "--taint", "replay": "--replay/--no-replay",
                "replay_flash_timing": "--replay-flash-timing", "ct_signatures": "--ct-n",
                "exact_signatures": "--taint-n",
                "members": "--member", "compiler": "--compiler", "opt_level": "--opt", "rows": "--row",
                "compilers": "--compiler", "levels": "--opt"}


def refuse_fixed_options(ctx: click.Context, allowed: tuple[str, ...] = ()) -> None:
    given = [option for name, option in RESUME_FIXED.items() if name in ctx.params and name not in allowed
             and ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
    if given:
        raise PqscopeError(f"--resume takes the run's parameters from its meta.json; drop {', '.join(given)}")
