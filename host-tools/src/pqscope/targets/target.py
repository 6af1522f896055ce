"""Targets: what a command measures on. A target knows how to get an image of its board built and
running (the emulator loads it; a real board is flashed with OpenOCD), how to open a session with
it, what it can report besides the UART (the virtual board's profiler), and how to describe itself
in meta.json. Commands and the runner ask the target; only `kinds` looks at the board kind (the
kinds themselves: `virtual` and `serial`)."""

import contextlib
import copy
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.console import Console

from ..link.device import DeviceSession
from ..project.boards import Board
from ..project.build import (PLAIN, BuildError, ImageSize, Variant, build_image, build_impl_dir, check_fits,
                             image_path, read_size)
from ..project.catalogue import Implementation
from ..project.console import working
from ..project.errors import PqscopeError


@dataclass(frozen=True)
class Link:
    """How a command reaches a board: the connection options of `run`, `ct` and `compare-falcon`."""

    port: str | None = None
    baud: int | None = None
    timeout: float = 60.0  # seconds to wait for each record from a real board (the virtual board's wait is its model's)
    flash: bool = True  # flash the image before measuring (a board that needs flashing)
    adapter: str | None = None  # the serial number of the board's debug probe, where several are plugged in
    without_hse: bool = False  # the virtual board starts without its HSE (a real board's clock is its own)
    max_cycles: int | None = None  # the virtual board stops after this many cycles (a budget)


@dataclass(frozen=True)
class Profiling:
    """What the virtual board's profiler records: one line per call of `function` (the harness's
    function around a timed operation) in `intervals`, with the cycles of every function called in
    it, the time of `public_functions` booked apart, and the id of the sample it measured (the
    firmware's `SAMPLE_ID_SYMBOL`), by which the host joins it to the sample."""

    intervals: Path
    function: str
    public_functions: tuple[str, ...] = ()

    SAMPLE_ID_SYMBOL: ClassVar[str] = "pqs_current_sample_id"  # firmware/include/pqscope/harness.h

    def emulator_args(self) -> tuple[str, ...]:
        return ("--intervals", str(self.intervals), "--interval-function", self.function,
                "--interval-id-symbol", self.SAMPLE_ID_SYMBOL,
                *(arg for name in self.public_functions for arg in ("--public-function", name)))


@dataclass(frozen=True)
class Tainting:
    """What the virtual board's exact check records (its --taint options): per returned call of
    `function` (the harness's function around a timed signature), one line in `calls` with that
    call's findings, the instructions it ran, those no earlier call in the same emulator ran, and
    the id of the sample it signed; `options` declare the values a scheme publishes public."""

    calls: Path
    function: str
    options: tuple[str, ...] = ()

    # The emulator replays leaf calls whose inputs repeat, with the same results (docs/pages/
    # exact-check.md, "Leaf calls"); PQSCOPE_TAINT_LEAF_SUMMARIES=off tracks every call, to compare.
    LEAF_SUMMARIES_SWITCH: ClassVar[str] = "PQSCOPE_TAINT_LEAF_SUMMARIES"

    def emulator_args(self) -> tuple[str, ...]:
        every_call = ("--taint-leaf-summaries", "off") if os.environ.get(self.LEAF_SUMMARIES_SWITCH) == "off" else ()
        return ("--taint", str(self.calls.with_name("vboard-taint.json")), "--taint-function", self.function,
                "--taint-calls", str(self.calls), "--taint-id-symbol", Profiling.SAMPLE_ID_SYMBOL, *every_call,
                *self.options)


@dataclass
class Uart:
    """The UART of a board running an image: a pyserial-like port, its name, and (once closed)
    what the target measured of itself (the emulator's statistics)."""

    port: object
    name: str
    stats: dict | None = None


@dataclass
class Connection:
    """An open session with a board running an image. `stats` holds what the target measured of
    itself (the emulator's statistics) once the connection is closed."""

    session: DeviceSession
    port: str
    stats: dict | None = None


@dataclass(frozen=True)
class Image:
    elf: Path
    size: ImageSize


