"""Coverage-guided fuzzing (atheris, libFuzzer for Python) of the host's frame decoder and record
parser, the code every byte from the board goes through.

Each input is cut into chunks fed to one FrameDecoder, the way serial reads arrive. Invariants:
nothing raises but the parsers' own ProtocolError; every frame decoded re-encodes into a frame
that decodes to itself; a valid frame sent after noise and a delimiter arrives whole.

ctest runs a short budget; docs/pages/host-tool.md ("Reliability") gives the long command (-runs=1000000)."""

import sys

import atheris

with atheris.instrument_imports():
    from pqscope.link.frames import DELIMITER, MAX_PAYLOAD, Frame, FrameDecoder, encode_frame
    from pqscope.link.protocol import PROTOCOL_VERSION, ProtocolError
    from pqscope.link.messages import decode_message


def feed_in_chunks(decoder: FrameDecoder, data: bytes, provider: atheris.FuzzedDataProvider) -> list[Frame]:
    found = []
    while data:
        size = provider.ConsumeIntInRange(1, len(data)) if provider.remaining_bytes() else len(data)
        found += decoder.feed(data[:size])
        data = data[size:]
    return found


def check_frame(frame: Frame) -> None:
    try:
        decode_message(frame)
    except ProtocolError:
        pass  # a clear error: anything else escapes and is a finding
    again = FrameDecoder().feed(bytes([DELIMITER]) + encode_frame(frame))
    if again != [frame]:
        raise AssertionError(f"{frame} re-encoded decodes as {again}")


def test_one_input(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    noise = provider.ConsumeBytes(provider.ConsumeIntInRange(0, 1024))
    wanted = Frame(PROTOCOL_VERSION, provider.ConsumeInt(1) & 0xFF, provider.ConsumeInt(2) & 0xFFFF,
                   provider.ConsumeBytes(provider.ConsumeIntInRange(0, MAX_PAYLOAD)))
    wire = noise + bytes([DELIMITER]) + encode_frame(wanted)
    decoder = FrameDecoder()
    found = feed_in_chunks(decoder, wire, provider)
    for frame in found:
        check_frame(frame)
    # Noise may decode as frames of its own (with a matching CRC-32), never swallow the valid one.
    if not found or found[-1] != wanted:
        raise AssertionError(f"{wanted} after {len(noise)} bytes of noise came out as {found[-1:]}")


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
