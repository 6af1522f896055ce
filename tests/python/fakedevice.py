"""A fake harness firmware: the device side of the protocol, on a file descriptor, in a thread.

Behaviour knobs let tests play a noisy line, a device that goes silent, one that speaks another
protocol version, and so on. Cycle counts are a function of the seed, like the real device's
(deterministic) behaviour on the virtual board.
"""

import hashlib
import os
import select
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from pqscope.link.frames import FrameDecoder
from pqscope.link.protocol import KEY_CHUNK_BYTES, PROTOCOL_VERSION, RUN_FLAG_DIGEST, ErrorCode, Op, Status
from pqscope.link.messages import (Digest, Done, ErrorRecord, Hello, Info, KeyBytes, KeygenSlot, KeyRead, KeyWrite, Probe, ProbeName, ProbeReading,
                                   Run, Sample, SignSlot, decode_message, encode_message)

MAX_MSG_LEN = 1024


def fake_cycles(seed: bytes, op: Op) -> int:
    return 1_000_000 * (op + 1) + int.from_bytes(seed[:2], "little")


def fake_stack(op: Op) -> int:
    return 4000 + 100 * op


def fake_digest(seed: bytes, msg_len: int) -> bytes:
    return hashlib.sha3_256(seed + msg_len.to_bytes(2, "little")).digest()


KEY_SLOTS = 4


def make_info(board="stm32f4discovery", scheme="ml-dsa-44", impl="m4f", serial="0000002A0000002A0000002A") -> Info:
    return Info(PROTOCOL_VERSION, MAX_MSG_LEN, 24_000_000, 1312, 2560, 2420, 100_000,
                board, scheme, impl, "test-build", "fake-cc", key_slots=KEY_SLOTS, board_serial=serial)


KEY_DIGEST_BYTES = 32  # a fake key: the SHA-256 of its seed


def fake_slot_sign_cycles(key: bytes, seed: bytes, key_leak: int) -> int:
    """Public noise from the signing seed, plus `key_leak` cycles per unit of a key-derived value."""
    return 2_000_000 + int.from_bytes(seed[:1], "little") + key_leak * (key[0] % 8)


PROBE_SELF_CYCLES, PROBE_CALL_CYCLES = 11, 29


def fake_probe(seed: bytes, index: int, leak: int = 0) -> ProbeReading:
    """Probe `index`'s reading in an operation: public noise from the seed, `leak` added."""
    return ProbeReading(1000 * (index + 1) + seed[2 + index] + leak, index + 1)


@dataclass
class Behaviour:
    version: int = PROTOCOL_VERSION  # written into every record's header
    boot_announce: bool = True  # send INFO with seq 0 at start
    noise: bytes = b""  # sent before every record, followed by a delimiter
    answer_commands: int | None = None  # stop answering after this many commands
    answer_signatures: int | None = None  # stop answering after this many RUN or SIGN_SLOT commands
    cut_frame: bool = False  # when it stops answering: first send half of the answer's first frame
    corrupt_records: list[int] = field(default_factory=list)  # indexes (sending order) to damage
    reject_commands: int = 0  # answer the first N commands with ERROR(BAD_FRAME)
    reset_on_run: bool = False  # answer RUN with a boot announcement, as if the board reset
    fault_on_run: bool = False  # answer RUN as the board's fault handler does: ERROR(FAULT), seq 0
    omit_digest: bool = False  # ignore RUN.flags' DIGEST request
    key_leak: int = 0  # SIGN_SLOT takes this many cycles more per unit of a key-derived value
    probes: tuple[str, ...] = ()  # the functions the image probes
    probe_leak: int = 0  # SIGN_SLOT: the last probe's cycles grow by this per unit of the key value
    probe_self_cycles: int = PROBE_SELF_CYCLES  # what its probes' calibration measured at boot
    extra_cycles: int = 0  # SIGN_SLOT takes this many cycles more, whatever the key: a board unlike the others
    keygen_cycles: int = 5_000_000  # what KEYGEN_SLOT takes


