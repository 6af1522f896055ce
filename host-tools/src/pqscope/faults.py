"""A fault injector between host and device: a pyserial-compatible wrapper around an open port
that damages a fraction of the frames crossing it, in both directions, the way a noisy USB-TTL
adapter, a resetting board or a pulled cable would. Used to prove that the session detects and
recovers from every fault class and that no wrong sample reaches the samples file."""

import random
from collections import Counter
from collections.abc import Callable
from enum import StrEnum

import serial

from .frames import DELIMITER


class Fault(StrEnum):
    BIT_FLIP = "bit-flip"  # one bit of one byte (the delimiter included)
    DROP_BYTE = "drop-byte"  # one byte lost (the delimiter included: two frames merge)
    DUPLICATE_BYTE = "duplicate-byte"  # one byte of the body received twice
    SWAP_BYTES = "swap-bytes"  # two adjacent different bytes swapped
    TRUNCATE = "truncate"  # the frame's tail lost, its delimiter kept
    DUPLICATE_FRAME = "duplicate-frame"  # a whole valid frame received twice
    REORDER_FRAMES = "reorder-frames"  # a valid frame overtaken by the next one
    RESET = "reset"  # the device resets: its pending output is lost, it announces itself again
    DISCONNECT = "disconnect"  # the cable is pulled: every later read or write fails


# Faults that only make sense on the device's output.
DEVICE_SIDE_ONLY = (Fault.REORDER_FRAMES, Fault.RESET)


class FaultyPort:
    """Wraps `port`; each frame crossing it (commands written, records read) suffers `fault` with
    probability `rate`. `reset_device` makes the device behind the port reset (Fault.RESET).

    `frames` counts the frames that crossed, `injected` the faults applied, both by direction
    ("read" for the device's records, "write" for the host's commands)."""

    def __init__(self, port, fault: Fault, rate: float, *, seed: int = 0,
                 reset_device: Callable[[], object] | None = None):
        if fault is Fault.RESET and reset_device is None:
            raise ValueError("Fault.RESET needs reset_device")
        self._port = port
        self.fault = fault
        self.rate = rate
        self._random = random.Random(seed)
        self._reset_device = reset_device
        self._incoming = bytearray()  # read from the port, not yet cut into whole frames
        self._delivered = bytearray()  # processed, ready for read()
        self._disconnected = False
        self.frames: Counter[str] = Counter()
        self.injected: Counter[str] = Counter()

    @property
    def port(self) -> str:
        return self._port.port

    @property
    def in_waiting(self) -> int:
        self._pull()
        return len(self._delivered)

    def read(self, size: int = 1) -> bytes:
        self._pull()
        if not self._delivered:
            # Let the wrapped port wait for data (its timeout), then process what came.
            self._check_connected()
            self._incoming += self._port.read(1)
            self._pull()
        data = bytes(self._delivered[:size])
        del self._delivered[:size]
        return data

    def write(self, data: bytes) -> int:
        self._check_connected()
        out = bytearray()
        for frame in _split(bytes(data)):
            if frame.strip(bytes([DELIMITER])):
                self.frames["write"] += 1
                if self.fault not in DEVICE_SIDE_ONLY and self._chosen():
                    self.injected["write"] += 1
                    frame = self._damage(frame)
                    self._check_connected()
            out += frame
        self._port.write(bytes(out))
        return len(data)

    def flush(self) -> None:
        self._check_connected()
        self._port.flush()

    def close(self) -> None:
        self._port.close()

    def _check_connected(self) -> None:
        if self._disconnected:
            raise serial.SerialException("device disconnected (injected fault)")

    def _chosen(self) -> bool:
        return self._random.random() < self.rate

    def _pull(self) -> None:
        """Moves the complete frames received so far, damaged or not, to the delivered bytes."""
        if self._disconnected:
            return
        waiting = self._port.in_waiting
        if waiting:
            self._incoming += self._port.read(waiting)
        end = self._incoming.rfind(DELIMITER) + 1
        if not end:
            return
        frames = _split(bytes(self._incoming[:end]))
        del self._incoming[:end]
        index = 0
        while index < len(frames):
            frame = frames[index]
            index += 1
            if not frame.strip(bytes([DELIMITER])):
                self._delivered += frame
                continue
            self.frames["read"] += 1
            if not self._chosen():
                self._delivered += frame
            elif self.fault is Fault.REORDER_FRAMES and _overtakes(frames, index):
                self.injected["read"] += 1
                self.frames["read"] += 1
                self._delivered += frames[index] + frame
                index += 1
            elif self.fault is Fault.RESET:
                self.injected["read"] += 1
                self._incoming.clear()  # the device's pending output is lost with it
                self._reset_device()
                return
            elif self.fault is Fault.REORDER_FRAMES:
                self._delivered += frame  # nothing to overtake it: delivered as is
            else:
                self.injected["read"] += 1
                self._delivered += self._damage(frame)
                if self._disconnected:
                    return

    def _damage(self, frame: bytes) -> bytes:
        """`frame` (its bytes and delimiter) after the byte-level fault; may disconnect."""
        rng, data = self._random, bytearray(frame)
        body = len(data) - 1  # bytes before the delimiter
        if self.fault is Fault.BIT_FLIP:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif self.fault is Fault.DROP_BYTE:
            del data[rng.randrange(len(data))]
        elif self.fault is Fault.DUPLICATE_BYTE:
            position = rng.randrange(body)
            data.insert(position, data[position])
        elif self.fault is Fault.SWAP_BYTES:
            pairs = [i for i in range(len(data) - 1) if data[i] != data[i + 1]]
            i = rng.choice(pairs)
            data[i], data[i + 1] = data[i + 1], data[i]
        elif self.fault is Fault.TRUNCATE:
            del data[rng.randrange(1, body) : body]
        elif self.fault is Fault.DUPLICATE_FRAME:
            data += frame
        elif self.fault is Fault.DISCONNECT:
            self._disconnected = True
            del data[rng.randrange(len(data)) :]  # the cable goes mid-frame
        return bytes(data)


def _overtakes(frames: list[bytes], index: int) -> bool:
    """Whether frames[index] is a frame other than the one before it (that it can overtake)."""
    return index < len(frames) and frames[index] != frames[index - 1] and bool(frames[index].strip(bytes([DELIMITER])))


def _split(data: bytes) -> list[bytes]:
    """`data` cut after every delimiter (the last piece may lack one)."""
    pieces, start = [], 0
    while (end := data.find(DELIMITER, start)) >= 0:
        pieces.append(data[start : end + 1])
        start = end + 1
    if start < len(data):
        pieces.append(data[start:])
    return pieces
