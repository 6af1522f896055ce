"""The transcript DIGEST extension of protocol version 1 (RUN.flags bit 0), host side."""

import pytest

from fakedevice import Behaviour, fake_digest
from pqscope.link.device import DeviceError
from pqscope.link.protocol import RUN_FLAG_DIGEST, Op, ProtocolError
from pqscope.link.messages import Digest, Run, decode_message, encode_message
from pqscope.link.frames import FrameDecoder

SEED = bytes(range(32))
ALL_OPS = (Op.KEYGEN, Op.SIGN, Op.VERIFY)


def test_digest_record_round_trips_and_checks_its_length():
    record = Digest(7, bytes(range(32)))
    (frame,) = FrameDecoder().feed(encode_message(record, seq=3))
    assert decode_message(frame) == record
    with pytest.raises(ProtocolError, match="malformed DIGEST"):
        Digest.parse(b"\x07\x00\x00\x00" + bytes(31))


def test_run_carries_the_digest_flag():
    assert Run.parse(Run(ALL_OPS, 32, 1, SEED, RUN_FLAG_DIGEST).payload()).flags == 1


def test_a_sample_asked_for_its_digest_returns_it(session_on):
    session, device = session_on()
    result = session.run_sample(SEED, 32, ALL_OPS, sample_id=2, digest=True)
    assert result.digest == fake_digest(SEED, 32)
    assert [s.op for s in result.samples] == list(ALL_OPS)
    assert device.commands[-1].flags == RUN_FLAG_DIGEST


def test_without_the_flag_there_is_no_digest(session_on):
    session, device = session_on()
    assert session.run_sample(SEED, 32, ALL_OPS, sample_id=2).digest is None
    assert device.commands[-1].flags == 0


def test_a_device_that_omits_the_requested_digest_is_an_error(session_on):
    session, _device = session_on(behaviour=Behaviour(omit_digest=True))
    with pytest.raises(DeviceError, match="expected SAMPLE records, DIGEST, DONE"):
        session.run_sample(SEED, 32, ALL_OPS, sample_id=2, digest=True)
