"""Messages of the pqscope serial protocol (firmware/PROTOCOL.md), and their frames on the wire.

Each message is a dataclass that packs and parses its own payload, so one layout definition
serves both directions (the host sends commands; tests play the device with the same code).
"""

import struct
from dataclasses import astuple, dataclass
from typing import ClassVar

from .frames import Frame, encode_frame
from .protocol import (DIGEST_BYTES, KEY_CHUNK_BYTES, PROTOCOL_VERSION, SEED_BYTES, ErrorCode, MessageType, Op,
                       ProtocolError, Status, VersionMismatch, enum_value, ops_from_mask, ops_mask, pack_string,
                       unpack_fixed, unpack_string)


class _Fixed:
    """A message whose payload is its fields, in their order, packed by its _LAYOUT."""

    def payload(self) -> bytes:
        return self._LAYOUT.pack(*astuple(self))

    @classmethod
    def parse(cls, payload: bytes):
        return cls(*unpack_fixed(cls._LAYOUT, payload, cls.TYPE.name))


@dataclass(frozen=True)
class Hello(_Fixed):
    TYPE: ClassVar = MessageType.HELLO
    _LAYOUT: ClassVar = struct.Struct("")


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
        mask, flags, msg_len, sample_id, seed = unpack_fixed(cls._LAYOUT, payload, "RUN")
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
        slot, _flags, msg_len, sample_id, seed = unpack_fixed(cls._LAYOUT, payload, cls.TYPE.name)
        return cls(slot, sample_id, seed, msg_len)


@dataclass(frozen=True)
class KeygenSlot(_SlotCommand):
    TYPE: ClassVar = MessageType.KEYGEN_SLOT


@dataclass(frozen=True)
class SignSlot(_SlotCommand):
    """SIGN_SLOT; with a `message_seed`, the message comes from it (flag 1), the signing randomness
    from `seed`: signatures that share a message."""

    TYPE: ClassVar = MessageType.SIGN_SLOT
    FLAG_MESSAGE_SEED: ClassVar = 1

    message_seed: bytes | None = None

    def payload(self) -> bytes:
        if self.message_seed is None:
            return super().payload()
        if len(self.message_seed) != SEED_BYTES:
            raise ValueError(f"message seed must be {SEED_BYTES} bytes, not {len(self.message_seed)}")
        return (self._LAYOUT.pack(self.slot, self.FLAG_MESSAGE_SEED, self.msg_len, self.sample_id, self.seed)
                + self.message_seed)

    @classmethod
    def parse(cls, payload: bytes):
        if len(payload) == cls._LAYOUT.size + SEED_BYTES and payload[1] == cls.FLAG_MESSAGE_SEED:
            slot, _flags, msg_len, sample_id, seed = cls._LAYOUT.unpack(payload[:cls._LAYOUT.size])
            return cls(slot, sample_id, seed, msg_len, payload[cls._LAYOUT.size:])
        return super().parse(payload)


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
        return fixed + b"".join(pack_string(s) for s in strings) + probes + b"".join(map(pack_string, trailing))

    @classmethod
    def parse(cls, payload: bytes) -> "Info":
        size = cls._FIXED.size
        version, key_slots, *numbers = unpack_fixed(cls._FIXED, payload[:size], "INFO")
        strings, offset = [], size
        for _ in range(5):
            text, offset = unpack_string(payload, offset, "INFO")
            strings.append(text)
        end = offset + cls._PROBES.size
        probes = unpack_fixed(cls._PROBES, payload[offset:end], "INFO probes")
        trailing, offset = [], end
        for _ in range(3):
            text, offset = unpack_string(payload, offset, "INFO")
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
    _LAYOUT: ClassVar = struct.Struct("<IBBBbQI")
    _PROBE: ClassVar = struct.Struct("<qI")

    sample_id: int
    op: Op
    status: Status
    cycles: int
    stack_bytes: int
    probes: tuple[ProbeReading, ...] = ()  # in the order of the image's probes (PROBE index)
    returned: int = 0  # what the implementation's function returned (clamped to -128..127)

    def payload(self) -> bytes:
        return self._LAYOUT.pack(self.sample_id, self.op, self.status, len(self.probes), self.returned, self.cycles,
                                 self.stack_bytes) + b"".join(self._PROBE.pack(p.cycles, p.calls) for p in self.probes)

    @classmethod
    def parse(cls, payload: bytes) -> "Sample":
        fixed = cls._LAYOUT.size
        sample_id, op, status, probes, returned, cycles, stack = unpack_fixed(cls._LAYOUT, payload[:fixed], "SAMPLE")
        readings = unpack_fixed(struct.Struct("<" + "qI" * probes), payload[fixed:], "SAMPLE probes")
        return cls(sample_id, enum_value(Op, op, "SAMPLE"), enum_value(Status, status, "SAMPLE"), cycles, stack,
                   tuple(ProbeReading(*readings[i:i + 2]) for i in range(0, len(readings), 2)), returned)


