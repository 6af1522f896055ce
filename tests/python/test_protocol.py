import struct
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakedevice import make_info
from pqscope.link.frames import Frame, FrameDecoder
from pqscope.link.messages import (Done, ErrorRecord, Hello, Probe, ProbeName, ProbeReading, Run, Sample,
                                   decode_message, encode_message)
from pqscope.link.protocol import ErrorCode, MessageType, Op, PROTOCOL_VERSION, ProtocolError, Status, VersionMismatch


def decoded(wire: bytes):
    (frame,) = FrameDecoder().feed(wire)
    return frame, decode_message(frame)


def test_hello_is_an_empty_frame_with_its_type_and_seq():
    frame, message = decoded(encode_message(Hello(), 7))
    assert (frame.version, frame.type, frame.seq, frame.payload) == (PROTOCOL_VERSION, 0x01, 7, b"")
    assert message == Hello()


def test_run_payload_layout():
    seed = bytes(range(32))
    run = Run((Op.KEYGEN, Op.VERIFY), msg_len=59, sample_id=0x01020304, seed=seed)
    frame, message = decoded(encode_message(run, 2))
    assert frame.type == MessageType.RUN
    assert frame.payload == bytes([0b101, 0]) + (59).to_bytes(2, "little") + bytes([4, 3, 2, 1]) + seed
    assert message == run


def test_run_refuses_a_seed_of_the_wrong_size():
    with pytest.raises(ValueError):
        Run((Op.SIGN,), 1, 0, b"short").payload()


def test_info_payload_layout_and_round_trip():
    info = make_info()
    payload = info.payload()
    # The second byte, reserved at first, announces the key pool (0: none).
    fixed = struct.pack("<BBHIIIII", PROTOCOL_VERSION, info.key_slots, 1024, 24_000_000, 1312, 2560, 2420, 100_000)
    assert info.key_slots > 0
    assert payload.startswith(fixed + b"\x10stm32f4discovery\x09ml-dsa-44\x03m4f")
    assert decoded(encode_message(info, 0))[1] == info


def test_info_ends_with_the_probes_their_cost_the_board_serial_and_the_clock():
    info = replace(make_info(serial="0123456789ABCDEF01234567"), probes=3, probe_self_cycles=17, probe_call_cycles=40,
                   clock_source="HSI", clock_fallback_reason="HSE did not start")
    assert info.payload().endswith(b"\x07fake-cc" + struct.pack("<BII", 3, 17, 40) + b"\x180123456789ABCDEF01234567"
                                   + b"\x03HSI\x11HSE did not start")
    assert decoded(encode_message(info, 0))[1] == info
    assert info.clock_fallback == "clock: HSI fallback, HSE did not start"
    assert replace(info, clock_source="HSE", clock_fallback_reason="").clock_fallback == ""


def test_probe_names_are_asked_by_index():
    frame, message = decoded(encode_message(Probe(5), 9))
    assert (frame.type, frame.payload, message) == (0x05, b"\x05", Probe(5))
    frame, message = decoded(encode_message(ProbeName(5, "sqrt"), 9))
    assert (frame.type, frame.payload, message) == (0x85, b"\x05\x04sqrt", ProbeName(5, "sqrt"))


def test_sample_carries_its_probe_readings_after_the_fixed_part():
    sample = Sample(4, Op.SIGN, Status.OK, 1000, 64, (ProbeReading(-3, 1), ProbeReading(2**40, 7)))
    payload = sample.payload()
    assert payload[6] == 2 and len(payload) == 20 + 2 * 12
    assert payload[20:] == struct.pack("<qIqI", -3, 1, 2**40, 7)
    assert decoded(encode_message(sample, 3))[1] == sample


@given(
    st.integers(0, 2**32 - 1), st.sampled_from(Op), st.sampled_from(Status),
    st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1),
)
def test_sample_round_trip(sample_id, op, status, cycles, stack):
    sample = Sample(sample_id, op, status, cycles, stack)
    assert len(sample.payload()) == 4 + 1 + 1 + 2 + 8 + 4
    assert decoded(encode_message(sample, 3))[1] == sample


