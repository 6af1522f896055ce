"""pqscope model-check's reading of the benchmarks' output (host-tools/src/pqscope/modelcheck.py):
what a board's port delivers, junk and all, into sequences, and every way the output can be broken
into one clear error."""

import contextlib
import dataclasses
import io

import pytest
from rich.console import Console

from conftest import REPO
from pqscope.jobs import modelcheck
from pqscope.project.boards import get_board
from pqscope.jobs.modelcheck import ModelCheckError, parse_output, read_lines, run_model_check
from pqscope.targets.target import Link, Target, Uart
from pqscope.results import store

GOOD = [
    "empty measurement: 3 cycles",
    "PASS alu: 4 cycles, model 4",
    "PASS branch_taken: 3 cycles, model 3, silicon 2",
    "FAIL copy_words: 17 cycles, model 15",
    "PASS udiv_mid_quotient: 7 cycles, model 3..11",
    "TRM: FAILED 1 failed",
]


def parse(lines):
    return parse_output(lines, "stm32f4discovery", {"target": "serial"})


def test_sequences_departures_and_published_measurements():
    check = parse(GOOD)
    assert check.empty_cycles == 3
    assert [s.name for s in check.sequences] == ["alu", "branch_taken", "copy_words", "udiv_mid_quotient"]
    assert [s.name for s in check.departures] == ["copy_words"]
    assert [s.name for s in check.model_against_published] == ["branch_taken"]
    udiv = check.sequences[-1]
    assert (udiv.model_low, udiv.model_high, udiv.model_text, udiv.silicon) == (3, 11, "3..11", None)
    document = check.to_json()
    assert document["departures"] == ["copy_words"] and document["sequences"][2]["as_modelled"] is False


class ChunkPort:
    """A port delivering `chunks`, one per read, then nothing (or, `ends`, the virtual board's pty
    once its emulator halted: an error)."""

    def __init__(self, chunks: list[bytes], ends: bool = False):
        self.chunks, self.ends = list(chunks), ends

    def read(self, size: int = 1) -> bytes:
        if not self.chunks and self.ends:
            raise OSError(5, "Input/output error")
        return self.chunks.pop(0) if self.chunks else b""


def test_reading_drops_what_came_before_the_first_line_and_stops_at_the_summary():
    text = "\n".join(GOOD).encode() + b"\n"
    # an earlier image's frames on the port, the first line cut across reads, more after the summary
    chunks = [b"\x00\x07\xfe junk\n\x01", text[:10], text[10:40], text[40:], b"never read\n"]
    port = ChunkPort(chunks)
    assert read_lines(port, timeout=5) == GOOD
    assert port.chunks == [b"never read\n"]


def test_without_a_deadline_reading_ends_with_the_port_and_a_real_boards_port_error_is_one():
    lines = read_lines(ChunkPort([b"empty measurement: 3 cycles\nPASS alu: 4 cycles, model 4\n"], ends=True), None)
    assert lines == GOOD[:2]
    with pytest.raises(OSError):
        read_lines(ChunkPort([], ends=True), timeout=5)


def test_reading_ends_at_the_deadline_without_a_summary():
    lines = read_lines(ChunkPort([b"empty measurement: 3 cycles\nPASS alu: 4 cycles, model 4\nPASS al"]), timeout=0.2)
    assert lines == GOOD[:2]  # the unfinished line is not taken
    with pytest.raises(ModelCheckError, match="ended after 1 sequences, without the summary line"):
        parse(lines)


@pytest.mark.parametrize(("lines", "expected"), [
    ([], "never printed the benchmarks' first line"),
    (["PASS alu: 4 cycles, model 4"], "never printed the benchmarks' first line"),
    ([GOOD[0], "PASS alu: 4 cycles, model 4", "PASS alu: 4 cyc\ufffdles, model 4", GOOD[-1]],
     "line 3 of the board's output is not a sequence's result: 'PASS alu: 4 cyc\ufffdles, model 4'"),
    ([GOOD[0], "PASS alu: 5 cycles, model 4", "TRM: all 1 passed"], "line 2 of the board's output contradicts itself"),
    ([GOOD[0], GOOD[1], "TRM: all 2 passed"], "does not count the 1 sequences it printed"),
    ([*GOOD[:3], "TRM: FAILED 1 failed"], "does not count the 2 sequences it printed (0 not as modelled)"),
])
def test_broken_output_is_one_clear_error(lines, expected):
    with pytest.raises(ModelCheckError, match=None) as error:
        parse(lines)
    assert expected in str(error.value)


class ChunkTarget(Target):
    """A board whose UART delivers `chunks`; it builds and flashes nothing."""

    kind = "chunks"

    def __init__(self, chunks: list[bytes], timeout: float):
        super().__init__(REPO, get_board(REPO, "virtual"), Link(timeout=timeout))
        self.chunks = chunks

    @contextlib.contextmanager
    def uart(self, elf, console, *, stats_dir, profiling=None):
        yield Uart(ChunkPort(self.chunks), "chunks")


def test_the_boards_output_is_kept_when_it_cannot_be_parsed(monkeypatch, tmp_path):
    monkeypatch.setattr(modelcheck, "build_test_image", lambda root, board, name: tmp_path / f"{name}.elf")
    broken = "\n".join([*GOOD[:3], "PASS al"]).encode()  # cut off: no summary within the deadline
    with pytest.raises(ModelCheckError, match=r"without the summary line \(the board's output: .*output.txt\)"):
        run_model_check(REPO, ChunkTarget([broken], 0.2), Console(file=io.StringIO()), tmp_path / "out")
    assert (tmp_path / "out/output.txt").read_text().splitlines() == GOOD[:3]
    assert not (tmp_path / "out/model-check.json").exists()


def test_a_parsed_check_is_saved_beside_the_output(monkeypatch, tmp_path):
    monkeypatch.setattr(modelcheck, "build_test_image", lambda root, board, name: tmp_path / f"{name}.elf")
    check = run_model_check(REPO, ChunkTarget([("\n".join(GOOD) + "\n").encode()], 5), Console(file=io.StringIO()),
                            tmp_path / "out")
    assert store.read(tmp_path / "out/model-check.json") == check.to_json()


def test_each_board_runs_its_own_image_and_a_board_without_one_is_refused(monkeypatch, tmp_path):
    built = []
    monkeypatch.setattr(modelcheck, "build_test_image",
                        lambda root, board, name: built.append(name) or tmp_path / f"{name}.elf")
    output = [("\n".join(GOOD) + "\n").encode()]
    target = ChunkTarget(output, 5)
    target.board = get_board(REPO, "nucleo-l4r5zi-virtual")
    run_model_check(REPO, target, Console(file=io.StringIO()), tmp_path / "nucleo")
    run_model_check(REPO, ChunkTarget(output, 5), Console(file=io.StringIO()), tmp_path / "discovery")
    assert built == ["vboard-l4r5-trm", "vboard-trm"]
    target.board = dataclasses.replace(target.board, timing_benchmarks=None)
    with pytest.raises(ModelCheckError, match=r'board nucleo-l4r5zi-virtual names no image of the timing benchmarks '
                                              r'for its chip \(board.json "timing_benchmarks"\)'):
        run_model_check(REPO, target, Console(file=io.StringIO()), tmp_path / "none")
    assert built == ["vboard-l4r5-trm", "vboard-trm"]
