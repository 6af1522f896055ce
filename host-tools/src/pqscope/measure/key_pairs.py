"""Key pairs an exact check made, for the statistics that run after it. A constant-time test's
exact check and its statistics sign with the same keys (each key comes from its own seed), and each
board makes every key it signs with: RSA-2048's key generation takes 2-5 G cycles, more than all
its signatures. The check keeps each key whose generation took longer than carrying it would
(`dear`), read back from its board (KEY_READ); the statistics' boards are given it (KEY_WRITE)
instead of making it again. Only a check that ends before the statistics begin keeps keys: a board's signing
time may follow what it ran before (mbedtls's heap), so a signature's cycles do not depend on which
thread made a key first."""

import threading
from dataclasses import dataclass

from ..link.device import DeviceSession
from ..link.messages import Info, KeygenSlot, Sample
from ..link.protocol import Status

# A key is carried only where its generation took more than this, plus CYCLES_PER_KEY_BYTE for each
# byte of its pair: a byte takes 87 us each way on a 115,200-baud line, 2,100 cycles of a board at
# 24 MHz (UOV's 237 KB key pairs, made in less, are made again).
SHARED_ABOVE_CYCLES = 100_000_000
CYCLES_PER_KEY_BYTE = 2_100


def dear(sample: Sample, info: Info) -> bool:
    """Whether the key generation of `sample`, on a board with INFO `info`, cost more than carrying its key."""
    return sample.cycles > SHARED_ABOVE_CYCLES + CYCLES_PER_KEY_BYTE * (info.pk_bytes + info.sk_bytes)


@dataclass(frozen=True)
class _Kept:
    pair: bytes  # pk || sk
    sample: Sample  # its key generation's


class KeyPairs:
    """The key pairs kept, by image, clock and seed (thread-safe: the check's shards keep keys side
    by side)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._kept: dict[tuple, _Kept] = {}

    def make_and_keep(self, session: DeviceSession, info: Info, slot: int, seed: bytes, sample_id: int) -> Sample:
        """The key of `seed` generated into `slot` of the session's board (its INFO `info`), kept if
        that was dear; its key generation's SAMPLE."""
        sample = session.keygen_slot(slot, seed, sample_id)
        if sample.status == Status.OK and dear(sample, info):
            pair = session.read_key(slot)
            with self._lock:
                self._kept[info.build_id, info.clock_hz, seed] = _Kept(pair, sample)
        return sample

    def make(self, session: DeviceSession, info: Info, slot: int, seed: bytes, sample_id: int) -> Sample:
        """The key of `seed` into `slot`: written there if kept from a board of the same image and
        clock, else generated; the SAMPLE of its key generation, wherever that ran."""
        with self._lock:
            kept = self._kept.get((info.build_id, info.clock_hz, seed))
        if kept is None:
            return session.keygen_slot(slot, seed, sample_id)
        session.write_key(slot, kept.pair, KeygenSlot(slot, sample_id, seed))
        return kept.sample
