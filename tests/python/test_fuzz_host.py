"""Fuzzing the host's frame and record parsers (hypothesis): no input makes them raise anything but
their own errors, and valid frames survive any noise around them. The test command runs a short
budget (PQSCOPE_FUZZ_EXAMPLES raises it); the coverage-guided long run of the same parsers is
tests/fuzz/fuzz_host_parsers.py (docs/pages/host-tool.md, "Reliability")."""

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqscope.link.frames import DELIMITER, MAX_PAYLOAD, Frame, FrameDecoder, encode_frame
from pqscope.link.protocol import PROTOCOL_VERSION, MessageType, ProtocolError
from pqscope.link.messages import decode_message

EXAMPLES = int(os.environ.get("PQSCOPE_FUZZ_EXAMPLES", "300"))
fuzz = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))

frames = st.builds(Frame, st.just(PROTOCOL_VERSION), st.sampled_from([*MessageType, 0x00, 0x7F, 0xFF]),
                   st.integers(0, 0xFFFF), st.binary(max_size=MAX_PAYLOAD))


def decode_all(data: bytes, cuts: list[int]) -> list[Frame]:
    """The frames of `data` fed in chunks cut at `cuts`, each parsed as a record if it can be."""
    decoder, found = FrameDecoder(), []
    bounds = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    for start, end in zip(bounds, bounds[1:]):
        found += decoder.feed(data[start:end])
    for frame in found:
        try:
            decode_message(frame)
        except ProtocolError:
            pass  # a clear error; anything else fails the test
    return found


@fuzz
@given(st.binary(max_size=2048), st.lists(st.integers(0, 4096), max_size=8))
def test_any_bytes_decode_to_frames_or_counted_errors(data, cuts):
    decode_all(data, cuts)


@fuzz
@given(st.lists(st.tuples(st.binary(max_size=64), frames), max_size=6), st.lists(st.integers(0, 4096), max_size=8))
def test_valid_frames_survive_the_noise_before_them(pieces, cuts):
    # Noise costs at most the frame it merges with; a delimiter after it keeps the next frame whole.
    wire = b"".join(noise + bytes([DELIMITER]) + encode_frame(frame) for noise, frame in pieces)
    found = decode_all(wire, cuts)
    wanted = [frame for _, frame in pieces]
    # Noise may itself decode as a frame only with a matching CRC-32: then it precedes its frame.
    assert [frame for frame in found if frame in wanted] == wanted
