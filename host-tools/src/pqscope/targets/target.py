"""Targets: what a command measures on. A target knows how to get an image of its board built and
running (the emulator loads it; a real board is flashed with OpenOCD), how to open a session with
it, what it can report besides the UART (the virtual board's profiler), and how to describe itself
in meta.json. Commands and the runner ask the target; only `open_target` looks at the board kind.

The kinds, by the board's `runner` in board.json: "vboard" (the emulator, VirtualTarget) and
"serial" (a board on a serial port, SerialTarget); and a board of a labgrid farm (LabgridTarget),
whichever kind the place holds, when the command names places."""

import contextlib
import functools
import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.console import Console

from ..link.device import DeviceSession
from ..link.transport import open_port
from ..project.boards import Board, load_boards
from ..project.build import (PLAIN, ImageSize, Variant, build_emulator, build_image, build_impl_dir, check_fits,
                             read_size)
from ..project.catalogue import Implementation
from ..project.console import working
from ..project.errors import PqscopeError
from ..project.metadata import load_json
from .farm import FLASHABLE_PROBE, DebugProbe, Place, Resources, labgrid_client
from .flash import flash as openocd_flash
from .flash import flash_on_exporter
from .vboard import VirtualBoard, virtual_board_serial

STATS_FILE = "vboard-stats.json"


@dataclass(frozen=True)
class Link:
    """How a command reaches a board: the connection options of `run`, `ct` and `compare-falcon`."""

    port: str | None = None
    baud: int | None = None
    timeout: float = 60.0  # seconds to wait for each record
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

    def emulator_args(self) -> tuple[str, ...]:
        return ("--taint", str(self.calls.with_name("vboard-taint.json")), "--taint-function", self.function,
                "--taint-calls", str(self.calls), "--taint-id-symbol", Profiling.SAMPLE_ID_SYMBOL, *self.options)


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

    def prepare(self, console: Console) -> None:
        """Builds or starts what the target needs besides the image, before a run directory exists."""

    def image(self, implementation: Implementation, console: Console, variant: Variant = PLAIN) -> Image:
        """Builds (or finds up to date) the image of `implementation` for this board, checked to fit."""
        with working(console, f"building {variant.target(implementation.scheme, implementation.impl)}"):
            if implementation.directory is not None:
                elf = build_impl_dir(self.root, self.board, implementation.directory, implementation.scheme,
                                     implementation.impl, implementation.stack_bytes, variant)
            else:
                elf = build_image(self.root, self.board, implementation.scheme, implementation.impl, variant)
        size = read_size(elf)
        check_fits(self.board, elf, size, implementation.stack_bytes)
        return Image(elf, size)

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

    def replay_targets(self, emulator_args: tuple[str, ...]) -> list["Target"]:
        """The virtual boards that replay what this board measures, an emulator per core, started
        with `emulator_args`: those of the board that emulates this one, at its clock."""
        emulating = [board for board in load_boards(self.root).values() if board.emulates == self.board.name]
        if not emulating:
            raise PqscopeError(f"no virtual board emulates {self.board.name}: measure without the replay "
                               "(--no-replay)")
        board = emulating[0].at_clock(self.board.clock.name)
        return [VirtualTarget(self.root, board, number=number, emulator_args=emulator_args)
                for number in range(os.cpu_count() or 1)]

    def where(self) -> str:
        """The board in words, for messages about one board of several."""
        return f"the board on {self.link.port}" if self.link.port else self.board.name

    def _session(self, port, on_receive) -> DeviceSession:
        return DeviceSession(port, on_receive=on_receive, sample_timeout=self.link.timeout)


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
        args = (*(profiling.emulator_args() if profiling else ()), *self.emulator_args,
                *(("--hse", "absent") if self.link.without_hse else ()),
                *(("--max-cycles", str(self.link.max_cycles)) if self.link.max_cycles else ()))
        uart = None
        try:
            with VirtualBoard(self._emulator, elf, stats_path, extra_args=args, serial=self.serial) as vboard:
                with vboard.open_uart() as port:
                    uart = Uart(port, vboard.port)
                    yield uart
        finally:
            if uart is not None and stats_path.exists():
                uart.stats = load_json(stats_path)

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


class SerialTarget(Target):
    """A board on a serial port (a USB-TTL adapter on its UART), flashed through its debug probe."""

    kind = "serial"

    @staticmethod
    def runs_on(board: Board) -> str:
        return "serial port"

    @classmethod
    def for_shards(cls, root, board, links, jobs) -> list[Target]:
        """A board per shard, each on its own port."""
        if jobs is not None and jobs != len(links):
            raise PqscopeError(f"-j {jobs} with {len(links)} --port: each shard needs a board of its own; give "
                               "one --port per shard")
        if len(links) > 1 and any(link.flash and link.adapter is None for link in links):
            raise PqscopeError("several boards to flash: name each one's debug probe with --adapter-serial (once "
                               "per --port, in the same order), or flash them beforehand and pass --no-flash")
        return [cls(root, board, link) for link in links]

    def check(self) -> None:
        if self.link.port is None:
            raise PqscopeError(f"board {self.board.name} is reached over a serial port: pass --port "
                               "(e.g. /dev/ttyUSB0)")

    def flash(self, elf: Path, console: Console) -> None:
        with working(console, f"flashing {elf.name} onto {self.board.name}"):
            openocd_flash(self.board, elf, self.link.adapter)

    @contextlib.contextmanager
    def uart(self, elf, console, *, stats_dir, profiling=None) -> Iterator[Uart]:
        self.check()
        with open_port(self.link.port, self.link.baud or self.board.baud) as port:
            # Flashed with the port already open, so the port is checked first and the boot
            # announcement of the new image is not missed.
            if self.link.flash:
                self.flash(elf, console)
            yield Uart(port, self.link.port)

    def describe(self) -> dict:
        return {**super().describe(), "port": self.link.port}


