import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pqscope.link.frames import (
    MAX_ENCODED,
    MAX_PAYLOAD,
    BadFrame,
    Frame,
    FrameDecoder,
    FrameError,
    decode_frame,
    encode_frame,
)

frames = st.builds(
    Frame,
    version=st.integers(0, 255),
    type=st.integers(0, 255),
    seq=st.integers(0, 0xFFFF),
    payload=st.binary(max_size=MAX_PAYLOAD),
)

# Payloads chosen to stress COBS: empty, all zeros, long zero-free runs, the maximum size.
EDGE_FRAMES = [
    Frame(1, 0x01, 1, b""),
    Frame(1, 0x82, 0xBEEF, bytes(64)),
    Frame(1, 0x81, 0, bytes(range(1, 256)) + bytes(range(1, 200))),
    Frame(1, 0x83, 7, bytes(i % 256 for i in range(MAX_PAYLOAD))),
]


def test_wire_format_matches_the_protocol():
    wire = encode_frame(Frame(1, 0x01, 0x0203, b"\x00\xff"))
    assert wire[-1] == 0 and 0 not in wire[:-1]
    content = bytes([1, 0x01, 0x03, 0x02, 0x00, 0xFF])
    crc = zlib.crc32(content).to_bytes(4, "little")
    body = content + crc
    # COBS by hand: the body has one zero, at index 4.
    assert wire == bytes([5]) + body[:4] + bytes([len(body) - 4]) + body[5:] + b"\x00"


@given(frames)
def test_round_trip(frame):
    wire = encode_frame(frame)
    assert decode_frame(wire[:-1]) == frame
    assert FrameDecoder().feed(wire) == [frame]


def test_payload_longer_than_the_maximum_is_refused():
    encode_frame(Frame(1, 1, 1, bytes(MAX_PAYLOAD)))
    with pytest.raises(ValueError):
        encode_frame(Frame(1, 1, 1, bytes(MAX_PAYLOAD + 1)))


@pytest.mark.parametrize("frame", EDGE_FRAMES, ids=lambda f: f"{len(f.payload)}B")
def test_every_single_bit_flip_is_detected(frame):
    wire = encode_frame(frame)
    for bit in range((len(wire) - 1) * 8):
        damaged = bytearray(wire)
        damaged[bit // 8] ^= 1 << (bit % 8)
        decoder = FrameDecoder()
        assert decoder.feed(bytes(damaged)) == [], f"bit {bit} flipped went undetected"
        assert decoder.bad_count >= 1


@given(st.lists(st.tuples(frames, st.binary(max_size=40)), min_size=1, max_size=5))
def test_garbage_between_frames_is_dropped_and_every_frame_recovered(items):
    # Garbage ends in a delimiter, so at most the garbage itself is lost.
    stream = b"".join(garbage + b"\x00" + encode_frame(frame) for frame, garbage in items)
    assert FrameDecoder().feed(stream) == [frame for frame, _ in items]


@given(st.lists(frames, min_size=1, max_size=4), st.data())
def test_chunks_split_anywhere_give_the_same_frames(sent, data):
    stream = b"".join(encode_frame(frame) for frame in sent)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    decoder = FrameDecoder()
    received = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        received += decoder.feed(stream[start:end])
    assert received == sent
    assert decoder.bad_count == 0


def test_overlong_input_is_dropped_without_growing_and_the_next_frame_survives():
    good = Frame(1, 0x83, 5, b"abc")
    decoder = FrameDecoder()
    assert decoder.feed(b"\x01" * (MAX_ENCODED * 3)) == []
    assert len(decoder._pending) == 0
    assert decoder.feed(b"\x00" + encode_frame(good)) == [good]
    assert decoder.bad_frames == {BadFrame.TOO_LONG: 1}


def test_bad_frames_are_counted_by_reason():
    good = encode_frame(Frame(1, 2, 3, b"xyz"))
    bad_crc = bytearray(good)
    bad_crc[3] ^= 0x01
    decoder = FrameDecoder()
    stream = b"\x05\x11\x00" + b"\x02\x11\x00" + bytes(bad_crc) + b"\x00\x00" + good
    assert decoder.feed(stream) == [Frame(1, 2, 3, b"xyz")]
    assert decoder.bad_frames == {BadFrame.COBS: 1, BadFrame.SHORT: 1, BadFrame.CRC: 1}


def test_decode_frame_reports_why():
    with pytest.raises(FrameError) as caught:
        decode_frame(b"\x05\x11")
    assert caught.value.reason is BadFrame.COBS
