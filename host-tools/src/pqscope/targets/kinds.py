"""Which target measures on a board: the kind its board.json names ("vboard": the emulator;
"serial": a board on a serial port), a labgrid place's board when the command names places, and
the virtual boards that replay a real board's measurement."""

import os
from pathlib import Path

from ..project.boards import Board, load_boards
from ..project.errors import PqscopeError
from .farm import Place, labgrid_client
from .serial import LabgridTarget, SerialTarget
from .target import Link, Target
from .virtual import VirtualTarget

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


def replay_board(target: Target) -> Board:
    """The virtual board that emulates `target`'s board, at its clock (raises if there is none)."""
    emulating = [board for board in load_boards(target.root).values() if board.emulates == target.board.name]
    if not emulating:
        raise PqscopeError(f"no virtual board emulates {target.board.name}: measure without the replay "
                           "(--no-replay)")
    return emulating[0].at_clock(target.board.clock.name)


def replay_targets(target: Target, emulator_args: tuple[str, ...]) -> list[Target]:
    """The virtual boards that replay what `target` measures, an emulator per core, started with
    `emulator_args`: those of the board that emulates its board, at its clock."""
    board = replay_board(target)
    return [VirtualTarget(target.root, board, number=number, emulator_args=emulator_args)
            for number in range(os.cpu_count() or 1)]
