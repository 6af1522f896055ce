"""The harness's own state out of the implementation's reach (firmware/include/pqscope/guard.h):
tests/guard_overflow's implementation writes past its signature, past its public key or into the
harness's SysTick wrap count, chosen by the message's length (its api.h), and each such sample is
an error naming the operation, the buffer, the offset and the writing function with its source
line, never a cycle number. Unwatched by the emulator, the firmware's own canaries (a real board's
only check) name the operation, the buffer and the offset. A signing that returns -1 says so, and
one whose stack grows past the end of .bss is a stack overflow at an address."""

import contextlib
import re

import pytest

from conftest import EMULATOR, IMAGES, ROOT
from pqscope.link.device import DeviceError, OperationFailed
from pqscope.link.protocol import Op
from pqscope.project.boards import get_board
from pqscope.project.console import stderr
from pqscope.targets.target import Link
from pqscope.targets.vboard import VBoardError
from pqscope.targets.virtual import VirtualTarget

IMAGE = IMAGES / "guard-overflow" / "toy.elf"
ALL_OPS = (Op.KEYGEN, Op.SIGN, Op.VERIFY)
SIGNATURE_BYTES = PUBLIC_KEY_BYTES = 32
WRITER = r" by '[^']+' in flip at address 0x[0-9a-f]{8} \(overflow\.c:\d+\)"


def _sample(tmp_path, msg_len: int, *emulator_args: str):
    """One RUN of msg_len bytes on a virtual board of its own: its result, or the error it ended with."""
    target = VirtualTarget(ROOT, get_board(ROOT, "virtual"), Link(timeout=60), emulator=EMULATOR,
                           emulator_args=emulator_args)
    with contextlib.ExitStack() as stack:
        connection = stack.enter_context(target.connect(IMAGE, stderr(), stats_dir=tmp_path))
        connection.session.hello()
        return connection.session.run_sample(bytes(32), msg_len, ALL_OPS, 0)


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
def test_the_firmware_canaries_alone_name_a_write_past_the_signature(tmp_path, past_end):
    """As on a real board: the emulator does not watch, the harness checks its guards after signing."""
    offset = SIGNATURE_BYTES + past_end - 1
    expected = f"device error GUARD: sign wrote at offset {offset} of the signature (its 32 bytes + {past_end - 1})"
    with pytest.raises(DeviceError, match=f"^{re.escape(expected)}$"):
        _sample(tmp_path, past_end, "--guards", "unwatched")


def test_a_stack_overflow_into_bss_is_named_at_its_instruction(tmp_path):
    with pytest.raises(VBoardError, match=r"^virtual board: stack overflow into \.bss \(sp=0x2[0-9a-f]{7}, below its "
                                          r"end 0x2[0-9a-f]{7}\): sign wrote at offset \d+ of the harness's state "
                                          r"\(pqs_guarded_state\+\d+\) by '[^']+' in descend\S* at address "
                                          r"0x[0-9a-f]{8} \(overflow\.c:\d+\)"):
        _sample(tmp_path, 400)


def test_the_firmware_alone_names_a_stack_overflow_into_bss(tmp_path):
    with pytest.raises(DeviceError, match=r"^device error STACK_OVERFLOW: sign used the whole stack, \d+ bytes down "
                                          r"to 0x2[0-9a-f]{7} \(the end of \.bss\): it overflowed into the data "
                                          r"below$"):
        _sample(tmp_path, 400, "--guards", "unwatched")


def test_a_signing_that_fails_says_what_returned_what(tmp_path):
    with pytest.raises(OperationFailed, match=r"^sample 0: crypto_sign_signature returned -1$"):
        _sample(tmp_path, 300)


def test_an_implementation_that_stays_in_its_buffers_is_measured(tmp_path):
    result = _sample(tmp_path, 500)
    assert [sample.op for sample in result.samples] == list(ALL_OPS)
    assert all(sample.cycles > 0 and sample.returned == 0 for sample in result.samples)
