"""From a session with a board running an image to rows of measurements: check, run samples."""

import hashlib
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass

from .boards import Board
from .catalogue import Implementation
from .device import DeviceSession
from .errors import PqscopeError
from .protocol import Info, Op, ProbeReading, Status


@dataclass(frozen=True)
class Row:
    """One operation of one sample."""

    sample_id: int
    op: Op
    seed: bytes
    cycles: int
    stack_bytes: int
    status: Status
    verified: bool  # the whole sample succeeded: its signature verified, the corrupted one did not
    probes: tuple[ProbeReading, ...] = ()  # the image's probes, in the order of their names
    board: str = ""  # the serial number of the board that measured it (INFO.board_serial)


def check_info(info: Info, board: Board, implementation: Implementation, msg_len: int) -> None:
    """The device must run the image we mean to measure."""
    running = f"{info.board}/{info.scheme}/{info.impl}"
    wanted = f"{board.name}/{implementation.scheme}/{implementation.impl}"
    if (info.scheme, info.impl) != (implementation.scheme, implementation.impl) or (
        info.board not in board.firmware_names
    ):
        raise PqscopeError(f"the device runs {running}, not {wanted}: flash the right image")
    if info.clock_hz != board.clock_hz:
        raise PqscopeError(f"the device's image runs at {info.clock_hz / 1e6:g} MHz, not at --clock {board.clock.name} "
                           f"({board.clock.describe()}): flash the image built for that clock")
    compiled = (info.pk_bytes, info.sk_bytes, info.sig_bytes)
    catalogued = (implementation.pk_bytes, implementation.sk_bytes, implementation.sig_bytes)
    # A bring-your-own implementation (--impl-dir) has no catalogue sizes: the device's are the truth.
    if implementation.directory is None and compiled != catalogued:
        raise PqscopeError(
            f"{implementation.scheme}/{implementation.impl}: the image's api.h sizes (pk, sk, sig) {compiled} "
            f"differ from the catalogue's {catalogued}: fix firmware/schemes/catalogue.json")
    if msg_len > info.max_msg_len:
        raise PqscopeError(f"--msg-len {msg_len} exceeds the image's maximum of {info.max_msg_len}")


# Keygen samples get ids of their own so that they never collide with signature ids.
KEYGEN_ID_BASE = 0x8000_0000
INTERVAL_FUNCTION = "run_sign"  # the harness function around each timed signature


def derive_seed(master_seed: bytes, purpose: str, index: int) -> bytes:
    return hashlib.sha256(master_seed + purpose.encode() + index.to_bytes(4, "little")).digest()


def sample_seed(master_seed: bytes, index: int) -> bytes:
    """Each sample's seed, derived so that the master seed replays the whole run."""
    return hashlib.sha256(master_seed + index.to_bytes(4, "little")).digest()


def capture(
    session: DeviceSession, *, ops: tuple[Op, ...], samples: int, msg_len: int, master_seed: bytes,
    skip: Collection[int] = (), owns: Callable[[int], bool] = lambda index: True, board: str = "",
) -> Iterator[list[Row]]:
    """Runs the samples that `owns` selects one by one, except those in `skip` (a resumed run's
    completed samples), yielding each one's rows as soon as it is done; `board` is the serial
    number of the board `session` reaches."""
    for index in range(samples):
        if index in skip or not owns(index):
            continue
        seed = sample_seed(master_seed, index)
        result = session.run_sample(seed, msg_len, ops, index)
        verified = result.done.status == Status.OK
        yield [
            Row(index, sample.op, seed, sample.cycles, sample.stack_bytes, sample.status, verified, sample.probes, board)
            for sample in result.samples
        ]