class LabgridTarget(Target):
    """A board of a labgrid farm: its place is acquired from the coordinator for the measurement,
    its serial port reached over RFC 2217, and the place released on exit, on error and on Ctrl-C."""

    kind = "labgrid"

    def __init__(self, root: Path, board: Board, link: Link, place: Place):
        super().__init__(root, board, link)
        self.place = place

    @contextlib.contextmanager
    def uart(self, elf, console, *, stats_dir, profiling=None) -> Iterator[Uart]:
        with working(console, f"acquiring labgrid place {self.place.name}"):
            self.place.acquire()
        try:
            resources = self.place.resources()
            probe = self._probe(resources) if self.link.flash else None
            # A place without a debug probe keeps its image: the device's INFO is checked instead.
            with open_port(resources.serial_url, self.link.baud or resources.baud or self.board.baud) as port:
                # Flashed with the port open, so that the new image's boot announcement is not missed.
                if probe is not None:
                    self._flash(probe, elf, console)
                yield Uart(port, resources.serial_url)
        finally:
            self.place.release()

    def flash(self, elf: Path, console: Console) -> None:
        with working(console, f"acquiring labgrid place {self.place.name}"):
            self.place.acquire()
        try:
            probe = self._probe(self.place.resources())
            if probe is None:
                raise PqscopeError(f"labgrid place {self.place.name} has no debug probe to flash its board with")
            self._flash(probe, elf, console)
        finally:
            self.place.release()

    def _probe(self, resources: Resources) -> DebugProbe | None:
        """The place's probe if pqscope can flash through it; a probe it cannot use is an error."""
        probe = resources.debug_probe
        if probe is not None and not probe.flashable:
            raise PqscopeError(f"labgrid place {self.place.name}: its debug probe ({probe.resource}) is not an "
                               f"exported USB debugger ({FLASHABLE_PROBE}) that OpenOCD reaches on its exporter; "
                               "flash its board beforehand and pass --no-flash")
        return probe

    def _flash(self, probe: DebugProbe, elf: Path, console: Console) -> None:
        with working(console, f"flashing {elf.name} onto labgrid place {self.place.name}"):
            flash_on_exporter(self.board, elf, probe.host, probe.usb_location, self.place.name)

    def describe(self) -> dict:
        return {**super().describe(), "place": self.place.name}

    def where(self) -> str:
        return f"labgrid place {self.place.name}"


TARGET_KINDS: dict[str, type[Target]] = {"vboard": VirtualTarget, "serial": SerialTarget}


def target_kind(board: Board) -> type[Target]:
    if board.runner not in TARGET_KINDS:
        raise PqscopeError(f"board {board.name}: unknown runner '{board.runner}' in board.json; valid: "
                           f"{', '.join(TARGET_KINDS)}")
    return TARGET_KINDS[board.runner]


def open_target(root: Path, board: Board, link: Link = Link()) -> Target:
    """The target that measures on `board`, reached as `link` says."""
    _check_link(board, link)
    return target_kind(board)(root, board, link)


def _check_link(board: Board, link: Link) -> None:
    if link.without_hse and target_kind(board) is not VirtualTarget:
        raise PqscopeError(f"--without-hse starts the virtual board without its HSE; board {board.name}'s clock is its "
                           "own: leave the option out")
    if link.max_cycles and target_kind(board) is not VirtualTarget:
        raise PqscopeError(f"a budget of cycles stops the virtual board; board {board.name} runs as long as it runs")


def open_shard_targets(root: Path, board: Board, links: list[Link], jobs: int | None = None,
                       places: tuple[str, ...] = (), coordinator: str | None = None) -> list[Target]:
    """The targets of a measurement on `board` cut into shards: a board per labgrid place in
    `places`, else as its kind says (see Target.for_shards)."""
    _check_link(board, links[0])
    if not places:
        return target_kind(board).for_shards(root, board, links, jobs)
    if target_kind(board) is VirtualTarget:
        raise PqscopeError(f"board {board.name} is emulated here; labgrid places hold real boards: name their "
                           "kind with --board (e.g. stm32f4discovery)")
    if jobs is not None and jobs != len(places):
        raise PqscopeError(f"-j {jobs} with {len(places)} --labgrid-place: each shard needs a place of its own")
    client = labgrid_client(root)
    return [LabgridTarget(root, board, links[0], Place(name, coordinator, client)) for name in places]
