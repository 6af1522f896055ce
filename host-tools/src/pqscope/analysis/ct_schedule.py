"""The constant-time test's signatures, dudect style: signatures with one *fixed* secret key (class 0)
against signatures with *random* secret keys (class 1), in random interleaved order. This module
holds the schedule that gives each signature its class and key, their capture on the device, and
their files (ct.csv, and on the virtual board the emulator's intervals.jsonl), kept on a resume.

Why the design separates key leaks from public randomness: both classes sign fresh random
messages with fresh signing randomness (every sample has its own seed), so whatever varies with
the message or the randomness — ML-DSA's rejection retries, Falcon's sampler — varies the same
way in both classes and widens both distributions alike. Only a dependence on the *key* can make
the classes differ, and that is what the statistics test. Keys come from the device's key pool,
generated before (outside the timed region of) any signature: slot 0 holds the fixed key, the
other slots random keys, optionally regenerated every `key_refresh` uses.
"""

import csv
import random
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..link.device import DeviceSession
from ..link.messages import Info, ProbeReading, Sample
from ..link.protocol import Status
from ..measure.capture import shard_directories
from ..measure.key_pairs import KeyPairs
from ..project.errors import PqscopeError
from ..results.documents.profile import ProfiledInterval, identified, json_lines
from ..results.probes import probe_columns, probe_values, readings_from_values
from ..results.records import KEYGEN_ID_BASE, derive_seed
from ..results.rundir import STATUS_BY_LABEL, csv_lines, read_header, write_atomically
from .ttests import FIXED, RANDOM

FIXED_SLOT = 0

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
    probes: tuple[ProbeReading, ...] = ()  # the image's probes, in the order of their names
    board: str = ""  # the serial number of the board that measured it (INFO.board_serial)


@dataclass(frozen=True)
class KeyMade:
    key_id: int
    slot: int
    cycles: int


@dataclass(frozen=True)
class Signing:
    """One signature of the test's schedule, and the key each pool slot holds at that point."""

    index: int
    key_class: int
    slot: int
    slot_keys: dict[int, int]  # slot -> key id


def schedule(master_seed: bytes, samples: int, key_slots: int, key_refresh: int) -> Iterator[Signing]:
    """The test's signatures in order: the class of each, and the slot and key it uses. Classes come
    in pairs, one of each in an order drawn from the master seed, so that every even prefix of the
    test is balanced (a test stopped early, or cut into shards, still has equal classes). Key ids
    number the keys in the order they are first needed: the pool's slots first, then each
    refreshed random key."""
    order = random.Random(derive_seed(master_seed, "class-order", 0))
    slot_keys = {slot: slot for slot in range(key_slots)}
    keys_made = key_slots
    random_slots = list(range(1, key_slots))
    uses = dict.fromkeys(random_slots, 0)
    next_random = 0
    for index in range(samples):
        if index % 2 == 0:
            first_of_pair = order.getrandbits(1)  # FIXED or RANDOM
        key_class = first_of_pair if index % 2 == 0 else RANDOM + FIXED - first_of_pair
        slot = FIXED_SLOT
        if key_class == RANDOM:
            slot = random_slots[next_random % len(random_slots)]
            next_random += 1
            if key_refresh and uses[slot] == key_refresh:
                slot_keys[slot] = keys_made
                keys_made += 1
                uses[slot] = 0
            uses[slot] += 1
        yield Signing(index, key_class, slot, dict(slot_keys))


def capture_ct(
    session: DeviceSession,
    info: Info,
    *,
    samples: int,
    master_seed: bytes,
    msg_len: int,
    key_refresh: int = 0,
    random_keys: int | None = None,
    key_pairs: KeyPairs | None = None,
    done: Collection[int] = (),
    owns: Callable[[int], bool] = lambda index: True,
    on_key: Callable[[KeyMade], object] = lambda key: None,
    first_pool: int | None = None,
    before_signing: Callable[[int], object] = lambda index: None,
) -> Iterator[CtSample]:
    """Runs the schedule's signatures that `owns` selects (a shard's) but those in `done` (a
    resumed test's); `key_refresh` > 0 regenerates a random slot after that many uses; the pool's
    first `random_keys` random slots are used (None: all). Keys are made before the signatures that
    use them, from their own seeds: the pool a resumed test or another shard builds holds the same
    keys (those `key_pairs` kept from the exact check before the test are written, not made). The
    pool is made before the shard's first signature, or with `first_pool` in two steps: before each
    signature below that index, the key it signs with, and the whole pool before its first signature
    from there (a test that may stop at its first look makes no key it would not use; SPHINCS+'s
    pool is 255 keys). `before_signing(index)` runs before each signature's keys and signing (it
    may wait: for the exact check beside the test)."""
    if info.key_slots < 2:
        raise PqscopeError(f"this image's key pool holds {info.key_slots} key pair(s) (INFO.key_slots): a constant-time "
                           "test needs two, a fixed key and a random one; build it with this pqscope for a board with "
                           "room for two beside its stack")
    on_device: dict[int, int] = {}  # slot -> key id the device holds
    pairs = key_pairs or KeyPairs()

    def make_key(slot: int, key_id: int) -> None:
        sample = pairs.make(session, info, slot, derive_seed(master_seed, "key", key_id), KEYGEN_ID_BASE + key_id)
        if sample.status != Status.OK:
            raise PqscopeError(f"key generation failed on the device (key {key_id}, slot {slot})")
        on_device[slot] = key_id
        on_key(KeyMade(key_id, slot, sample.cycles))

    slots = info.key_slots if random_keys is None else min(info.key_slots, 1 + random_keys)
    for signing in schedule(master_seed, samples, slots, key_refresh):
        if signing.index in done or not owns(signing.index):
            continue
        before_signing(signing.index)
        early = first_pool is not None and signing.index < first_pool
        needed = {signing.slot: signing.slot_keys[signing.slot]} if early else signing.slot_keys
        for slot, key_id in needed.items():
            if on_device.get(slot) != key_id:
                make_key(slot, key_id)
        seed = derive_seed(master_seed, "sign", signing.index)
        sample: Sample = session.sign_slot(signing.slot, seed, msg_len, signing.index)
        yield CtSample(signing.index, signing.key_class, signing.slot_keys[signing.slot], seed, sample.cycles,
                       sample.stack_bytes, sample.status, sample.probes, info.board_serial)


