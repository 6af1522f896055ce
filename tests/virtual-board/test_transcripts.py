"""Correctness, like pqm4's test vectors: for fixed seeds and message lengths (one for a row
that is its own reference), each image's
transcript digest (SHA3-256 of pk || sk || msg || sig, DIGEST record) equals the one a host build
of its "host_reference" prints (firmware/transcripts). So ML-DSA m4f/m4fstack must
compute exactly what PQClean's clean code computes, FN-DSA m4f what ref computes, all three Falcon
modes what the portable emulated-FP code computes, each remaining catalogue row what its own
portable sources compute on the host, and each row discovered from pqm4's tree (and MAYO's and
UOV's catalogue rows) what its scheme's reference folder computes, as pqm4's testvectors.py compares
every implementation with the reference it builds for the host (project/discovery.py). Every row ok
on the tree's board (PQSCOPE_BOARD) with a host reference is checked on that board's virtual twin;
the quick tier takes the catalogue's fast rows and a small selection of the discovered ones
(QUICK), the slow tier the rest.

Environment: PQSCOPE_TRANSCRIPTS (default build/host/transcripts; a program missing there is built
in its tree: pqm4's folders' are not part of the host build's "all"), PQSCOPE_BOARD (default
stm32f4discovery), and conftest.py's."""

import contextlib
import os
import subprocess
from pathlib import Path

import pytest

from conftest import EMULATOR, ROOT, image
from pqscope.link.protocol import Op, Status
from pqscope.project.boards import get_board, load_boards
from pqscope.project.console import stderr
from pqscope.project.discovery import load_rows
from pqscope.results.records import sample_seed
from pqscope.targets.target import Link
from pqscope.targets.virtual import VirtualTarget

TRANSCRIPTS = Path(os.environ.get("PQSCOPE_TRANSCRIPTS", ROOT / "build/host/transcripts"))
BOARD = os.environ.get("PQSCOPE_BOARD", "stm32f4discovery")  # the firmware board whose images the tree builds
VIRTUAL = next(name for name, board in load_boards(ROOT).items() if board.emulates == BOARD)
MASTER_SEED = b"pqscope transcript vectors"
MESSAGE_LENGTHS = (33, 1024)  # a short message and the longest one a RUN allows
ROWS = [row for row in load_rows(ROOT) if row.host_reference and row.status_on(BOARD) == "ok"]
# The discovered rows of the quick tier: HAWK-512 (its own reference) and HAETAE-2's M4 code against
# its reference, each a few seconds to build from its folder and sign; on the Nucleo also
# CROSS-SHA3-R-SDP-1-fast (as quick): its first seed's signature stayed valid with a bit flipped
# anywhere in it (the unused tail of CROSS 1.1's Merkle proof), the harness now flips a bit of the
# signature's first byte (harness.c, statistics.md).
QUICK = {("hawk512", "ref"), ("haetae2", "m4f"), ("cross-sha3-r-sdp-1-fast", "ref")}


def _host_digest(scheme: str, impl: str, seed: bytes, msg_len: int) -> bytes:
    program = TRANSCRIPTS / f"transcript.{scheme}.{impl}"
    if not program.is_file():
        built = subprocess.run(["cmake", "--build", str(TRANSCRIPTS.parent), "--target", program.name],
                               capture_output=True, text=True)
        assert built.returncode == 0, built.stdout[-4000:]
    result = subprocess.run([program, seed.hex(), str(msg_len)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return bytes.fromhex(result.stdout.strip())


def _slow(row) -> bool:
    return row.slow or (row.directory is not None and (row.scheme, row.impl) not in QUICK)


@pytest.fixture
def session_of(tmp_path):
    """Opens a DeviceSession with the row's image running on the board's virtual twin: the tree's
    image of a catalogue row, a discovered row's built from its folder."""
    target = VirtualTarget(ROOT, get_board(ROOT, VIRTUAL), Link(), emulator=EMULATOR)
    with contextlib.ExitStack() as stack:
        def open_session(row):
            elf = image(row.scheme, row.impl) if row.directory is None else target.image(row, stderr()).elf
            return stack.enter_context(target.connect(elf, stderr(), stats_dir=tmp_path)).session

        yield open_session


@pytest.mark.parametrize("row", [
    pytest.param(row, id=f"{row.scheme}/{row.impl}", marks=pytest.mark.slow if _slow(row) else ())
    for row in ROWS
])
def test_device_transcripts_equal_the_host_reference(row, session_of):
    session = session_of(row)
    session.hello()
    # A row that is its own reference runs the host's code on the device: one vector checks the
    # platform (compiler, libraries, memory); other code (m4f against clean) is checked on both.
    lengths = MESSAGE_LENGTHS[:1] if row.host_reference == row.impl else MESSAGE_LENGTHS
    for index, msg_len in enumerate(lengths):
        seed = sample_seed(MASTER_SEED, index)
        result = session.run_sample(seed, msg_len, (Op.KEYGEN, Op.SIGN, Op.VERIFY), index, digest=True)
        # Each operation succeeded; the device verified the signature and rejected it with a bit of its
        # first byte flipped.
        assert result.done.status == Status.OK
        assert [(sample.op, sample.status) for sample in result.samples] == [(op, Status.OK) for op in Op]
        expected = _host_digest(row.scheme, row.host_reference, seed, msg_len)
        assert result.digest == expected, f"seed {seed.hex()}, msg_len {msg_len}"


def test_digests_depend_on_the_seed_and_the_message_length():
    """The vectors are not vacuous: the host program's digest changes with each input."""
    digests = {_host_digest("ml-dsa-44", "clean", sample_seed(MASTER_SEED, i), n) for i in (0, 1) for n in (0, 33)}
    assert len(digests) == 4