class FakeDevice:
    """Serves the protocol on `fd` in a thread (start/stop), or in-process: feed `receive()` the
    host's bytes, and its records go to `output` (see LoopbackPort)."""

    def __init__(self, fd: int | None, info: Info | None = None, behaviour: Behaviour | None = None,
                 output=None, on_idle: Callable[[int, int], object] | None = None):
        self.fd = fd
        self._output = output or self._write_fd
        # Served on `fd`: called with the bytes read and written so far whenever everything read
        # is answered, like the emulator's "vboard: idle" line.
        self._on_idle = on_idle or (lambda received, sent: None)
        self._received = self._sent = 0
        self.behaviour = behaviour or Behaviour()
        self.info = replace(info or make_info(), probes=len(self.behaviour.probes),
                            probe_self_cycles=self.behaviour.probe_self_cycles if self.behaviour.probes else 0,
                            probe_call_cycles=PROBE_CALL_CYCLES if self.behaviour.probes else 0)
        self.commands: list = []  # every valid command received, in order
        self.signatures = 0  # RUN and SIGN_SLOT commands received
        # Set when a command is left unanswered: from then on the device answers nothing.
        self.stopped_answering = threading.Event()
        self.model_cycles = 0
        self.keys: dict[int, bytes] = {}  # slot -> key (a hash of the KEYGEN_SLOT seed)
        self.keygens = 0  # KEYGEN_SLOT commands answered
        self._writing: dict[int, bytes] = {}  # slot -> the key pair's bytes KEY_WRITE wrote so far
        self._records_sent = 0
        self.resets = 0
        self._decoder = FrameDecoder()
        self.bad_frames = 0  # corrupted commands received (each answered with BAD_FRAME)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def start(self) -> "FakeDevice":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def boot(self) -> "FakeDevice":
        if self.behaviour.boot_announce:
            self._send(self.info, 0)
        return self

    def reset(self) -> None:
        """Like pressing the reset button: key slots and half-received commands are lost."""
        self.keys.clear()
        self._decoder = FrameDecoder()
        self.resets += 1
        self.boot()

    def receive(self, data: bytes) -> None:
        bad_before = self._decoder.bad_count
        frames = self._decoder.feed(data)
        if self._decoder.bad_count > bad_before:
            self.bad_frames += self._decoder.bad_count - bad_before
            self._send(ErrorRecord(ErrorCode.BAD_FRAME, "bad frame"), 0)
        for frame in frames:
            self._handle(frame)

    def _serve(self) -> None:
        self.boot()
        self._on_idle(self._received, self._sent)
        while not self._stop.is_set():
            readable, _, _ = select.select([self.fd], [], [], 0.05)
            if not readable:
                continue
            try:
                data = os.read(self.fd, 4096)
            except OSError:  # the host closed its side of the pty
                continue
            self._received += len(data)
            self.receive(data)
            self._on_idle(self._received, self._sent)

    def _handle(self, frame) -> None:
        if frame.version != PROTOCOL_VERSION:
            self._send(ErrorRecord(ErrorCode.BAD_VERSION, "bad version"), frame.seq)
            return
        command = decode_message(frame)
        self.commands.append(command)
        self.signatures += isinstance(command, (Run, SignSlot))
        behaviour = self.behaviour
        if (self.stopped_answering.is_set()
                or behaviour.answer_commands is not None and len(self.commands) > behaviour.answer_commands
                or behaviour.answer_signatures is not None and self.signatures > behaviour.answer_signatures):
            if behaviour.cut_frame and not self.stopped_answering.is_set() and isinstance(command, (Run, SignSlot)):
                op = command.ops[0] if isinstance(command, Run) else Op.SIGN
                wire = encode_message(Sample(command.sample_id, op, Status.OK, 1, fake_stack(op)), frame.seq)
                self._output(wire[:len(wire) // 2])
            self.stopped_answering.set()
            return
        if len(self.commands) <= behaviour.reject_commands:
            self._send(ErrorRecord(ErrorCode.BAD_FRAME, "bad frame"), 0)
        elif isinstance(command, Hello):
            self._send(self.info, frame.seq)
        elif isinstance(command, Probe):
            if command.index >= len(self.behaviour.probes):
                self._send(ErrorRecord(ErrorCode.BAD_ARGUMENT, "no such probe"), frame.seq)
            else:
                self._send(ProbeName(command.index, self.behaviour.probes[command.index]), frame.seq)
        elif isinstance(command, Run):
            self._run(command, frame.seq)
        elif isinstance(command, KeygenSlot):
            self.keys[command.slot] = hashlib.sha256(command.seed).digest()
            self.keygens += 1
            self._send(Sample(command.sample_id, Op.KEYGEN, Status.OK, behaviour.keygen_cycles, fake_stack(Op.KEYGEN),
                              self._probes(command.seed)), frame.seq)
            self._send(Done(command.sample_id, Status.OK), frame.seq)
        elif isinstance(command, KeyRead):
            pair = self._key_pair(command.slot)
            chunk = pair[command.offset:command.offset + KEY_CHUNK_BYTES]
            self._send(KeyBytes(command.slot, command.offset, len(pair), chunk), frame.seq)
        elif isinstance(command, KeyWrite):
            written = self._writing.get(command.slot, b"")[:command.offset] + command.data
            self._writing[command.slot] = written
            if len(written) == self.info.pk_bytes + self.info.sk_bytes:
                self.keys[command.slot] = written[:KEY_DIGEST_BYTES]
            self._send(Done(0, Status.OK), frame.seq)
        elif isinstance(command, SignSlot):
            key = self.keys[command.slot]
            cycles = fake_slot_sign_cycles(key, command.seed, self.behaviour.key_leak) + self.behaviour.extra_cycles
            leak = self.behaviour.probe_leak * (key[0] % 8)
            probes = self._probes(command.seed, last_leak=leak)
            self._send(Sample(command.sample_id, Op.SIGN, Status.OK, cycles + leak, fake_stack(Op.SIGN), probes),
                       frame.seq)
            self._send(Done(command.sample_id, Status.OK), frame.seq)

    def _key_pair(self, slot: int) -> bytes:
        """A slot's key as KEY_READ sends it: its digest, repeated to the key pair's length."""
        total = self.info.pk_bytes + self.info.sk_bytes
        return (self.keys[slot] * (total // KEY_DIGEST_BYTES + 1))[:total]

    def _run(self, command: Run, seq: int) -> None:
        if self.behaviour.fault_on_run:
            self._send(ErrorRecord(ErrorCode.FAULT, "HardFault at pc=0x080012af"), 0)
            return
        if self.behaviour.reset_on_run:
            self._send(self.info, 0)
            return
        if command.msg_len > MAX_MSG_LEN:
            self._send(ErrorRecord(ErrorCode.BAD_ARGUMENT, "msg_len too large"), seq)
            return
        for op in command.ops:
            cycles = fake_cycles(command.seed, op)
            self.model_cycles += cycles
            self._send(Sample(command.sample_id, op, Status.OK, cycles, fake_stack(op), self._probes(command.seed)),
                       seq)
        if command.flags & RUN_FLAG_DIGEST and not self.behaviour.omit_digest:
            self._send(Digest(command.sample_id, fake_digest(command.seed, command.msg_len)), seq)
        self._send(Done(command.sample_id, Status.OK), seq)

    def _probes(self, seed: bytes, last_leak: int = 0) -> tuple[ProbeReading, ...]:
        count = len(self.behaviour.probes)
        return tuple(fake_probe(seed, i, last_leak if i == count - 1 else 0) for i in range(count))

    def _send(self, record, seq: int) -> None:
        wire = bytearray(encode_message(record, seq, version=self.behaviour.version))
        if self._records_sent in self.behaviour.corrupt_records:
            wire[len(wire) // 2] ^= 0x10
        self._records_sent += 1
        if self.behaviour.noise:
            wire[:0] = self.behaviour.noise + b"\x00"
        self._output(bytes(wire))

    def _write_fd(self, data: bytes) -> None:
        try:
            self._sent += os.write(self.fd, data)
        except OSError:
            pass  # nobody listens: like a board whose UART is not connected


class LoopbackPort:
    """A pyserial-like port wired in-process to a FakeDevice: the device answers each write at
    once, so tests of thousands of samples run in seconds and deterministically."""

    port = "loopback"

    def __init__(self, info: Info | None = None, behaviour: Behaviour | None = None):
        self._buffer = bytearray()
        self.device = FakeDevice(None, info, behaviour, output=self._buffer.extend).boot()

    @property
    def in_waiting(self) -> int:
        return len(self._buffer)

    def device_waiting(self) -> bool:
        """Once its answer is read, nothing more comes: the device answered the write at once."""
        return not self._buffer

    def read(self, size: int = 1) -> bytes:
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def write(self, data: bytes) -> int:
        self.device.receive(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass
