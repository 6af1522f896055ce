"""Constant-time signing test, dudect style: signatures with one *fixed* secret key (class 0)
against signatures with *random* secret keys (class 1), in random interleaved order.

Why the design separates key leaks from public randomness: both classes sign fresh random
messages with fresh signing randomness (every sample has its own seed), so whatever varies with
the message or the randomness — ML-DSA's rejection retries, Falcon's sampler — varies the same
way in both classes and widens both distributions alike. Only a dependence on the *key* can make
the classes differ, and that is what the statistics test. Keys come from the device's key pool,
generated before (outside the timed region of) any signature: slot 0 holds the fixed key, the
other slots random keys, optionally regenerated every `key_refresh` uses.
"""

import hashlib
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import leakstats
from .device import DeviceSession
from .errors import PqscopeError
from .protocol import Info, Sample, Status

FIXED, RANDOM = 0, 1
FIXED_SLOT = 0
# Keygen samples get ids of their own so that they never collide with signature ids.
KEYGEN_ID_BASE = 0x8000_0000
TOP_FUNCTIONS = 10


def derive_seed(master_seed: bytes, purpose: str, index: int) -> bytes:
    return hashlib.sha256(master_seed + purpose.encode() + index.to_bytes(4, "little")).digest()


@dataclass(frozen=True)
class CtSample:
    """One timed signature of the test."""

    index: int
    key_class: int  # FIXED or RANDOM
    key_id: int  # 0 for the fixed key; random keys are numbered in the order they were made
    seed: bytes
    cycles: int
    stack_bytes: int
    status: Status


@dataclass(frozen=True)
class KeyMade:
    key_id: int
    slot: int
    cycles: int


def capture_ct(
    session: DeviceSession,
    info: Info,
    *,
    samples: int,
    master_seed: bytes,
    msg_len: int,
    key_refresh: int = 0,
    on_key: Callable[[KeyMade], object] = lambda key: None,
) -> Iterator[CtSample]:
    """Runs `samples` signatures; `key_refresh` > 0 regenerates a random slot after that many uses."""
    if info.key_slots < 2:
        raise PqscopeError("this image has no key pool (INFO.key_slots < 2): rebuild it with this pqscope")
    order = random.Random(derive_seed(master_seed, "class-order", 0))
    keys_made = 0

    def make_key(slot: int) -> int:
        nonlocal keys_made
        key_id = keys_made
        sample = session.keygen_slot(slot, derive_seed(master_seed, "key", key_id), KEYGEN_ID_BASE + key_id)
        if sample.status != Status.OK:
            raise PqscopeError(f"key generation failed on the device (key {key_id}, slot {slot})")
        keys_made += 1
        on_key(KeyMade(key_id, slot, sample.cycles))
        return key_id

    slot_key = {slot: make_key(slot) for slot in range(info.key_slots)}
    random_slots = list(range(1, info.key_slots))
    uses = dict.fromkeys(random_slots, 0)
    next_random = 0
    for index in range(samples):
        key_class = order.getrandbits(1)
        slot = FIXED_SLOT
        if key_class == RANDOM:
            slot = random_slots[next_random % len(random_slots)]
            next_random += 1
            if key_refresh and uses[slot] == key_refresh:
                slot_key[slot] = make_key(slot)
                uses[slot] = 0
            uses[slot] += 1
        seed = derive_seed(master_seed, "sign", index)
        sample: Sample = session.sign_slot(slot, seed, msg_len, index)
        yield CtSample(index, key_class, slot_key[slot], seed, sample.cycles, sample.stack_bytes, sample.status)


def load_intervals(path: Path) -> list[dict]:
    """The emulator's signing intervals (one JSON line per signature, in order)."""
    try:
        return [json.loads(line) for line in path.read_text().splitlines()]
    except (OSError, ValueError) as error:
        raise PqscopeError(f"cannot read the emulator's intervals {path}: {error}") from None


def analyse_ct(samples: list[CtSample], intervals: list[dict] | None, retry_function: str | None,
               *, seed: int = 0) -> dict:
    """The verdict document: leak statistics of the verified signatures and, with the emulator's
    intervals, the functions whose time depends on the key class.

    With a `retry_function` (called once per signing attempt, e.g. ML-DSA's challenge sampling),
    the verdict is taken on the time corrected for the number of attempts: how often a rejection
    loop repeats is public randomness (its distribution may differ slightly between keys, which is
    not a timing leak of the key's use), so each attempt's linear cost is removed first. The
    uncorrected analysis is kept under "uncorrected"."""
    usable = [i for i, s in enumerate(samples) if s.status == Status.OK]
    classes = np.array([samples[i].key_class for i in usable])
    cycles = np.array([samples[i].cycles for i in usable], dtype=np.float64)
    profile = intervals if intervals is not None and len(intervals) == len(samples) else None
    document: dict = {}
    if retry_function and profile is not None:
        attempts = np.array([profile[i]["functions"].get(retry_function, [0, 0])[1] for i in usable], dtype=float)
        uncorrected = leakstats.analyse(classes, cycles, seed=seed)
        slope = float(np.polyfit(attempts, cycles, 1)[0]) if np.ptp(attempts) > 0 else 0.0
        cycles = cycles - slope * attempts
        document["uncorrected"] = uncorrected.to_json()
        document["correction"] = {
            "retry_function": retry_function, "cycles_per_attempt": slope,
            "mean_attempts": {"fixed": float(attempts[classes == FIXED].mean()),
                              "random": float(attempts[classes == RANDOM].mean())},
        }
    document = leakstats.analyse(classes, cycles, seed=seed).to_json() | document
    document["failed_samples"] = len(samples) - len(usable)
    if profile is not None:
        def columns(key_class: int) -> dict[str, np.ndarray]:
            rows = [profile[i]["functions"] for i, c in zip(usable, classes) if c == key_class]
            names = set().union(*rows)
            return {name: np.array([row.get(name, (0, 0))[0] for row in rows], dtype=float) for name in names}

        ranked = leakstats.rank_functions(columns(FIXED), columns(RANDOM))
        document["top_functions"] = [leak.to_json() for leak in ranked[:TOP_FUNCTIONS]]
    return document
