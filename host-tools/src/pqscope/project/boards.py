"""Boards, from boards/<name>/board.json."""

from dataclasses import asdict, dataclass, replace
from pathlib import Path

from .errors import PqscopeError, match_name
from .metadata import load_json, require
from .toolchain import DEFAULT_TOOLCHAIN, Toolchain


@dataclass(frozen=True)
class Clock:
    """A clock configuration the board's images are built for: its own CMake preset."""

    name: str
    hz: int
    flash_wait_states: int
    cmake_preset: str
    description: str = ""

    def describe(self) -> str:
        return f"{self.hz / 1e6:g} MHz, {self.flash_wait_states} flash wait state{'s' if self.flash_wait_states != 1 else ''}"


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    mcu: str
    clock: Clock  # the one images are built for and measured at
    clocks: dict[str, Clock]
    flash_bytes: int
    ram_bytes: int
    baud: int
    runner: str  # how the board is reached: the kind of target (targets.TARGET_KINDS)
    emulates: str | None
    directory: Path  # boards/<name>/, which holds the flasher configuration
    emulator_chip: str | None = None  # the chip an emulated board's emulator models (--chip); None: its default
    toolchain: Toolchain = DEFAULT_TOOLCHAIN  # the compiler and optimisation level its images are built with
    timing_benchmarks: str | None = None  # the image of the timing model's micro-benchmarks for its chip

    @property
    def clock_hz(self) -> int:
        return self.clock.hz

    @property
    def cmake_preset(self) -> str:
        return self.clock.cmake_preset

    @property
    def build_tree(self) -> str:
        """The build tree (under build/) of the images for this clock and toolchain."""
        return self.toolchain.tree(self.cmake_preset)

    def at_clock(self, name: str) -> "Board":
        """The board with its images built for and measured at clock `name` (in any case)."""
        return replace(self, clock=self.clocks[match_name(f"clock of board {self.name}", name, self.clocks)])

    def built_with(self, toolchain: Toolchain) -> "Board":
        """The board with its images built by `toolchain`."""
        return replace(self, toolchain=toolchain)

    def describe(self) -> dict:
        """The board as JSON-ready data."""
        return {**asdict(self), "directory": str(self.directory)}

    @property
    def firmware_names(self) -> set[str]:
        """Names the firmware may report in INFO (the virtual board runs another board's image)."""
        return {self.name} | ({self.emulates} if self.emulates else set())


def load_boards(root: Path) -> dict[str, Board]:
    paths = {path.parent.name: path for path in sorted(root.glob("boards/*/board.json"))}
    raw = {name: load_json(path) for name, path in paths.items()}
    boards = {}
    for name, data in raw.items():
        emulates = data.get("emulates")
        if emulates:
            if emulates not in raw:
                raise PqscopeError(f"{paths[name]}: emulates unknown board '{emulates}'")
            # An emulating board inherits what it does not override (memory, clock, uart).
            data = raw[emulates] | data
        boards[name] = _board(name, data, paths[name])
    return boards


def get_board(root: Path, name: str) -> Board:
    """The board named `name`, in any case."""
    boards = load_boards(root)
    return boards[match_name("board", name, boards)]


def _board(name: str, data: dict, path: Path) -> Board:
    memory = require(data, "memory", path)
    clocks = {clock: Clock(clock, require(setting, "hz", path), require(setting, "flash_wait_states", path),
                           require(setting, "cmake_preset", path), setting.get("description", ""))
              for clock, setting in require(data, "clocks", path).items()}
    default = require(data, "clock", path)
    if default not in clocks:
        raise PqscopeError(f"{path}: clock '{default}' is not one of its clocks ({', '.join(clocks)})")
    return Board(
        name=name,
        description=data.get("description", ""),
        mcu=require(data, "mcu", path),
        clock=clocks[default],
        clocks=clocks,
        flash_bytes=require(require(memory, "flash", path), "bytes", path),
        ram_bytes=require(require(memory, "ram", path), "bytes", path),
        baud=require(require(data, "uart", path), "baud", path),
        runner=data.get("runner", "serial"),
        emulates=data.get("emulates"),
        directory=path.parent,
        emulator_chip=data.get("emulator", {}).get("chip"),
        timing_benchmarks=data.get("timing_benchmarks"),
    )
