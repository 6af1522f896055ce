"""The host's frames against the firmware's own framing code (firmware/harness/frame.c), compiled
for the host: the two sides of the protocol must agree byte for byte."""

import re
import shutil
import subprocess

import pytest

from conftest import REPO
from pqscope.link.frames import Frame, FrameDecoder, encode_frame

FRAME_TOOL_C = r"""
#include <pqscope/frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* encode TYPE SEQ PAYLOADHEX: prints the wire bytes in hex.
 * decode: reads wire bytes on stdin, prints "TYPE SEQ PAYLOADHEX" per frame and "bad" per drop. */
int main(int argc, char **argv)
{
  if (argc == 5 && strcmp(argv[1], "encode") == 0) {
    static uint8_t payload[PQS_MAX_PAYLOAD], wire[PQS_MAX_WIRE];
    size_t len = strlen(argv[4]) / 2;
    for (size_t i = 0; i < len; i++) {
      sscanf(argv[4] + 2 * i, "%2hhx", &payload[i]);
    }
    size_t n = pqs_frame_encode((uint8_t)atoi(argv[2]), (uint16_t)atoi(argv[3]), payload, len, wire);
    for (size_t i = 0; i < n; i++) {
      printf("%02x", wire[i]);
    }
    printf("\n");
    return 0;
  }
  static struct pqs_receiver rx;
  struct pqs_frame frame;
  int c;
  pqs_receiver_init(&rx);
  while ((c = getchar()) != EOF) {
    enum pqs_rx_event event = pqs_receiver_push(&rx, (uint8_t)c, &frame);
    if (event == PQS_RX_BAD_FRAME) {
      printf("bad\n");
    } else if (event == PQS_RX_FRAME) {
      printf("%u %u ", frame.type, frame.seq);
      for (size_t i = 0; i < frame.payload_len; i++) {
        printf("%02x", frame.payload[i]);
      }
      printf("\n");
    }
  }
  return 0;
}
"""

# The version the firmware's frame.c writes: framing does not depend on it.
FIRMWARE_VERSION = int(re.search(r"#define PQS_PROTOCOL_VERSION (\d+)",
                                 (REPO / "firmware/include/pqscope/frame.h").read_text()).group(1))
FRAMES = [
    Frame(FIRMWARE_VERSION, 0x01, 1, b""),
    Frame(FIRMWARE_VERSION, 0x82, 0xBEEF, bytes(range(256)) + bytes(100)),
    Frame(FIRMWARE_VERSION, 0x81, 0, bytes(range(1, 256)) + bytes(range(1, 250))),
]


@pytest.fixture(scope="module")
def frame_tool(tmp_path_factory):
    if shutil.which("cc") is None:
        pytest.skip("no host C compiler (cc) to build the firmware's frame.c")
    directory = tmp_path_factory.mktemp("frame_tool")
    (directory / "frame_tool.c").write_text(FRAME_TOOL_C)
    tool = directory / "frame_tool"
    subprocess.run(["cc", "-std=c11", "-I", str(REPO / "firmware/include"), "-o", str(tool),
                    str(directory / "frame_tool.c"), str(REPO / "firmware/harness/frame.c")], check=True)
    return tool


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: f"{len(f.payload)}B")
def test_firmware_encodes_the_same_wire_bytes(frame_tool, frame):
    result = subprocess.run([frame_tool, "encode", str(frame.type), str(frame.seq), frame.payload.hex()],
                            capture_output=True, text=True, check=True)
    firmware_wire = bytes.fromhex(result.stdout.strip())
    assert firmware_wire == encode_frame(frame)
    assert FrameDecoder().feed(firmware_wire) == [frame]


def test_firmware_receives_host_frames_and_drops_corrupted_ones(frame_tool):
    corrupted = bytearray(encode_frame(FRAMES[1]))
    corrupted[10] ^= 0x04
    stream = encode_frame(FRAMES[0]) + bytes(corrupted) + encode_frame(FRAMES[2])
    result = subprocess.run([frame_tool, "decode"], input=stream, capture_output=True, check=True)
    assert result.stdout.decode().splitlines() == [
        f"{FRAMES[0].type} {FRAMES[0].seq} ",
        "bad",
        f"{FRAMES[2].type} {FRAMES[2].seq} {FRAMES[2].payload.hex()}",
    ]
