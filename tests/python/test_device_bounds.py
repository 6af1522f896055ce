"""What the session makes of an operation that failed or wrote out of bounds (issue #55), on a fake
device whose answers the test scripts: a RUN cut short by a failing function is that function's
error at once, never three tries and line advice; ERROR(GUARD) and ERROR(STACK_OVERFLOW) carry the
seeded commands that reproduce them (a SIGN_SLOT's with the KEYGEN_SLOT that made its key)."""

import re

import pytest

from fakedevice import LoopbackPort, fake_stack
from pqscope.link.device import DeviceSession, OperationFailed, OutOfBounds
from pqscope.link.messages import Done, ErrorRecord, KeygenSlot, Run, Sample, SignSlot
from pqscope.link.protocol import ErrorCode, Op, Status

SEED = bytes(range(32))
ALL_OPS = (Op.KEYGEN, Op.SIGN, Op.VERIFY)
GUARD_TEXT = "sign wrote at offset 60 of the signature (its 32 bytes + 28)"


def _session(answer_run=None, answer_sign_slot=None) -> tuple[DeviceSession, LoopbackPort]:
    """A session with a fake device whose RUN and SIGN_SLOT answers are replaced by the test's."""
    port = LoopbackPort()
    device = port.device
    if answer_run is not None:
        device._run = lambda command, seq: answer_run(device, command, seq)
    if answer_sign_slot is not None:
        handle = device._handle

        def handle_sign_slot(frame):
            if frame.type == SignSlot.TYPE:
                device.commands.append(SignSlot.parse(frame.payload))
                answer_sign_slot(device, frame.seq)
            else:
                handle(frame)
        device._handle = handle_sign_slot
    return DeviceSession(port, answer_timeout=5, sample_timeout=5), port


def _signing_returns(returned: int):
    def answer(device, command, seq):  # as the harness: keygen, the failed sign (those asked for), DONE
        if Op.KEYGEN in command.ops:
            device._send(Sample(command.sample_id, Op.KEYGEN, Status.OK, 1000, fake_stack(Op.KEYGEN)), seq)
        if Op.SIGN in command.ops:
            device._send(Sample(command.sample_id, Op.SIGN, Status.OP_FAILED, 2000, fake_stack(Op.SIGN),
                                returned=returned), seq)
        device._send(Done(command.sample_id, Status.OP_FAILED), seq)
    return answer


def _guard_error(code=ErrorCode.GUARD, text=GUARD_TEXT):
    def answer(device, *args):
        device._send(ErrorRecord(code, text), args[-1])
    return answer


def test_a_run_cut_short_by_a_failed_signing_names_the_function_and_its_value():
    session, port = _session(answer_run=_signing_returns(-1))
    with pytest.raises(OperationFailed, match=r"^sample 7: crypto_sign_signature returned -1$"):
        session.run_sample(SEED, 33, ALL_OPS, 7)
    assert session.retries == 0
    assert len(port.device.commands) == 1


def test_a_run_cut_short_by_an_operation_it_does_not_report_says_so():
    session, _ = _session(answer_run=_signing_returns(-2))
    with pytest.raises(OperationFailed, match=r"^sample 3: an operation it was not asked to report failed"):
        session.run_sample(SEED, 33, (Op.VERIFY,), 3)
    assert session.retries == 0


@pytest.mark.parametrize("code", [ErrorCode.GUARD, ErrorCode.STACK_OVERFLOW])
def test_an_out_of_bounds_run_carries_the_run_that_reproduces_it(code):
    session, _ = _session(answer_run=_guard_error(code))
    with pytest.raises(OutOfBounds, match=rf"^device error {code.name}: ") as raised:
        session.run_sample(SEED, 93, ALL_OPS, 5, digest=True)
    assert raised.value.commands == (Run(ALL_OPS, 93, 5, SEED, 1),)
    assert session.retries == 0


def test_an_out_of_bounds_signature_of_a_slot_carries_the_keygen_of_its_key():
    session, _ = _session(answer_sign_slot=_guard_error())
    key_seed, signing_seed = bytes([1]) * 32, bytes([2]) * 32
    session.keygen_slot(1, bytes([9]) * 32, 100)
    session.keygen_slot(1, key_seed, 101)  # the slot's key now: the later one
    with pytest.raises(OutOfBounds, match=f"^device error GUARD: {re.escape(GUARD_TEXT)}$") as raised:
        session.sign_slot(1, signing_seed, 64, 4)
    assert raised.value.commands == (KeygenSlot(1, 101, key_seed), SignSlot(1, 4, signing_seed, 64))