class Target:
    """A board the tool measures on; subclasses say how it is reached."""

    kind: ClassVar[str]
    profiles: ClassVar[bool] = False  # whether it reports per-function cycles (Profiling)
    taints: ClassVar[bool] = False  # whether it tracks the secret through every instruction (Tainting)

    def __init__(self, root: Path, board: Board, link: Link = Link()):
        self.root, self.board, self.link = root, board, link

    @staticmethod
    def runs_on(board: Board) -> str:
        raise NotImplementedError

    @classmethod
    def for_shards(cls, root: Path, board: Board, links: list[Link], jobs: int | None) -> list["Target"]:
        """The targets of a measurement cut into shards, one per shard: `jobs` shards (None: as
        many as the kind of target suggests) reached through `links`."""
        raise NotImplementedError

    def check(self) -> None:
        """Raises now, before any build, what would stop a measurement later."""

    def at_clock(self, name: str) -> "Target":
        """This target with its board's images built for and measured at the board's clock `name`."""
        other = copy.copy(self)
        other.board = self.board.at_clock(name)
        return other

    def prepare(self, console: Console) -> None:
        """Builds or starts what the target needs besides the image, before a run directory exists."""

    def image(self, implementation: Implementation, console: Console, variant: Variant = PLAIN,
              keys_held: int = 1) -> Image:
        """Builds (or finds up to date) the image of `implementation` for this board, checked to fit;
        `keys_held`: the key pairs the measurement holds at once (a constant-time test: two)."""
        implementation.check_builds_on(self.board.emulates or self.board.name)
        with working(console, f"building {variant.target(implementation.scheme, implementation.impl)}"):
            if implementation.directory is not None:
                elf = self._impl_dir_image(implementation, variant, keys_held, console)
            elif _reused is not None and not variant.probed and self._reuse_key(implementation) in _reused:
                elf = image_path(self.root, self.board, implementation.scheme, implementation.impl)
            else:
                elf = build_image(self.root, self.board, implementation.scheme, implementation.impl, variant)
                if _reused is not None and not variant.probed:
                    _reused.add(self._reuse_key(implementation))
        size = read_size(elf)
        check_fits(self.board, elf, size, implementation.stack_bytes)
        return Image(elf, size)

    def _impl_dir_image(self, implementation: Implementation, variant: Variant, keys_held: int,
                        console: Console) -> Path:
        """An --impl-dir image; where its key pool of two key pairs does not fit beside its stack
        and the measurement holds one key pair, the image with room for one (UOV's large keys, or a
        stack that fills nearly all of the board's RAM)."""
        def build(key_slots: int | None = None) -> Path:
            return build_impl_dir(self.root, self.board, implementation.directory, implementation.scheme,
                                  implementation.impl, implementation.stack_bytes, variant, key_slots)
        try:
            return build()
        except BuildError as error:
            if "too big for RAM" not in str(error):
                raise
            two_pairs = error
        elf = build(key_slots=1)  # fails as the first did if one key pair does not fit either
        if keys_held > 1:
            raise BuildError(f"{two_pairs}, with the two key pairs a constant-time test holds at once (with one, as "
                             f"pqscope run holds, it fits)")
        console.print(f"{elf.name}: its key pool holds one key pair, as two do not fit beside its stack in the "
                      f"board's RAM (pqscope ct, which needs two, cannot measure it)")
        return elf

    def _reuse_key(self, implementation: Implementation) -> tuple[str, str, str]:
        return self.board.build_tree, implementation.scheme, implementation.impl

    def uart(self, elf: Path, console: Console, *, stats_dir: Path,
             profiling: Profiling | None = None) -> contextlib.AbstractContextManager[Uart]:
        """The UART of the board running `elf`, opened before the image starts so that nothing it
        prints is missed; `stats_dir` receives the target's own statistics."""
        raise NotImplementedError

    @contextlib.contextmanager
    def connect(self, elf: Path, console: Console, *, stats_dir: Path,
                on_receive: Callable[[bytes], object] | None = None,
                profiling: Profiling | None = None) -> Iterator[Connection]:
        """A session with the harness firmware running `elf` (see `uart`); `profiling` (a Profiling
        or a Tainting) only where the target `profiles` or `taints`."""
        if isinstance(profiling, Profiling) and not self.profiles:
            raise PqscopeError(f"board {self.board.name} has no profiler: only the virtual board profiles")
        if isinstance(profiling, Tainting) and not self.taints:
            raise PqscopeError(f"board {self.board.name} cannot track the key through its instructions: the exact "
                               "check runs on the virtual board (--board virtual)")
        connection = None
        try:
            with self.uart(elf, console, stats_dir=stats_dir, profiling=profiling) as uart:
                connection = Connection(self._session(uart.port, on_receive), uart.name)
                yield connection
        finally:
            if connection is not None:
                connection.stats = uart.stats

    def flash(self, elf: Path, console: Console) -> None:
        raise NotImplementedError

    def describe(self) -> dict:
        """What meta.json records of the target."""
        return {"target": self.kind}

    def timing_model(self) -> str | None:
        """What prices the cycles besides the image, once prepared: None where silicon does."""
        return None

    def record_timeout(self) -> float | None:
        """Seconds to wait for each record: the link's, after which a real board is not answering;
        None: no deadline (the virtual board's: its port knows when nothing more will come)."""
        return self.link.timeout

    def for_samples(self, samples: int) -> "Target":
        """This target for a connection that measures up to `samples` samples: a real board as it
        is (the link's timeout bounds each record)."""
        return self

    def where(self) -> str:
        """The board in words, for messages about one board of several."""
        return f"the board on {self.link.port}" if self.link.port else self.board.name

    def _session(self, port, on_receive) -> DeviceSession:
        return DeviceSession(port, on_receive=on_receive, sample_timeout=self.link.timeout)


# The plain catalogue images built up to date in this process, by build tree, scheme and impl, while
# a job that measures many rows with several captures each asks for it (`reusing_images`: pqscope
# atlas, whose rows' samples, tests and exact checks each ask for their image); None: every request builds.
_reused: set[tuple[str, str, str]] | None = None


@contextlib.contextmanager
def reusing_images(built: list[tuple[Board, str, str]] = ()) -> Iterator[None]:
    """Within the block, a plain catalogue image is built once and then taken as it is (a resume
    still checks its code digest); `built` (board, scheme, impl) are up to date already."""
    global _reused
    previous, _reused = _reused, {(board.build_tree, scheme, impl) for board, scheme, impl in built}
    try:
        yield
    finally:
        _reused = previous
