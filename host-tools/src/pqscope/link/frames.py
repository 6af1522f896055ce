"""Frames on the wire: COBS(header || payload || CRC-32) then 0x00 (see firmware/PROTOCOL.md)."""

import struct
import zlib
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum

from cobs import cobs

from ..project.errors import PqscopeError

HEADER = struct.Struct("<BBH")  # version, type, seq
CRC = struct.Struct("<I")
MAX_BODY = 512
MAX_PAYLOAD = MAX_BODY - HEADER.size - CRC.size
# COBS adds one code byte per started run of 254 non-zero bytes.
MAX_ENCODED = MAX_BODY + MAX_BODY // 254 + 1
DELIMITER = 0


@dataclass(frozen=True)
class Frame:
    version: int
    type: int
    seq: int
    payload: bytes


class BadFrame(StrEnum):
    """Why a received frame was dropped."""

    COBS = "COBS error"
    SHORT = "too short"
    TOO_LONG = "too long"
    CRC = "CRC mismatch"
    UNTERMINATED = "no delimiter before the line went quiet"


class FrameError(PqscopeError):
    def __init__(self, reason: BadFrame):
        super().__init__(f"bad frame: {reason}")
        self.reason = reason


def encode_frame(frame: Frame) -> bytes:
    """The frame's bytes on the wire, including the trailing delimiter."""
    if len(frame.payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(frame.payload)} bytes exceeds {MAX_PAYLOAD}")
    content = HEADER.pack(frame.version, frame.type, frame.seq) + frame.payload
    return cobs.encode(content + CRC.pack(zlib.crc32(content))) + bytes([DELIMITER])


def decode_frame(encoded: bytes) -> Frame:
    """Decode the bytes between two delimiters; raises FrameError."""
    if len(encoded) > MAX_ENCODED:
        raise FrameError(BadFrame.TOO_LONG)
    try:
        body = cobs.decode(encoded)
    except cobs.DecodeError:
        raise FrameError(BadFrame.COBS) from None
    if len(body) > MAX_BODY:
        raise FrameError(BadFrame.TOO_LONG)
    if len(body) < HEADER.size + CRC.size:
        raise FrameError(BadFrame.SHORT)
    content, (crc,) = body[: -CRC.size], CRC.unpack(body[-CRC.size :])
    if zlib.crc32(content) != crc:
        raise FrameError(BadFrame.CRC)
    version, type_, seq = HEADER.unpack(content[: HEADER.size])
    return Frame(version, type_, seq, content[HEADER.size :])


class FrameDecoder:
    """Cuts a byte stream, delivered in arbitrary chunks, into frames.

    Bad frames are dropped and counted in `bad_frames` (by reason); decoding resynchronises at
    the next delimiter. Empty frames (consecutive delimiters) are ignored: senders may emit a
    delimiter first to flush a partial frame on the line.
    """

    def __init__(self) -> None:
        self._pending = bytearray()
        self._overflowed = False
        self.bad_frames: Counter[BadFrame] = Counter()

    @property
    def bad_count(self) -> int:
        return self.bad_frames.total()

    def feed(self, data: bytes) -> list[Frame]:
        frames = []
        *complete, rest = data.split(bytes([DELIMITER]))
        for piece in complete:
            self._append(piece)
            if self._overflowed:
                self.bad_frames[BadFrame.TOO_LONG] += 1
            elif self._pending:
                try:
                    frames.append(decode_frame(bytes(self._pending)))
                except FrameError as error:
                    self.bad_frames[error.reason] += 1
            self._pending.clear()
            self._overflowed = False
        self._append(rest)
        return frames

    def drop_partial(self) -> bool:
        """Drops the bytes received since the last delimiter, if any, as a bad frame: after a
        silence they are the remains of a frame whose delimiter was lost, and would otherwise
        spoil the next frame. Returns whether there were any."""
        if not (self._pending or self._overflowed):
            return False
        self.bad_frames[BadFrame.UNTERMINATED] += 1
        self._pending.clear()
        self._overflowed = False
        return True

    def _append(self, piece: bytes) -> None:
        # Garbage without delimiters must not grow the buffer without bound.
        if self._overflowed:
            return
        self._pending += piece
        if len(self._pending) > MAX_ENCODED:
            self._pending.clear()
            self._overflowed = True
