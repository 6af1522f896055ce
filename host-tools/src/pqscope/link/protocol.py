"""Messages of the pqscope serial protocol, version 2 (firmware/PROTOCOL.md).

Each message is a dataclass that packs and parses its own payload, so one layout definition
serves both directions (the host sends commands; tests play the device with the same code).
"""

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar

from ..project.errors import PqscopeError
from .frames import Frame, encode_frame

PROTOCOL_VERSION = 4
SEED_BYTES = 32
DIGEST_BYTES = 32
RUN_FLAG_DIGEST = 1 << 0  # RUN.flags: also send the sample's transcript DIGEST


class MessageType(IntEnum):
    HELLO = 0x01
    RUN = 0x02
    KEYGEN_SLOT = 0x03
    SIGN_SLOT = 0x04
    PROBE = 0x05
    INFO = 0x81
    SAMPLE = 0x82
    DONE = 0x83
    DIGEST = 0x84
    PROBE_NAME = 0x85
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
        accepted). A corrupted copy accepted as well says the verifier tolerates that bit (a
        malleable encoding, e.g. Falcon round 3's padding bits), not that the time is wrong."""
        return self in (Status.OK, Status.CORRUPT_ACCEPTED)


class ErrorCode(IntEnum):
    BAD_FRAME = 1
    BAD_VERSION = 2
    UNKNOWN_COMMAND = 3
    BAD_LENGTH = 4
    BAD_ARGUMENT = 5
    FAULT = 6  # a processor fault on the board; the message names it and its PC


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


def _pack_string(text: str) -> bytes:
    encoded = text.encode()
    if len(encoded) > 255:
        raise ValueError(f"string of {len(encoded)} bytes does not fit a u8 length")
    return bytes([len(encoded)]) + encoded


def _unpack_string(payload: bytes, offset: int, name: str) -> tuple[str, int]:
    if offset >= len(payload):
        raise ProtocolError(f"malformed {name}: payload ends before a string")
    end = offset + 1 + payload[offset]
    if end > len(payload):
        raise ProtocolError(f"malformed {name}: string runs past the payload")
    try:
        return payload[offset + 1 : end].decode(), end
    except UnicodeDecodeError:
        raise ProtocolError(f"malformed {name}: string is not UTF-8") from None


def _unpack_fixed(layout: struct.Struct, payload: bytes, name: str) -> tuple:
    if len(payload) != layout.size:
        raise ProtocolError(f"malformed {name}: {len(payload)} payload bytes, expected {layout.size}")
    return layout.unpack(payload)


def _enum(enum: type[IntEnum], value: int, name: str):
    try:
        return enum(value)
    except ValueError:
        raise ProtocolError(f"malformed {name}: {enum.__name__} {value} is not defined") from None


@dataclass(frozen=True)
class Hello:
    TYPE: ClassVar = MessageType.HELLO
    _LAYOUT: ClassVar = struct.Struct("")

    def payload(self) -> bytes:
        return b""

    @classmethod
    def parse(cls, payload: bytes) -> "Hello":
        _unpack_fixed(cls._LAYOUT, payload, "HELLO")
        return cls()


@dataclass(frozen=True)
class Run:
    TYPE: ClassVar = MessageType.RUN
    _LAYOUT: ClassVar = struct.Struct(f"<BBHI{SEED_BYTES}s")

    ops: tuple[Op, ...]
    msg_len: int
    sample_id: int
    seed: bytes
    flags: int = 0

    def payload(self) -> bytes:
        if len(self.seed) != SEED_BYTES:
            raise ValueError(f"seed must be {SEED_BYTES} bytes, not {len(self.seed)}")
        return self._LAYOUT.pack(ops_mask(self.ops), self.flags, self.msg_len, self.sample_id, self.seed)

    @classmethod
    def parse(cls, payload: bytes) -> "Run":
        mask, flags, msg_len, sample_id, seed = _unpack_fixed(cls._LAYOUT, payload, "RUN")
        return cls(ops_from_mask(mask), msg_len, sample_id, seed, flags)


@dataclass(frozen=True)
class _SlotCommand:
    """KEYGEN_SLOT and SIGN_SLOT: an operation with the key of one slot of the device's pool."""

    _LAYOUT: ClassVar = struct.Struct(f"<BBHI{SEED_BYTES}s")

    slot: int
    sample_id: int
    seed: bytes
    msg_len: int = 0

    def payload(self) -> bytes:
        if len(self.seed) != SEED_BYTES:
            raise ValueError(f"seed must be {SEED_BYTES} bytes, not {len(self.seed)}")
        return self._LAYOUT.pack(self.slot, 0, self.msg_len, self.sample_id, self.seed)

    @classmethod
    def parse(cls, payload: bytes):
        slot, _flags, msg_len, sample_id, seed = _unpack_fixed(cls._LAYOUT, payload, cls.TYPE.name)
        return cls(slot, sample_id, seed, msg_len)


@dataclass(frozen=True)
class KeygenSlot(_SlotCommand):
    TYPE: ClassVar = MessageType.KEYGEN_SLOT


@dataclass(frozen=True)
class SignSlot(_SlotCommand):
    TYPE: ClassVar = MessageType.SIGN_SLOT


@dataclass(frozen=True)
class Info:
    TYPE: ClassVar = MessageType.INFO
    _FIXED: ClassVar = struct.Struct("<BBHIIIII")

    protocol_version: int
    max_msg_len: int
    clock_hz: int
    pk_bytes: int
    sk_bytes: int
    sig_bytes: int
    stack_budget_bytes: int
    board: str
    scheme: str
    impl: str
    build_id: str
    compiler: str
    key_slots: int = 0  # key pool for constant-time tests; 0: the device has none
    probes: int = 0  # functions the image probes (their names: PROBE)
    probe_self_cycles: int = 0  # taken out of each probed call's cycles by the device
    probe_call_cycles: int = 0  # what one probed call adds to the code around it
    board_serial: str = ""  # which board of its kind (the STM32's unique ID)
    clock_source: str = ""  # the oscillator the core clock comes from ("HSE")
    clock_fallback_reason: str = ""  # why the board fell back to it ("HSE did not start"); "": it did not

    @property
    def clock_fallback(self) -> str:
        """A line for the user when the board's clock is not the one it prefers, else ""."""
        if not self.clock_fallback_reason:
            return ""
        return f"clock: {self.clock_source} fallback, {self.clock_fallback_reason}"

    _PROBES: ClassVar = struct.Struct("<BII")

    def payload(self) -> bytes:
        fixed = self._FIXED.pack(
            self.protocol_version, self.key_slots, self.max_msg_len, self.clock_hz, self.pk_bytes,
            self.sk_bytes, self.sig_bytes, self.stack_budget_bytes,
        )
        strings = (self.board, self.scheme, self.impl, self.build_id, self.compiler)
        probes = self._PROBES.pack(self.probes, self.probe_self_cycles, self.probe_call_cycles)
        trailing = (self.board_serial, self.clock_source, self.clock_fallback_reason)
        return fixed + b"".join(_pack_string(s) for s in strings) + probes + b"".join(map(_pack_string, trailing))

    @classmethod
    def parse(cls, payload: bytes) -> "Info":
        size = cls._FIXED.size
        version, key_slots, *numbers = _unpack_fixed(cls._FIXED, payload[:size], "INFO")
        strings, offset = [], size
        for _ in range(5):
            text, offset = _unpack_string(payload, offset, "INFO")
            strings.append(text)
        end = offset + cls._PROBES.size
        probes = _unpack_fixed(cls._PROBES, payload[offset:end], "INFO probes")
        trailing, offset = [], end
        for _ in range(3):
            text, offset = _unpack_string(payload, offset, "INFO")
            trailing.append(text)
        if offset != len(payload):
            raise ProtocolError(f"malformed INFO: {len(payload) - offset} bytes after its last field")
        return cls(version, *numbers, *strings, key_slots, *probes, *trailing)


@dataclass(frozen=True)
class ProbeReading:
    """One probed function within one timed operation: its cycles (inclusive of its callees, the
    probes' own cost taken out by the device) and how often it was called."""

    cycles: int
    calls: int


@dataclass(frozen=True)
class Sample:
    TYPE: ClassVar = MessageType.SAMPLE
    _LAYOUT: ClassVar = struct.Struct("<IBBBxQI")
    _PROBE: ClassVar = struct.Struct("<qI")

    sample_id: int
    op: Op
    status: Status
    cycles: int
    stack_bytes: int
    probes: tuple[ProbeReading, ...] = ()  # in the order of the image's probes (PROBE index)

    def payload(self) -> bytes:
        return self._LAYOUT.pack(self.sample_id, self.op, self.status, len(self.probes), self.cycles,
                                 self.stack_bytes) + b"".join(self._PROBE.pack(p.cycles, p.calls) for p in self.probes)

    @classmethod
    def parse(cls, payload: bytes) -> "Sample":
        fixed = cls._LAYOUT.size
        sample_id, op, status, probes, cycles, stack = _unpack_fixed(cls._LAYOUT, payload[:fixed], "SAMPLE")
        readings = _unpack_fixed(struct.Struct("<" + "qI" * probes), payload[fixed:], "SAMPLE probes")
        return cls(sample_id, _enum(Op, op, "SAMPLE"), _enum(Status, status, "SAMPLE"), cycles, stack,
                   tuple(ProbeReading(*readings[i:i + 2]) for i in range(0, len(readings), 2)))


@dataclass(frozen=True)
class Probe:
    """Asks for the name of the image's probe `index` (0 <= index < INFO.probes)."""

    TYPE: ClassVar = MessageType.PROBE
    _LAYOUT: ClassVar = struct.Struct("<B")

    index: int

    def payload(self) -> bytes:
        return self._LAYOUT.pack(self.index)

    @classmethod
    def parse(cls, payload: bytes) -> "Probe":
        return cls(*_unpack_fixed(cls._LAYOUT, payload, "PROBE"))


@dataclass(frozen=True)
class ProbeName:
    TYPE: ClassVar = MessageType.PROBE_NAME

    index: int
    name: str

    def payload(self) -> bytes:
        return bytes([self.index]) + _pack_string(self.name)

    @classmethod
    def parse(cls, payload: bytes) -> "ProbeName":
        if not payload:
            raise ProtocolError("malformed PROBE_NAME: empty payload")
        name, end = _unpack_string(payload, 1, "PROBE_NAME")
        if end != len(payload):
            raise ProtocolError("malformed PROBE_NAME: bytes after the name")
        return cls(payload[0], name)


@dataclass(frozen=True)
class Done:
    TYPE: ClassVar = MessageType.DONE
    _LAYOUT: ClassVar = struct.Struct("<IB")

    sample_id: int
    status: Status

    def payload(self) -> bytes:
        return self._LAYOUT.pack(self.sample_id, self.status)

    @classmethod
    def parse(cls, payload: bytes) -> "Done":
        sample_id, status = _unpack_fixed(cls._LAYOUT, payload, "DONE")
        return cls(sample_id, _enum(Status, status, "DONE"))


@dataclass(frozen=True)
class Digest:
    """SHA3-256 of the sample's pk || sk || msg || sig (firmware/PROTOCOL.md)."""

    TYPE: ClassVar = MessageType.DIGEST
    _LAYOUT: ClassVar = struct.Struct(f"<I{DIGEST_BYTES}s")

    sample_id: int
    digest: bytes

    def payload(self) -> bytes:
        return self._LAYOUT.pack(self.sample_id, self.digest)

    @classmethod
    def parse(cls, payload: bytes) -> "Digest":
        return cls(*_unpack_fixed(cls._LAYOUT, payload, "DIGEST"))


@dataclass(frozen=True)
class ErrorRecord:
    TYPE: ClassVar = MessageType.ERROR
    _CODE: ClassVar = struct.Struct("<H")

    code: int  # an ErrorCode, or a newer code this tool does not know
    message: str

    def payload(self) -> bytes:
        return self._CODE.pack(self.code) + _pack_string(self.message)

    @classmethod
    def parse(cls, payload: bytes) -> "ErrorRecord":
        (code,) = _unpack_fixed(cls._CODE, payload[: cls._CODE.size], "ERROR")
        message, end = _unpack_string(payload, cls._CODE.size, "ERROR")
        if end != len(payload):
            raise ProtocolError("malformed ERROR: bytes after the message")
        return cls(code, message)

    def describe(self) -> str:
        try:
            name = ErrorCode(self.code).name
        except ValueError:
            name = f"code {self.code}"
        return f"{name}: {self.message}" if self.message else name


Command = Hello | Run | KeygenSlot | SignSlot | Probe
Record = Info | Sample | Digest | Done | ProbeName | ErrorRecord
Message = Command | Record
_BY_TYPE: dict[int, type] = {
    cls.TYPE: cls for cls in (Hello, Run, KeygenSlot, SignSlot, Probe, Info, Sample, Digest, Done, ProbeName,
                              ErrorRecord)
}


def encode_message(message: Message, seq: int, version: int = PROTOCOL_VERSION) -> bytes:
    """The message as a frame on the wire (version is a parameter so tests can fake a mismatch)."""
    return encode_frame(Frame(version, message.TYPE, seq, message.payload()))


def decode_message(frame: Frame) -> Message:
    if frame.version != PROTOCOL_VERSION:
        raise VersionMismatch(frame.version)
    cls = _BY_TYPE.get(frame.type)
    if cls is None:
        raise ProtocolError(f"unknown message type 0x{frame.type:02x}")
    return cls.parse(frame.payload)