@dataclass(frozen=True)
class Probe(_Fixed):
    """Asks for the name of the image's probe `index` (0 <= index < INFO.probes)."""

    TYPE: ClassVar = MessageType.PROBE
    _LAYOUT: ClassVar = struct.Struct("<B")

    index: int


@dataclass(frozen=True)
class ProbeName:
    TYPE: ClassVar = MessageType.PROBE_NAME

    index: int
    name: str

    def payload(self) -> bytes:
        return bytes([self.index]) + pack_string(self.name)

    @classmethod
    def parse(cls, payload: bytes) -> "ProbeName":
        if not payload:
            raise ProtocolError("malformed PROBE_NAME: empty payload")
        name, end = unpack_string(payload, 1, "PROBE_NAME")
        if end != len(payload):
            raise ProtocolError("malformed PROBE_NAME: bytes after the name")
        return cls(payload[0], name)


@dataclass(frozen=True)
class KeyRead(_Fixed):
    """Asks for the KEY_CHUNK_BYTES of a slot's key pair (pk || sk) from `offset` on."""

    TYPE: ClassVar = MessageType.KEY_READ
    _LAYOUT: ClassVar = struct.Struct("<BI")

    slot: int
    offset: int


@dataclass(frozen=True)
class KeyWrite:
    """Writes `data` (at most KEY_CHUNK_BYTES) at `offset` of a slot's key pair, chunks in order."""

    TYPE: ClassVar = MessageType.KEY_WRITE
    _LAYOUT: ClassVar = struct.Struct("<BI")

    slot: int
    offset: int
    data: bytes

    def payload(self) -> bytes:
        if not 0 < len(self.data) <= KEY_CHUNK_BYTES:
            raise ValueError(f"a key chunk is 1 to {KEY_CHUNK_BYTES} bytes, not {len(self.data)}")
        return self._LAYOUT.pack(self.slot, self.offset) + self.data

    @classmethod
    def parse(cls, payload: bytes) -> "KeyWrite":
        return cls(*_key_chunk(cls._LAYOUT, payload, "KEY_WRITE", fewest=1))


@dataclass(frozen=True)
class KeyBytes:
    """KEY_READ's answer: the key pair's bytes from `offset` on, of its `total`."""

    TYPE: ClassVar = MessageType.KEY_BYTES
    _LAYOUT: ClassVar = struct.Struct("<BII")

    slot: int
    offset: int
    total: int
    data: bytes

    def payload(self) -> bytes:
        return self._LAYOUT.pack(self.slot, self.offset, self.total) + self.data

    @classmethod
    def parse(cls, payload: bytes) -> "KeyBytes":
        return cls(*_key_chunk(cls._LAYOUT, payload, "KEY_BYTES", fewest=0))


def _key_chunk(layout: struct.Struct, payload: bytes, name: str, fewest: int) -> tuple:
    """The fields of `layout`, then the key bytes after them (`fewest` to KEY_CHUNK_BYTES)."""
    if not layout.size + fewest <= len(payload) <= layout.size + KEY_CHUNK_BYTES:
        raise ProtocolError(f"malformed {name}: {len(payload)} payload bytes")
    return (*layout.unpack(payload[:layout.size]), payload[layout.size:])


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
        sample_id, status = unpack_fixed(cls._LAYOUT, payload, "DONE")
        return cls(sample_id, enum_value(Status, status, "DONE"))


@dataclass(frozen=True)
class Digest(_Fixed):
    """SHA3-256 of the sample's pk || sk || msg || sig (firmware/PROTOCOL.md)."""

    TYPE: ClassVar = MessageType.DIGEST
    _LAYOUT: ClassVar = struct.Struct(f"<I{DIGEST_BYTES}s")

    sample_id: int
    digest: bytes


@dataclass(frozen=True)
class ErrorRecord:
    TYPE: ClassVar = MessageType.ERROR
    _CODE: ClassVar = struct.Struct("<H")

    code: int  # an ErrorCode, or a newer code this tool does not know
    message: str

    def payload(self) -> bytes:
        return self._CODE.pack(self.code) + pack_string(self.message)

    @classmethod
    def parse(cls, payload: bytes) -> "ErrorRecord":
        (code,) = unpack_fixed(cls._CODE, payload[: cls._CODE.size], "ERROR")
        message, end = unpack_string(payload, cls._CODE.size, "ERROR")
        if end != len(payload):
            raise ProtocolError("malformed ERROR: bytes after the message")
        return cls(code, message)

    def describe(self) -> str:
        try:
            name = ErrorCode(self.code).name
        except ValueError:
            name = f"code {self.code}"
        return f"{name}: {self.message}" if self.message else name


Command = Hello | Run | KeygenSlot | SignSlot | Probe | KeyRead | KeyWrite
Record = Info | Sample | Digest | Done | ProbeName | KeyBytes | ErrorRecord
Message = Command | Record
_BY_TYPE: dict[int, type] = {
    cls.TYPE: cls for cls in (Hello, Run, KeygenSlot, SignSlot, Probe, KeyRead, KeyWrite, Info, Sample, Digest, Done,
                              ProbeName, KeyBytes, ErrorRecord)
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
