"""What a command measures: the board at its clock, the capture, and its members (one
implementation, or a suite's), each new, to go on with where an interrupted run stopped, or
complete; a suite's manifest written before any member starts."""

import sys
from dataclasses import dataclass
from pathlib import Path

from ..link.protocol import Op
from ..project.boards import Board, get_board
from ..project.catalogue import Implementation, find_implementation, implementation_from_dir
from ..project.discovery import find_row, load_rows
from ..project.toolchain import DEFAULT_TOOLCHAIN, Toolchain
from ..results.rundir import (check_samples, is_suite, member_state, read_samples, resume_parameters, start_suite,
                              suite_parameters)
from ..results.runmeta import RunMeta, timestamp
from .capture import Capture, SampleCapture, variant_from_json, variant_json


@dataclass(frozen=True)
class Member:
    """One implementation of a run or suite, and where it stands."""

    implementation: Implementation
    path: Path
    resume_from: RunMeta | None = None  # the meta.json of an interrupted run to go on with
    complete: bool = False  # measured to the end before: kept as it is


def member_path(suite: Path, implementation: Implementation) -> Path:
    return suite / f"{implementation.scheme}-{implementation.impl}"


def new_suite(path: Path, board: Board, implementations: list[Implementation], what: SampleCapture, *,
              ct_signatures: int = 0, ct_replay: bool = True) -> list[Member]:
    """A suite directory whose manifest (suite.json) lists its members and shared parameters (and
    the signatures of each member's constant-time test, 0: none, and whether a board's test is
    replayed), written before any member starts so that a killed suite can be resumed as a whole."""
    start_suite(path, {
        "schema": 1, "kind": "suite", "command_line": sys.argv, "started_at": timestamp(), "board": board.name,
        "clock": board.clock.name, "toolchain": board.toolchain.to_json(),
        "members": [{"scheme": row.scheme, "impl": row.impl} for row in implementations],
        "ops": [op.label for op in what.ops], "samples": what.samples, "msg_len": what.msg_len,
        "master_seed": what.master_seed.hex(), **({"variant": variant_json(what.variant)} if what.variant.probed else {}),
        "ct_signatures": ct_signatures, "ct_replay": ct_replay,
    })
    return [Member(row, member_path(path, row)) for row in implementations]


def resumed_implementation(root: Path, meta: RunMeta) -> Implementation:
    """The implementation a run measured: its own directory (--impl-dir), a catalogue row or a discovered one."""
    if meta.impl_dir is not None:
        return implementation_from_dir(Path(meta.impl_dir), meta.scheme, meta.impl, meta.impl_stack_bytes)
    return find_row(root, meta.scheme, meta.impl)


@dataclass(frozen=True)
class Measurement:
    """What a command measures: the board at its clock, the capture, and its members (one
    implementation, or a suite's), each new, to go on with, or complete."""

    board: Board
    what: Capture
    members: list[Member]


def resumed(root: Path, path: Path, kind: type[Capture]) -> Measurement:
    """What resuming the measurement at `path` (a capture of `kind`, or a suite of runs) measures,
    with the parameters it began with (meta.json, or a suite's suite.json): complete members stay
    as they are, the interrupted one goes on, those never started start."""
    if kind is SampleCapture and is_suite(path):
        return _resumed_suite(root, path)
    meta = resume_parameters(path, kind=kind.kind)
    if meta.status == "complete" and kind is SampleCapture:  # nothing to measure, but a damaged one is refused
        check_samples(path / kind.samples_name, read_samples(path / kind.samples_name)[0], meta.seed)
    return Measurement(resumed_board(root, meta), kind.from_meta(meta),
                       [Member(resumed_implementation(root, meta), path, meta, meta.status == "complete")])


def _resumed_suite(root: Path, path: Path) -> Measurement:
    manifest = suite_parameters(path)
    what = SampleCapture(tuple(op for op in Op if op.label in manifest["ops"]), manifest["samples"],
                         bytes.fromhex(manifest["master_seed"]), manifest["msg_len"],
                         variant=variant_from_json(manifest.get("variant")))
    catalogue = load_rows(root)
    members = []
    for entry in manifest["members"]:
        implementation = find_implementation(catalogue, entry["scheme"], entry["impl"])
        run_path = member_path(path, implementation)
        meta = member_state(run_path)
        complete = meta is not None and meta.status == "complete" and meta.samples_completed == meta.samples
        members.append(Member(implementation, run_path, meta, complete))
    return Measurement(board_at_clock(root, manifest["board"], manifest.get("clock"),
                                      Toolchain.from_json(manifest.get("toolchain"))), what, members)


def board_at_clock(root: Path, name: str, clock: str | None, built_with: Toolchain = DEFAULT_TOOLCHAIN) -> Board:
    """Board `name` at clock `clock` (None: its default one), its images built `built_with`."""
    board = get_board(root, name)
    return (board.at_clock(clock) if clock else board).built_with(built_with)


def resumed_board(root: Path, meta: RunMeta) -> Board:
    """The board a run measured on, at the clock it measured at, its images built as they were
    (older runs: the defaults)."""
    return board_at_clock(root, meta.board, meta.clock, Toolchain.from_json(meta.toolchain))
