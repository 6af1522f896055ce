"""A fault injector between host and device: a pyserial-compatible wrapper around an open port
that damages a fraction of the frames crossing it, in both directions, the way a noisy USB-TTL
adapter, a resetting board or a pulled cable would. Used to prove that the session detects and
recovers from every fault class and that no wrong sample reaches the samples file."""

import hashlib
import random
from collections import Counter
from collections.abc import Callable
from enum import StrEnum

import serial

from pqscope.link.frames import DELIMITER


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

    Whether and how frame k of a direction is damaged depends only on `seed`, the direction and
    k, never on how reads happen to be chunked. A frame to be reordered is held until its
    successor arrives, then delivered after it. `port` must offer `device_waiting()` (see
    `pqscope.targets.vboard.VirtualUart`): a frame held while the device waits has no successor coming
    and is delivered as it is.

    `frames` counts the frames that crossed, `injected` the faults applied, both by direction
    ("read" for the device's records, "write" for the host's commands)."""

    def __init__(self, port, fault: Fault, rate: float, *, seed: int = 0,
                 reset_device: Callable[[], object] | None = None):
        if fault is Fault.RESET and reset_device is None:
            raise ValueError("Fault.RESET needs reset_device")
        self._port = port
        self.fault = fault
        self.rate = rate
        self._seed = seed
        self._reset_device = reset_device
        self._incoming = bytearray()  # read from the port, not yet cut into whole frames
        self._held: bytes | None = None  # a frame waiting for its successor to overtake it
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

    def device_waiting(self) -> bool:
        """The device waits for input and everything it sent has been read through this port."""
        return self._port.device_waiting() and self._held is None and not self._incoming and not self._delivered

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
                fate = self._fate("write")
                if fate is not None and self.fault not in DEVICE_SIDE_ONLY:
                    self.injected["write"] += 1
                    frame = self._damage(frame, fate)
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

    def _fate(self, direction: str) -> random.Random | None:
        """Counts the next frame of `direction`; for a frame to damage, the generator that decides
        how (seeded by the seed, the direction and the frame's index), else None."""
        index = self.frames[direction]
        self.frames[direction] += 1
        key = hashlib.sha256(f"{self._seed}/{direction}/{index}".encode()).digest()
        rng = random.Random(int.from_bytes(key))
        return rng if rng.random() < self.rate else None

    def _pull(self) -> None:
        """Moves the complete frames received so far, damaged or not, to the delivered bytes."""
        if self._disconnected:
            return
        waiting = self._port.in_waiting
        if waiting:
            self._incoming += self._port.read(waiting)
        end = self._incoming.rfind(DELIMITER) + 1
        frames = _split(bytes(self._incoming[:end]))
        del self._incoming[:end]
        for frame in frames:
            if not frame.strip(bytes([DELIMITER])):
                self._delivered += frame
                continue
            if self._held is not None:  # the successor overtakes the held frame
                self.frames["read"] += 1  # not damaged itself: the fault is the pair's
                self.injected["read"] += 1
                self._delivered += frame + self._held
                self._held = None
                continue
            fate = self._fate("read")
            if fate is None:
                self._delivered += frame
            elif self.fault is Fault.REORDER_FRAMES:
                self._held = frame
            elif self.fault is Fault.RESET:
                self.injected["read"] += 1
                self._incoming.clear()  # the device's pending output is lost with it
                self._reset_device()
                return
            else:
                self.injected["read"] += 1
                self._delivered += self._damage(frame, fate)
                if self._disconnected:
                    return
        if self._held is not None and self._port.device_waiting():
            self._delivered += self._held  # nothing can overtake it any more: delivered as is
            self._held = None

    def _damage(self, frame: bytes, rng: random.Random) -> bytes:
        """`frame` (its bytes and delimiter) after the byte-level fault; may disconnect."""
        data = bytearray(frame)
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


def _split(data: bytes) -> list[bytes]:
    """`data` cut after every delimiter (the last piece may lack one)."""
    pieces, start = [], 0
    while (end := data.find(DELIMITER, start)) >= 0:
        pieces.append(data[start : end + 1])
        start = end + 1
    if start < len(data):
        pieces.append(data[start:])
    return pieces
