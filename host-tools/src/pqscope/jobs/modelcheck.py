"""`pqscope model-check`: the timing model's micro-benchmarks on a board.

The board's image of them (board.json "timing_benchmarks": `vboard-trm` for the Discovery,
`vboard-l4r5-trm` for the Nucleo-L4R5ZI; tests/vboard/trm.c and trm_bench.S) times each short
instruction sequence between two reads of the DWT cycle counter and prints one line per sequence:
the cycles it took, the cycles the virtual board's model prices it at and, where one is published, a
measurement of the same sequence on an STM32 Cortex-M4. On the virtual board every sequence must
take what the model says (the emulator prices what the model says); on a real board, the sequences
that do not are where the model is wrong, which is the evidence the model's open questions need
(docs/pages/results/model-accuracy.md)."""

import re
import time
from collections.abc import Iterable
from pathlib import Path

from rich.console import Console

from ..project.build import build_test_image
from ..project.errors import PqscopeError
from ..results.documents.model_check import ModelCheck, Sequence
from ..results.rundir import write_atomically
from ..results.store import save
from ..targets.target import Target

FIRST_LINE = re.compile(r"empty measurement: (\d+) cycles")
SEQUENCE_LINE = re.compile(r"(PASS|FAIL) (\w+): (\d+) cycles, model (\d+)(?:\.\.(\d+))?(?:, silicon (\d+))?")
SUMMARY_LINE = re.compile(r"TRM: (?:all (\d+) passed|FAILED (\d+) failed)")


class ModelCheckError(PqscopeError):
    pass


def parse_output(lines: Iterable[str], board: str, target: dict) -> ModelCheck:
    """The image's lines from its first ("empty measurement") to its summary, checked whole: every
    line in between is a sequence and the summary counts them."""
    empty = None
    sequences: list[Sequence] = []
    for number, line in enumerate(lines, 1):
        if empty is None:
            if match := FIRST_LINE.fullmatch(line):
                empty = int(match[1])
            continue
        if match := SEQUENCE_LINE.fullmatch(line):
            low = int(match[4])
            sequence = Sequence(match[2], int(match[3]), low, int(match[5] or low),
                                int(match[6]) if match[6] else None)
            if (match[1] == "PASS") != sequence.as_modelled:
                raise ModelCheckError(f"line {number} of the board's output contradicts itself: {line!r}")
            sequences.append(sequence)
            continue
        if match := SUMMARY_LINE.fullmatch(line):
            failed = sum(not s.as_modelled for s in sequences)
            counted = int(match[1]) if match[1] else int(match[2])
            expected = len(sequences) - failed if match[1] else failed
            if counted != expected or (match[1] and failed):
                raise ModelCheckError(f"the board's summary ({line!r}) does not count the {len(sequences)} "
                                      f"sequences it printed ({failed} not as modelled): output lost or corrupted")
            return ModelCheck(board, target, empty, tuple(sequences))
        raise ModelCheckError(f"line {number} of the board's output is not a sequence's result: {line!r}")
    if empty is None:
        raise ModelCheckError(f"the board never printed the benchmarks' first line (\"empty measurement: ...\"): is "
                              f"the board's timing benchmarks image running on it?")
    raise ModelCheckError(f"the board's output ended after {len(sequences)} sequences, without the summary line")


def read_lines(port, timeout: float | None) -> list[str]:
    """Lines from the port until the summary line, or the deadline `timeout` seconds after the
    last byte; None (the virtual board): no deadline, until its emulator halts and ends the port.
    Bytes before the benchmarks' first line (an earlier image's output on a real
    board's port) are dropped; every line is decoded leniently, so that corruption is reported by
    `parse_output` as the line it spoiled."""
    data = b""
    deadline = None if timeout is None else time.monotonic() + timeout
    ended = False
    while True:
        try:
            chunk = port.read(4096)
        except OSError:
            if timeout is not None:  # a real board's port failing is an error
                raise
            chunk, ended = b"", True  # the emulator halted and closed its pty: nothing more will come
        if chunk:
            data += chunk
            deadline = None if timeout is None else time.monotonic() + timeout
        lines = data.decode("ascii", errors="replace").splitlines()
        complete = lines if data.endswith(b"\n") else lines[:-1]
        if (any(SUMMARY_LINE.fullmatch(line) for line in complete) or ended
                or (deadline is not None and time.monotonic() > deadline)):
            return _from_first_line(complete)


def _from_first_line(lines: list[str]) -> list[str]:
    """From the benchmarks' first line on, that line cut from whatever came before it on its line."""
    for index, line in enumerate(lines):
        if first := FIRST_LINE.search(line):
            return [first[0], *lines[index + 1:]]
    return lines


OUTPUT_FILE = "output.txt"  # the board's lines, kept before they are parsed


def run_model_check(root: Path, target: Target, console: Console, out: Path) -> ModelCheck:
    """Builds the benchmarks' image for the target's board, runs it there and reads its results
    into `out` (the board's output as received, then the parsed result and its reports)."""
    target.check()
    if target.board.timing_benchmarks is None:
        raise ModelCheckError(f"board {target.board.name} names no image of the timing benchmarks for its chip "
                              f"(board.json \"timing_benchmarks\")")
    elf = build_test_image(root, target.board, target.board.timing_benchmarks)
    target.prepare(console)
    out.mkdir(parents=True, exist_ok=True)
    with target.uart(elf, console, stats_dir=out) as uart:
        lines = read_lines(uart.port, target.record_timeout())
    write_atomically(out / OUTPUT_FILE, "".join(f"{line}\n" for line in lines))
    try:
        check = parse_output(lines, target.board.name, target.describe())
    except ModelCheckError as error:
        raise ModelCheckError(f"{error} (the board's output: {out / OUTPUT_FILE})") from None
    save(out, "model-check", check.to_json())
    return check
