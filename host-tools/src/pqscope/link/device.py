"""A session with the harness firmware: send commands, collect the records that answer them."""

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import serial

from ..project.errors import PqscopeError
from .frames import DELIMITER, Frame, FrameDecoder
from .messages import (Command, Digest, Done, ErrorRecord, Hello, Info, KeyBytes, KeygenSlot, KeyRead, KeyWrite, Probe,
                       ProbeName, Record, Run, Sample, SignSlot, decode_message, encode_message)
from .protocol import KEY_CHUNK_BYTES, RUN_FLAG_DIGEST, ErrorCode, Op, ProtocolError, Status
from .transport import TransportError


class DeviceTimeout(PqscopeError):
    pass


class DeviceError(PqscopeError):
    """The device reported an error or broke the protocol."""


class OperationFailed(DeviceError):
    """The implementation's function returned an error (a RUN stops there: no later operation)."""


class _Reported(DeviceError):
    """The device answered a command with an ERROR record."""

    def __init__(self, record: ErrorRecord):
        super().__init__(f"device error {record.describe()}")
        self.record = record


class OutOfBounds(DeviceError):
    """An operation wrote outside its buffers or its stack (ERROR GUARD or STACK_OVERFLOW): its
    cycles cannot be trusted. `commands` replay it on a fresh device: they are seeded, and a
    SIGN_SLOT's key comes from the KEYGEN_SLOT before it."""

    def __init__(self, message: str, commands: tuple["Command", ...]):
        super().__init__(message)
        self.commands = commands


# The implementation's functions behind each operation (the NIST API's names).
API_FUNCTIONS = {Op.KEYGEN: "crypto_sign_keypair", Op.SIGN: "crypto_sign_signature", Op.VERIFY: "crypto_sign_verify"}


class Cancelled(Exception):
    """The session was cancelled (`DeviceSession.cancel`) while it waited for an answer."""


@dataclass(frozen=True)
class SampleResult:
    samples: list[Sample]
    done: Done
    digest: bytes | None = None  # the transcript digest, when asked for


class _Rejected(Exception):
    """The device answered BAD_FRAME: our command arrived corrupted."""


class _Silent(Exception):
    """No answer before the deadline, or none to come: the device waits for input."""

    def __init__(self, device_waiting: bool):
        self.device_waiting = device_waiting


class _Reset(Exception):
    """The device announced itself (boot INFO) in the middle of a command: it was reset."""

    def __init__(self, info: Info):
        self.info = info