def test_done_and_error_round_trip():
    assert decoded(encode_message(Done(9, Status.CORRUPT_ACCEPTED), 1))[1] == Done(9, Status.CORRUPT_ACCEPTED)
    error = ErrorRecord(ErrorCode.BAD_ARGUMENT, "msg_len > 1024")
    frame, message = decoded(encode_message(error, 4))
    assert frame.payload == b"\x05\x00\x0emsg_len > 1024"
    assert message == error
    assert message.describe() == "BAD_ARGUMENT: msg_len > 1024"
    assert ErrorRecord(77, "").describe() == "code 77"


def test_other_protocol_version_is_a_clear_error():
    with pytest.raises(VersionMismatch, match=f"speaks protocol version 1, this tool speaks version {PROTOCOL_VERSION}.*do not match"):
        decoded(encode_message(make_info(), 0, version=1))


@pytest.mark.parametrize(
    ("type_", "payload", "complaint"),
    [
        (MessageType.SAMPLE, bytes(19), "19 payload bytes, expected 20"),
        (MessageType.SAMPLE, struct.pack("<IBBHQI", 0, 9, 0, 0, 1, 1), "Op 9"),
        (MessageType.DONE, struct.pack("<IB", 0, 4), "Status 4"),
        (MessageType.SAMPLE, Sample(0, Op.SIGN, Status.OK, 1, 1, (ProbeReading(1, 1),)).payload()[:-1],
         "SAMPLE probes: 11 payload bytes, expected 12"),
        (MessageType.INFO, make_info(serial="").payload()[:-13], "string runs past"),
        (MessageType.INFO, make_info(serial="").payload()[:-1], "INFO: payload ends before a string"),
        (MessageType.INFO, make_info().payload() + b"x", "INFO: 1 bytes after its last field"),
        (MessageType.PROBE_NAME, b"\x01\x05ab", "string runs past"),
        (MessageType.ERROR, b"\x01\x00\x05ab", "string runs past"),
        (MessageType.KEY_BYTES, bytes(8), "malformed KEY_BYTES: 8 payload bytes"),
        (MessageType.KEY_WRITE, bytes(5), "malformed KEY_WRITE: 5 payload bytes"),
        (0x55, b"", "unknown message type 0x55"),
    ],
)
def test_malformed_records_are_protocol_errors(type_, payload, complaint):
    with pytest.raises(ProtocolError, match=complaint):
        decode_message(Frame(PROTOCOL_VERSION, type_, 1, payload))


def test_sign_slot_carries_a_message_seed_after_its_seed_only_when_given():
    """SIGN_SLOT's flag 1: the exact check's signatures share one message, drawn from its own seed."""
    from pqscope.link.messages import SignSlot

    plain = SignSlot(3, 7, bytes(range(32)), 59)
    shared = replace(plain, message_seed=bytes(32 * [0xAB]))
    assert len(plain.payload()) == 40 and plain.payload()[1] == 0
    assert shared.payload()[:40] == plain.payload()[:1] + b"\x01" + plain.payload()[2:]
    assert shared.payload()[40:] == bytes(32 * [0xAB])
    assert SignSlot.parse(shared.payload()) == shared and SignSlot.parse(plain.payload()) == plain
    with pytest.raises(ValueError, match="message seed must be 32 bytes"):
        replace(plain, message_seed=b"short").payload()


def test_key_chunks_carry_their_slot_offset_and_bytes():
    """KEY_READ asks for a slot's key pair from an offset on; KEY_BYTES answers with the total; KEY_WRITE
    carries at most KEY_CHUNK_BYTES."""
    from pqscope.link.messages import KeyBytes, KeyRead, KeyWrite
    from pqscope.link.protocol import KEY_CHUNK_BYTES

    assert KeyRead(3, 960).payload() == struct.pack("<BI", 3, 960)
    for message in (KeyRead(3, 960), KeyWrite(3, 480, bytes(range(200))), KeyBytes(3, 480, 3872, bytes(KEY_CHUNK_BYTES))):
        assert decode_message(Frame(PROTOCOL_VERSION, message.TYPE, 1, message.payload())) == message
    with pytest.raises(ValueError, match=f"1 to {KEY_CHUNK_BYTES} bytes"):
        KeyWrite(3, 0, bytes(KEY_CHUNK_BYTES + 1)).payload()
