"""The harness's own state out of the implementation's reach (firmware/include/pqscope/guard.h):
tests/guard_overflow's implementation writes past its signature, past its public key, into the
harness's SysTick wrap count, or grows its stack past the end of .bss, chosen by the message's
length (its api.h). The harness finds each after the operation (its canaries, its counters' copies,
its stack paint) and answers an error naming the operation, the buffer or the stack and the
offset, never a cycle number, as on a real board; the virtual board's target then replays the
sample watching the harness's memory, and the error names the storing instruction's function and
source line. A signing that returns -1 says so."""

import re

import pytest

from conftest import EMULATOR, IMAGES, ROOT
from pqscope.link.device import DeviceSession, OperationFailed, OutOfBounds
from pqscope.link.protocol import Op
from pqscope.project.boards import get_board
from pqscope.project.console import stderr
from pqscope.targets.target import Link
from pqscope.targets.vboard import VBoardError, VirtualBoard
from pqscope.targets.virtual import VirtualTarget

IMAGE = IMAGES / "guard-overflow" / "toy.elf"
ALL_OPS = (Op.KEYGEN, Op.SIGN, Op.VERIFY)
SIGNATURE_BYTES = PUBLIC_KEY_BYTES = 32
WRITER = r" by '[^']+' in flip at address 0x[0-9a-f]{8} \(overflow\.c:\d+\)"


def _sample(tmp_path, msg_len: int):
    """One RUN of msg_len bytes on the virtual board as pqscope reaches it: its result, or the error
    it ended with."""
    target = VirtualTarget(ROOT, get_board(ROOT, "virtual"), Link(timeout=60), emulator=EMULATOR)
    with target.connect(IMAGE, stderr(), stats_dir=tmp_path) as connection:
        connection.session.hello()
        return connection.session.run_sample(bytes(32), msg_len, ALL_OPS, 0)


def _firmware_alone(tmp_path, msg_len: int):
    """The same RUN, answered by the harness alone (no replay), as a real board answers it."""
    with VirtualBoard(EMULATOR, IMAGE, tmp_path / "stats.json") as board, board.open_uart() as port:
        session = DeviceSession(port)
        session.hello()
        return session.run_sample(bytes(32), msg_len, ALL_OPS, 0)


@pytest.mark.parametrize("past_end", [1, 28, 64])
def test_a_write_past_the_signature_is_an_error_at_its_instruction(tmp_path, past_end):
    offset = SIGNATURE_BYTES + past_end - 1
    with pytest.raises(VBoardError, match=rf"^virtual board: sign wrote at offset {offset} of the signature "
                                          rf"\(its 32 bytes \+ {past_end - 1}\){WRITER}"):
        _sample(tmp_path, past_end)


@pytest.mark.parametrize("past_end", [1, 64])
def test_a_write_past_the_public_key_is_an_error_at_its_instruction(tmp_path, past_end):
    offset = PUBLIC_KEY_BYTES + past_end - 1
    with pytest.raises(VBoardError, match=rf"^virtual board: verify wrote at offset {offset} of the public key "
                                          rf"\(its 32 bytes \+ {past_end - 1}\){WRITER}"):
        _sample(tmp_path, 100 + past_end)


def test_a_write_into_the_harness_counters_is_an_error_at_its_instruction(tmp_path):
    with pytest.raises(VBoardError, match=rf"^virtual board: sign wrote at offset \d+ of the harness's state "
                                          rf"\(pqs_guarded_state\+\d+\){WRITER}"):
        _sample(tmp_path, 200)


@pytest.mark.parametrize("past_end", [1, 28, 64])
def test_the_firmware_alone_names_a_write_past_the_signature(tmp_path, past_end):
    offset = SIGNATURE_BYTES + past_end - 1
    expected = f"device error GUARD: sign wrote at offset {offset} of the signature (its 32 bytes + {past_end - 1})"
    with pytest.raises(OutOfBounds, match=f"^{re.escape(expected)}$"):
        _firmware_alone(tmp_path, past_end)


def test_the_firmware_alone_names_a_write_into_its_wrap_count(tmp_path):
    expected = ("device error GUARD: sign wrote at offset 2 of the harness's cycle counter (inside it: a store that "
                "skipped the guards)")
    with pytest.raises(OutOfBounds, match=f"^{re.escape(expected)}$"):
        _firmware_alone(tmp_path, 200)


def test_a_stack_overflow_into_bss_is_named_at_its_instruction(tmp_path):
    with pytest.raises(VBoardError, match=r"^virtual board: stack overflow into \.bss: sign wrote at address "
                                          r"0x2[0-9a-f]{7} \(\w+\+\d+\) with sp=0x2[0-9a-f]{7}, below the end of "
                                          r"\.bss 0x2[0-9a-f]{7}, by '[^']+' in descend\S* at address 0x[0-9a-f]{8} "
                                          r"\(overflow\.c:\d+\)"):
        _sample(tmp_path, 400)


def test_the_firmware_alone_names_a_stack_overflow_into_bss(tmp_path):
    with pytest.raises(OutOfBounds, match=r"^device error STACK_OVERFLOW: sign used the whole stack, \d+ bytes down "
                                          r"to 0x2[0-9a-f]{7} \(the end of \.bss\): it overflowed into the data "
                                          r"below$"):
        _firmware_alone(tmp_path, 400)


def test_a_signing_that_fails_says_what_returned_what(tmp_path):
    with pytest.raises(OperationFailed, match=r"^sample 0: crypto_sign_signature returned -1$"):
        _sample(tmp_path, 300)


def test_an_implementation_that_stays_in_its_buffers_is_measured(tmp_path):
    result = _sample(tmp_path, 500)
    assert [sample.op for sample in result.samples] == list(ALL_OPS)
    assert all(sample.cycles > 0 and sample.returned == 0 for sample in result.samples)
