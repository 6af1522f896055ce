"""The harness's DRBG in Python (firmware/harness/drbg.c): ChaCha20 keyed by a sample's 32-byte
seed, a 64-bit block counter from 0 and a zero nonce, its key stream read in order. A host-side
implementation fed the same stream draws the same key seeds, message and signing randomness as the
device, so it can recompute the device's sample."""

MASK = 0xFFFFFFFF


def _rotl(v: int, shift: int) -> int:
    return ((v << shift) | (v >> (32 - shift))) & MASK


def _quarter_round(x: list[int], a: int, b: int, c: int, d: int) -> None:
    x[a] = (x[a] + x[b]) & MASK
    x[d] = _rotl(x[d] ^ x[a], 16)
    x[c] = (x[c] + x[d]) & MASK
    x[b] = _rotl(x[b] ^ x[c], 12)
    x[a] = (x[a] + x[b]) & MASK
    x[d] = _rotl(x[d] ^ x[a], 8)
    x[c] = (x[c] + x[d]) & MASK
    x[b] = _rotl(x[b] ^ x[c], 7)


def chacha20_block(key: bytes, counter_nonce: tuple[int, int, int, int]) -> bytes:
    """pqs_chacha20_block: one 64-byte block of key stream (words 12..15 = counter_nonce)."""
    state = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574,
             *(int.from_bytes(key[i:i + 4], "little") for i in range(0, 32, 4)), *counter_nonce]
    x = list(state)
    for _ in range(10):
        for a, b, c, d in ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
                           (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14)):
            _quarter_round(x, a, b, c, d)
    return b"".join(((v + s) & MASK).to_bytes(4, "little") for v, s in zip(x, state))


class DeviceDrbg:
    """The byte stream a device's randombytes() returns after seeding with `seed`."""

    def __init__(self, seed: bytes):
        assert len(seed) == 32
        self._key = seed
        self._counter = 0
        self._buffer = b""

    def generate(self, n: int) -> bytes:
        while len(self._buffer) < n:
            self._buffer += chacha20_block(self._key, (self._counter & MASK, self._counter >> 32, 0, 0))
            self._counter += 1
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out