def first_signatures(records: list[CtSample], count: int) -> list[CtSample]:
    """The schedule's first `count` signatures, in its order."""
    return sorted((record for record in records if record.index < count), key=lambda record: record.index)


INTERVALS_FILE = "intervals.jsonl"
SIGNING_INTERVAL = "a signature's interval"  # what each line of INTERVALS_FILE is
CT_FIELDS = ("index", "key_class", "key_id", "seed", "cycles", "stack_bytes", "status", "board")


def ct_record(sample: CtSample) -> tuple:
    """A signature's row of ct.csv."""
    return (sample.index, sample.key_class, sample.key_id, sample.seed.hex(), sample.cycles, sample.stack_bytes,
            sample.status.label, sample.board, *probe_values(sample.probes))


def keep_captured(path: Path, master_seed: bytes, samples: int, with_intervals: bool) -> list[CtSample]:
    """The signatures a resumed test keeps, in the order of the schedule, written back
    (atomically) as its ct.csv and, on the virtual board, as the intervals.jsonl of each shard
    holding their emulator intervals: a line cut short is dropped, and so is a signature whose
    interval was not written. Shards write their signatures as they come: ct.csv holds them in
    any order."""
    samples_path = path / "ct.csv"
    try:
        lines = samples_path.read_text().splitlines(keepends=True)
    except (OSError, UnicodeDecodeError) as error:
        raise PqscopeError(f"cannot resume {path}: cannot read ct.csv ({error})") from None
    if lines and not lines[-1].endswith("\n"):
        lines.pop()
    rows = list(csv.reader(lines))
    probe_names = read_header(samples_path, rows[0], CT_FIELDS) if rows else ()
    kept: dict[int, CtSample] = {}
    for number, record in enumerate(rows[1:], start=2):
        try:
            if len(record) != len(CT_FIELDS) + 2 * len(probe_names):
                raise ValueError(f"{len(record)} fields")
            index, key_class, key_id, seed, cycles, stack_bytes, status, board = record[:len(CT_FIELDS)]
            sample = CtSample(int(index), int(key_class), int(key_id), bytes.fromhex(seed), int(cycles),
                              int(stack_bytes), STATUS_BY_LABEL[status],
                              readings_from_values(record[len(CT_FIELDS):]), board)
        except (ValueError, KeyError) as error:
            raise PqscopeError(f"{samples_path} is damaged at line {number}: {error}") from None
        if not 0 <= sample.index < samples or sample.seed != derive_seed(master_seed, "sign", sample.index):
            raise PqscopeError(f"{samples_path} does not belong to this test: line {number} is not a signature "
                               f"of meta.json's master seed and -n")
        if sample.index in kept:
            raise PqscopeError(f"{samples_path} is damaged: signature {sample.index} appears twice")
        kept[sample.index] = sample
    if with_intervals:
        timed: set[int] = set()
        for directory in shard_directories(path):
            intervals_path = directory / INTERVALS_FILE
            if not intervals_path.exists():
                continue
            own = [(text, interval) for text, interval in json_lines(intervals_path, identified, SIGNING_INTERVAL)
                   if interval.sample_id in kept]
            timed |= {interval.sample_id for _, interval in own}
            write_atomically(intervals_path, "".join(text for text, _ in own))
        kept = {index: sample for index, sample in kept.items() if index in timed}
    ordered = [kept[index] for index in sorted(kept)]
    write_atomically(samples_path, csv_lines([CT_FIELDS + probe_columns(probe_names), *map(ct_record, ordered)])
                     if ordered else "")
    return ordered


def load_intervals(path: Path) -> list[ProfiledInterval]:
    """The emulator's signing intervals (one JSON line per signature) of every shard of the test at `path`."""
    files = [directory / INTERVALS_FILE for directory in shard_directories(path)
             if (directory / INTERVALS_FILE).exists()]
    if not files:
        raise PqscopeError(f"cannot read the emulator's intervals: {path} has no {INTERVALS_FILE}")
    intervals = []
    for file in files:
        try:
            # A look reads them while the emulators still write: a line not ended yet is left out
            # (a signature whose interval is missing is an error where they are joined).
            intervals += [interval for _, interval in json_lines(file, ProfiledInterval.from_json, SIGNING_INTERVAL)]
        except OSError as error:
            raise PqscopeError(f"cannot read the emulator's intervals {file}: {error}") from None
    return intervals
