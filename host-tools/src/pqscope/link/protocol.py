"""The vocabulary of the pqscope serial protocol (firmware/PROTOCOL.md): its version, message types,
operations, statuses and error codes, its errors, and how its fields are packed and parsed (the
messages themselves: link.messages)."""

import struct
from enum import IntEnum

from ..project.errors import PqscopeError

PROTOCOL_VERSION = 6
SEED_BYTES = 32
DIGEST_BYTES = 32
RUN_FLAG_DIGEST = 1 << 0  # RUN.flags: also send the sample's transcript DIGEST
KEY_CHUNK_BYTES = 480  # the most key bytes one KEY_WRITE or KEY_BYTES carries


class MessageType(IntEnum):
    HELLO = 0x01
    RUN = 0x02
    KEYGEN_SLOT = 0x03
    SIGN_SLOT = 0x04
    PROBE = 0x05
    KEY_READ = 0x06
    KEY_WRITE = 0x07
    INFO = 0x81
    SAMPLE = 0x82
    DONE = 0x83
    DIGEST = 0x84
    PROBE_NAME = 0x85
    KEY_BYTES = 0x86
    ERROR = 0x8F


class Op(IntEnum):
    KEYGEN = 0
    SIGN = 1
    VERIFY = 2

    @property
    def label(self) -> str:
        return self.name.lower()


class Status(IntEnum):
    OK = 0
    OP_FAILED = 1
    VALID_REJECTED = 2
    CORRUPT_ACCEPTED = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @property
    def timed(self) -> bool:
        """Whether the operation's cycles count: it succeeded (for verify: the valid signature was
        accepted). A corrupted copy accepted as well (a bit of the signature's first byte flipped,
        firmware/harness/harness.c) says the verification ignores part of what it must check, not
        that the time is wrong: reported beside the sample, its time kept."""
        return self in (Status.OK, Status.CORRUPT_ACCEPTED)


class ErrorCode(IntEnum):
    BAD_FRAME = 1
    BAD_VERSION = 2
    UNKNOWN_COMMAND = 3
    BAD_LENGTH = 4
    BAD_ARGUMENT = 5
    FAULT = 6  # a processor fault on the board; the message names it and its PC
    GUARD = 7  # an operation wrote outside its buffers (firmware/include/pqscope/guard.h); no sample
    STACK_OVERFLOW = 8  # an operation's stack reached the end of .bss; no sample


class ProtocolError(PqscopeError):
    """The device sent something the protocol does not allow."""


class VersionMismatch(ProtocolError):
    def __init__(self, version: int):
        super().__init__(
            f"the device speaks protocol version {version}, this tool speaks version "
            f"{PROTOCOL_VERSION}: the firmware image and the host tool do not match "
            "(rebuild and flash the image from this checkout)"
        )
        self.version = version


def ops_mask(ops: tuple[Op, ...]) -> int:
    mask = 0
    for op in ops:
        mask |= 1 << op
    return mask


def ops_from_mask(mask: int) -> tuple[Op, ...]:
    return tuple(op for op in Op if mask & (1 << op))


def pack_string(text: str) -> bytes:
    encoded = text.encode()
    if len(encoded) > 255:
        raise ValueError(f"string of {len(encoded)} bytes does not fit a u8 length")
    return bytes([len(encoded)]) + encoded


def unpack_string(payload: bytes, offset: int, name: str) -> tuple[str, int]:
    if offset >= len(payload):
        raise ProtocolError(f"malformed {name}: payload ends before a string")
    end = offset + 1 + payload[offset]
    if end > len(payload):
        raise ProtocolError(f"malformed {name}: string runs past the payload")
    try:
        return payload[offset + 1 : end].decode(), end
    except UnicodeDecodeError:
        raise ProtocolError(f"malformed {name}: string is not UTF-8") from None


def unpack_fixed(layout: struct.Struct, payload: bytes, name: str) -> tuple:
    if len(payload) != layout.size:
        raise ProtocolError(f"malformed {name}: {len(payload)} payload bytes, expected {layout.size}")
    return layout.unpack(payload)


def enum_value(enum: type[IntEnum], value: int, name: str):
    try:
        return enum(value)
    except ValueError:
        raise ProtocolError(f"malformed {name}: {enum.__name__} {value} is not defined") from None
