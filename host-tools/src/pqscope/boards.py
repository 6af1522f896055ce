"""Boards, from boards/<name>/board.json."""

from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import PqscopeError, UnknownNameError
from .metadata import load_json, require


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    mcu: str
    clock_hz: int
    flash_bytes: int
    ram_bytes: int
    baud: int
    cmake_preset: str
    runner: str  # how the board is reached: the kind of target (targets.TARGET_KINDS)
    emulates: str | None
    directory: Path  # boards/<name>/, which holds the flasher configuration

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
    boards = load_boards(root)
    if name not in boards:
        raise UnknownNameError("board", name, list(boards))
    return boards[name]


def _board(name: str, data: dict, path: Path) -> Board:
    memory = require(data, "memory", path)
    return Board(
        name=name,
        description=data.get("description", ""),
        mcu=require(data, "mcu", path),
        clock_hz=require(data, "clock_hz", path),
        flash_bytes=require(require(memory, "flash", path), "bytes", path),
        ram_bytes=require(require(memory, "ram", path), "bytes", path),
        baud=require(require(data, "uart", path), "baud", path),
        cmake_preset=require(data, "cmake_preset", path),
        runner=data.get("runner", "serial"),
        emulates=data.get("emulates"),
        directory=path.parent,
    )