def _deadline(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + timeout


class DeviceSession:
    """Talks to one device over an open port.

    Every attempt of a command gets a fresh `seq`, so late records from an abandoned attempt are
    recognised and ignored, and a record received twice within an answer is dropped. A command is
    sent again when the device reports BAD_FRAME, when its answer broke the protocol (records lost,
    duplicated or out of order: a sample is replayed exactly from its seed), when the device reset
    in the middle of a sample (RUN only: the key slots of KEYGEN_SLOT/SIGN_SLOT die with a reset),
    or when it went silent after the host dropped corrupted frames; it is never repeated after a
    clean silence, which means the device is not answering. `retries`, `duplicates` and `resets`
    count what was recovered, besides `bad_frames` and `stale`.

    `answer_timeout` and `sample_timeout` are the seconds a real board may stay silent before a
    record; None waits without a deadline, for a port that knows when nothing more will come (the
    virtual board's: its device waits for input, or its emulator ended, which ends the port).
    """

    def __init__(
        self,
        port: serial.SerialBase,
        *,
        on_receive: Callable[[bytes], object] | None = None,
        answer_timeout: float | None = 2.0,
        sample_timeout: float | None = 60.0,
        attempts: int = 3,
    ):
        self._port = port
        self._on_receive = on_receive
        self._decoder = FrameDecoder()
        self._frames: deque[Frame] = deque()
        self._seq = 0
        self._answered = False  # a boot INFO after the first answer means the device reset
        self._info: Info | None = None  # what HELLO returned: a reset must bring back the same image
        self._keygens: dict[int, KeygenSlot] = {}  # the command that made each slot's key
        self.probe_names: tuple[str, ...] = ()  # the image's probed functions, in SAMPLE order
        self.retries = 0
        self.duplicates = 0
        self.resets = 0
        self.stale = 0  # records answering an earlier attempt or command (late, or received twice)
        self.answer_timeout = answer_timeout
        self.sample_timeout = sample_timeout
        self.attempts = attempts
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        """Makes the command waiting for its answer (in another thread) raise Cancelled within one
        read's timeout, and so every later command."""
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    @property
    def bad_frames(self) -> int:
        return self._decoder.bad_count

    def hello(self) -> Info:
        """The device's INFO; the names of its probes (if any) are then in `probe_names`."""
        # HELLO is retried on silence too: a board that was resetting may have missed it.
        records = self._command(
            Hello(), Info, self.answer_timeout, retry_on_silence=True, what="INFO in answer to HELLO"
        )
        self._info = records[-1]
        self.probe_names = tuple(self._probe_name(index) for index in range(self._info.probes))
        return records[-1]

    def _probe_name(self, index: int) -> str:
        records = self._command(
            Probe(index), ProbeName, self.answer_timeout, retry_on_silence=False, what=f"name of probe {index}",
            check=lambda answer: None if answer[-1].index == index else
            f"device named probe {answer[-1].index} when asked for probe {index}")
        return records[-1].name

    def run_sample(
        self, seed: bytes, msg_len: int, ops: tuple[Op, ...], sample_id: int, *, digest: bool = False
    ) -> SampleResult:
        """One sample; with `digest`, the device also sends the transcript digest."""
        ops = tuple(sorted(set(ops)))
        records = self._command(
            Run(ops, msg_len, sample_id, seed, RUN_FLAG_DIGEST if digest else 0),
            Done,
            self.sample_timeout,
            retry_on_silence=False,
            retry_on_reset=True,
            what=f"record of sample {sample_id}",
            check=lambda answer: _check_sample(answer, ops, sample_id, digest, len(self.probe_names)),
        )
        digests = [r.digest for r in records if isinstance(r, Digest)]
        samples = [r for r in records if isinstance(r, Sample)]
        if records[-1].status == Status.OP_FAILED:
            raise OperationFailed(_failed_operation(samples, sample_id))
        return SampleResult(samples, records[-1], digests[0] if digests else None)

    def keygen_slot(self, slot: int, seed: bytes, sample_id: int) -> Sample:
        """A key pair from `seed` into `slot` of the device's key pool (its keygen SAMPLE)."""
        command = KeygenSlot(slot, sample_id, seed)
        self._keygens[slot] = command
        return self._slot_command(command, Op.KEYGEN)

    def read_key(self, slot: int) -> bytes:
        """The key pair of `slot` (pk || sk), as its key generation wrote it."""
        key = b""
        while True:
            offset = len(key)
            chunk = self._command(
                KeyRead(slot, offset), KeyBytes, self.answer_timeout, retry_on_silence=True,
                what=f"bytes of the key in slot {slot}",
                check=lambda answer: None if (answer[-1].slot, answer[-1].offset) == (slot, offset) else
                f"device sent key bytes of slot {answer[-1].slot} at {answer[-1].offset} when asked for slot {slot} "
                f"at {offset}")[-1]
            key += chunk.data
            if len(key) >= chunk.total or not chunk.data:
                break
        if len(key) != chunk.total:
            raise ProtocolError(f"the device sent {len(key)} bytes of the key in slot {slot}, of {chunk.total}")
        return key

    def write_key(self, slot: int, key: bytes, made_by: KeygenSlot) -> None:
        """The key pair `key` (read_key's) into `slot`; `made_by` is the command that makes the same
        key (a replayed signature remakes it)."""
        for offset in range(0, len(key), KEY_CHUNK_BYTES):
            self._command(KeyWrite(slot, offset, key[offset:offset + KEY_CHUNK_BYTES]), Done, self.answer_timeout,
                          retry_on_silence=True, what=f"DONE for the key written to slot {slot}")
        self._keygens[slot] = made_by

    def sign_slot(self, slot: int, seed: bytes, msg_len: int, sample_id: int,
                  message_seed: bytes | None = None) -> Sample:
        """One timed signature with the key of `slot` (its status covers the verification): its
        message and signing randomness from `seed`, or its message from `message_seed`."""
        return self._slot_command(SignSlot(slot, sample_id, seed, msg_len, message_seed), Op.SIGN)

    def replay(self, command: Run | KeygenSlot | SignSlot) -> None:
        """Sends a measuring command again (an OutOfBounds's), for what the device does with it."""
        if isinstance(command, Run):
            self.run_sample(command.seed, command.msg_len, command.ops, command.sample_id,
                            digest=bool(command.flags & RUN_FLAG_DIGEST))
        elif isinstance(command, KeygenSlot):
            self.keygen_slot(command.slot, command.seed, command.sample_id)
        else:
            self.sign_slot(command.slot, command.seed, command.msg_len, command.sample_id, command.message_seed)

    def _reproducing(self, command: Command) -> tuple[Command, ...]:
        keygen = self._keygens.get(command.slot) if isinstance(command, SignSlot) else None
        return (keygen, command) if keygen is not None else (command,)

    def _slot_command(self, command: KeygenSlot | SignSlot, op: Op) -> Sample:
        records = self._command(
            command, Done, self.sample_timeout, retry_on_silence=False,
            what=f"record of sample {command.sample_id}",
            check=lambda answer: _check_sample(answer, (op,), command.sample_id, False, len(self.probe_names)),
        )
        return records[0]

    def _command(
        self,
        command: Command,
        final: type,
        timeout: float | None,
        *,
        retry_on_silence: bool,
        retry_on_reset: bool = False,
        what: str,
        check: Callable[[list[Record]], str | None] = lambda answer: None,
    ) -> list[Record]:
        failure: PqscopeError | None = None
        for attempt in range(self.attempts):
            self.retries += attempt > 0
            self._seq = self._seq % 0xFFFF + 1  # 0 is reserved for unsolicited records
            seq = self._seq
            bad_before = self.bad_frames
            # Delimiters on both sides: noise before the command, or its own delimiter lost on
            # the line, cannot merge it with other bytes.
            self._write(bytes([DELIMITER]) + encode_message(command, seq) + bytes([DELIMITER]))
            try:
                answer = self._collect(seq, final, timeout)
            except _Reported as reported:
                if reported.record.code in (ErrorCode.GUARD, ErrorCode.STACK_OVERFLOW):
                    raise OutOfBounds(str(reported), self._reproducing(command)) from None
                raise
            except _Rejected:
                failure = DeviceError(f"the device received {command.TYPE.name} corrupted")
                continue
            except _Silent as silence:
                self._decoder.drop_partial()
                when = ", and it waits for input" if silence.device_waiting else f" within {timeout:g} s"
                failure = DeviceTimeout(f"device not answering on {self._port.port}: no {what}{when}")
                if retry_on_silence or self.bad_frames > bad_before:
                    continue
                raise failure from None
            except _Reset as reset:
                failure = DeviceError("the device reset during a sample (it announced itself again)")
                if not retry_on_reset:
                    raise failure from None
                if self._info is not None and reset.info != self._info:
                    raise DeviceError(f"the device reset and now runs another image ({reset.info.board}/"
                                      f"{reset.info.scheme}/{reset.info.impl}, build {reset.info.build_id})") from None
                self.resets += 1
                continue
            problem = check(answer)
            if problem is None:
                return answer
            failure = DeviceError(problem)
        if isinstance(failure, DeviceTimeout) and not self.bad_frames:
            hint = "is the pqscope image flashed and the board running?"
        elif self.bad_frames:
            hint = f"{self.bad_frames} corrupted frames received"
        else:
            hint = "the frames arrived intact: the device or its image misbehaves, not the line"
        raise type(failure)(f"{failure} ({self.attempts} tries; {hint})")

    def _collect(self, seq: int, final: type, timeout: float | None) -> list[Record]:
        """Records answering `seq`, up to and including the first of type `final`."""
        answer: list[Record] = []
        received: set[Frame] = set()
        deadline = _deadline(timeout)
        while True:
            frame = self._next_frame(deadline)
            record = decode_message(frame)
            if frame.seq == 0:
                self._unsolicited(record, during_hello=final is Info, answered=bool(answer))
            elif frame.seq != seq:
                self.stale += 1
            elif frame in received:
                self.duplicates += 1
            else:
                received.add(frame)
                if isinstance(record, ErrorRecord):
                    raise _Reported(record)
                self._answered = True
                answer.append(record)
                if isinstance(record, final):
                    return answer
                deadline = _deadline(timeout)  # the timeout is per record: samples are slow

    def _unsolicited(self, record: Record, *, during_hello: bool, answered: bool) -> None:
        if isinstance(record, Info):
            if during_hello or not self._answered:
                return  # the boot announcement; a reset before HELLO is harmless too
            raise _Reset(record)
        if isinstance(record, ErrorRecord):
            if record.code == ErrorCode.BAD_FRAME:
                if not answered:
                    raise _Rejected
                return  # our command got through: the corrupted frame was something else
            raise DeviceError(f"device error {record.describe()}")
        raise ProtocolError(f"unexpected {record.TYPE.name} record with seq 0")

    def _next_frame(self, deadline: float | None) -> Frame:
        while not self._frames:
            if self._cancelled.is_set():
                raise Cancelled
            data = self._read()
            if data:
                if self._on_receive:
                    self._on_receive(data)
                self._frames.extend(self._decoder.feed(data))
            elif self._device_waiting():
                raise _Silent(device_waiting=True)
            elif deadline is not None and time.monotonic() >= deadline:  # after a read: a stalled host is no silence
                raise _Silent(device_waiting=False)
        return self._frames.popleft()

    def _device_waiting(self) -> bool:
        """Whether the port knows that nothing will come until we write (the virtual board's
        UART does: the emulator reports when the firmware waits for input). A real board's port
        does not; there the deadline decides."""
        waiting = getattr(self._port, "device_waiting", None)
        return waiting is not None and waiting()

    def _read(self) -> bytes:
        try:
            return self._port.read(max(1, self._port.in_waiting))
        except (serial.SerialException, OSError) as error:
            raise TransportError(f"lost the connection to {self._port.port}: {error}") from None

    def _write(self, data: bytes) -> None:
        try:
            self._port.write(data)
            self._port.flush()
        except (serial.SerialException, OSError) as error:
            raise TransportError(f"lost the connection to {self._port.port}: {error}") from None


def _failed_operation(samples: list[Sample], sample_id: int) -> str:
    failed = next((s for s in samples if s.status == Status.OP_FAILED), None)
    if failed is None:  # an operation the command did not ask to report
        return f"sample {sample_id}: an operation it was not asked to report failed (its function returned an error)"
    return f"sample {sample_id}: {API_FUNCTIONS[failed.op]} returned {failed.returned}"


def _check_sample(answer: list[Record], ops: tuple[Op, ...], sample_id: int, digest: bool,
                  probes: int) -> str | None:
    samples = [r for r in answer if isinstance(r, Sample)]
    digests = [r for r in answer if isinstance(r, Digest)]
    got = tuple(s.op for s in samples)
    if isinstance(answer[-1], Done) and answer[-1].status == Status.OP_FAILED:
        ops = tuple(op for op in ops if samples and op <= samples[-1].op)  # a RUN stops at its failure
    ids = {r.sample_id for r in samples + digests} | {answer[-1].sample_id}
    expected_types = [Sample] * len(samples) + [Digest] * digest + [Done]
    if [type(r) for r in answer] != expected_types:
        wanted = "SAMPLE records, DIGEST, DONE" if digest else "SAMPLE records, DONE"
        return f"device answered sample {sample_id} with unexpected records (expected {wanted})"
    if got != ops:
        expected = ",".join(op.label for op in ops)
        reported = ",".join(op.label for op in got) or "nothing"
        return f"device reported {reported} for sample {sample_id}, expected {expected}"
    if ids != {sample_id}:
        return f"device answered sample {sample_id} with records for sample ids {sorted(ids)}"
    if len({len(s.probes) for s in samples} | {probes}) > 1:
        return f"device reported {sorted({len(s.probes) for s in samples})} probes for sample {sample_id}, expected {probes}"
    return None
