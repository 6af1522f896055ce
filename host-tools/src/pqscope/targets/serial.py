"""Real boards as targets: a board on a serial port of this machine (a USB-TTL adapter on its UART,
flashed through its debug probe), or a board of a labgrid farm's place, reached over RFC 2217 and
flashed on its exporter."""

import contextlib
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console

from ..link.device import DeviceTimeout
from ..link.transport import open_port
from ..project.boards import Board
from ..project.console import working
from ..project.errors import PqscopeError
from .farm import FLASHABLE_PROBE, DebugProbe, Place, Resources
from .flash import flash as openocd_flash
from .flash import flash_on_exporter
from .target import Link, Target, Uart


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
        baud = self.link.baud or self.board.baud
        with open_port(self.link.port, baud) as port:
            # Flashed with the port already open, so the port is checked first and the boot
            # announcement of the new image is not missed.
            if self.link.flash:
                self.flash(elf, console)
            try:
                yield Uart(port, self.link.port)
            except DeviceTimeout as silence:  # a board that does not answer: the line is the first suspect
                raise DeviceTimeout(f"{silence}; check the baud rate ({baud}) and the wiring of "
                                    f"{self.link.port} to the board's UART") from None

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
