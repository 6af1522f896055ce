"""The virtual board as a target: the emulator loads the image itself, prices every cycle with its
timing model, and profiles or taint-tracks what it runs.

A record from it is awaited without a wall-clock deadline: how long the emulator takes depends on
how busy the machine is, never what it computes. The wait ends with the record, with the device
waiting for input (the answer is lost), or with the emulator's end (its error: a crash, a signal,
or its budget of model cycles, --max-cycles, which bounds a firmware that never answers)."""

import contextlib
import copy
import dataclasses
import functools
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console

from ..link.device import DeviceError, DeviceSession, OutOfBounds
from ..project.boards import Board
from ..project.build import build_emulator
from ..project.console import working
from ..project.errors import PqscopeError
from ..project.metadata import load_json
from .target import Link, Target, Uart
from .vboard import VBoardError, VirtualBoard, virtual_board_serial

# A budget of model cycles per sample, far beyond any row's key generation, signing and both
# verifications (the slowest in pqm4's benchmarks.md, SPHINCS+-SHAKE-192s's signing, takes 4.3 x 10^10;
# the exact check's emulator counts the same cycles): 2^40, some 12 hours of a 24 MHz board.
SAMPLE_CYCLES = 1 << 40
STATS_FILE = "vboard-stats.json"
REPLAY_STATS_FILE = "vboard-replay-stats.json"


class VirtualTarget(Target):
    """The virtual board: the emulator loads the image itself and profiles what it runs."""

    kind = "virtual"
    profiles = True
    taints = True

    @staticmethod
    def runs_on(board: Board) -> str:
        return f"emulator ({board.emulates} images)"

    @classmethod
    def for_shards(cls, root, board, links, jobs) -> list[Target]:
        """An emulator per shard, as many as the machine has cores unless `jobs` says, each a board
        with a serial number of its own."""
        return [cls(root, board, links[0], number=number) for number in range(jobs or os.cpu_count() or 1)]

    def flash(self, elf: Path, console: Console) -> None:
        raise PqscopeError(f"board {self.board.name} is emulated: it loads the image itself, there is nothing "
                           "to flash")

    def __init__(self, root: Path, board: Board, link: Link = Link(), *, emulator: Path | None = None,
                 number: int = 0, emulator_args: tuple[str, ...] = ()):
        super().__init__(root, board, link)
        self._emulator = emulator  # None: built from the host tree
        self.serial = virtual_board_serial(number)
        self.emulator_args = emulator_args  # given to every emulator it starts (e.g. --taint)

    def prepare(self, console: Console) -> None:
        if self._emulator is not None:
            return
        with working(console, "building the emulator"):
            self._emulator = _emulator_built(self.root)

    @contextlib.contextmanager
    def uart(self, elf, console, *, stats_dir, profiling=None) -> Iterator[Uart]:
        self.prepare(console)
        stats_path = stats_dir / STATS_FILE
        args = (*(("--chip", self.board.emulator_chip) if self.board.emulator_chip else ()),
                *(profiling.emulator_args() if profiling else ()), *self.emulator_args,
                *(("--hse", "absent") if self.link.without_hse else ()),
                *(("--max-cycles", str(self.link.max_cycles)) if self.link.max_cycles else ()))
        uart = None
        try:
            with VirtualBoard(self._emulator, elf, stats_path, extra_args=args, serial=self.serial) as vboard:
                with vboard.open_uart() as port:
                    uart = Uart(port, vboard.port)
                    yield uart
        except OutOfBounds as violation:
            raise self._at_the_instruction(elf, violation, stats_dir, args) from None
        finally:
            if uart is not None and stats_path.exists():
                uart.stats = load_json(stats_path)

    def _at_the_instruction(self, elf: Path, violation: OutOfBounds, stats_dir: Path,
                            args: tuple[str, ...]) -> DeviceError:
        """The sample the harness found out of bounds, replayed on a board that watches the
        harness's memory (slower: only for this): its error names the storing instruction, its
        function and source line. The harness's own error if the replay does not stop there."""
        try:
            with VirtualBoard(self._emulator, elf, stats_dir / REPLAY_STATS_FILE, extra_args=(*args, "--watch-guards"),
                              serial=self.serial) as vboard:
                with vboard.open_uart() as port:
                    session = self._session(port, None)
                    session.hello()
                    for command in violation.commands:
                        session.replay(command)
        except VBoardError as error:
            return error
        except DeviceError:
            pass  # the harness's error again: the emulator did not see the store
        return violation

    def for_samples(self, samples: int) -> "VirtualTarget":
        """This target with its emulator's budget of model cycles for `samples` samples (and its
        boot), unless the link gives one."""
        if self.link.max_cycles is not None:
            return self
        other = copy.copy(self)
        other.link = dataclasses.replace(self.link, max_cycles=(samples + 1) * SAMPLE_CYCLES)
        return other

    def record_timeout(self) -> None:
        return None  # see the module's description

    def _session(self, port, on_receive) -> DeviceSession:
        return DeviceSession(port, on_receive=on_receive, answer_timeout=None, sample_timeout=None)

    def describe(self) -> dict:
        return {**super().describe(), **({"hse": "absent"} if self.link.without_hse else {})}

    def timing_model(self) -> str | None:
        """The emulator executable's SHA-256: its cost model prices every cycle, so a resumed run
        must be measured by the same one."""
        return _file_digest(self._emulator) if self._emulator is not None else None


@functools.cache
def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as error:
        raise PqscopeError(f"cannot read the emulator {path}: {error.strerror}") from None


@functools.cache
def _emulator_built(root: Path) -> Path:
    """The emulator, built once per process (every shard's target runs the same one)."""
    return build_emulator(root)
