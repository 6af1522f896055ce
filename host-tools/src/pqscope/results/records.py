"""What a measurement records: one row per operation of a sample, and the seeds that make every
sample reproducible from the run's master seed."""

import hashlib
from dataclasses import dataclass

from ..link.messages import ProbeReading
from ..link.protocol import Op, Status


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


# Keygen samples get ids of their own so that they never collide with signature ids.
KEYGEN_ID_BASE = 0x8000_0000
INTERVAL_FUNCTION = "run_sign"  # the harness function around each timed signature


def derive_seed(master_seed: bytes, purpose: str, index: int) -> bytes:
    return hashlib.sha256(master_seed + purpose.encode() + index.to_bytes(4, "little")).digest()


def sample_seed(master_seed: bytes, index: int) -> bytes:
    """Each sample's seed, derived so that the master seed replays the whole run."""
    return hashlib.sha256(master_seed + index.to_bytes(4, "little")).digest()
