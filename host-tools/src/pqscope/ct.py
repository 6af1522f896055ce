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

import csv
import hashlib
import json
import math
import random
from collections import deque
from collections.abc import Callable, Collection, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from . import leakstats
from .device import DeviceSession
from .errors import PqscopeError
from .protocol import Info, ProbeReading, Sample, Status
from .build import PLAIN, Variant
from .catalogue import Implementation
from .probes import (ProbeSet, check_probes, confirmation, probe_columns, probe_inflation, probe_profile,
                     probe_values, readings_from_values)
from .report import ct_page
from .rundir import RunDirectory, csv_lines, read_header, sort_by_sample, write_atomically
from .runner import Capture, shard_directories
from .targets import Profiling

FIXED, RANDOM = 0, 1
FIXED_SLOT = 0
# Keygen samples get ids of their own so that they never collide with signature ids.
KEYGEN_ID_BASE = 0x8000_0000
TOP_FUNCTIONS = 10
INTERVAL_FUNCTION = "run_sign"  # the harness function around each timed signature
# The emulator's name for the time spent in public-input functions (--public-function).
PUBLIC_TIME = "(public-input functions)"


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
    done: Collection[int] = (),
    owns: Callable[[int], bool] = lambda index: True,
    on_key: Callable[[KeyMade], object] = lambda key: None,
) -> Iterator[CtSample]:
    """Runs the schedule's signatures that `owns` selects (a shard's) but those in `done` (a
    resumed test's); `key_refresh` > 0 regenerates a random slot after that many uses. Keys are
    made before the signatures that use them, from their own seeds: the pool a resumed test or
    another shard builds holds the same keys."""
    if info.key_slots < 2:
        raise PqscopeError("this image has no key pool (INFO.key_slots < 2): rebuild it with this pqscope")
    on_device: dict[int, int] = {}  # slot -> key id the device holds

    def make_key(slot: int, key_id: int) -> None:
        sample = session.keygen_slot(slot, derive_seed(master_seed, "key", key_id), KEYGEN_ID_BASE + key_id)
        if sample.status != Status.OK:
            raise PqscopeError(f"key generation failed on the device (key {key_id}, slot {slot})")
        on_device[slot] = key_id
        on_key(KeyMade(key_id, slot, sample.cycles))

    for signing in schedule(master_seed, samples, info.key_slots, key_refresh):
        if signing.index in done or not owns(signing.index):
            continue
        for slot, key_id in signing.slot_keys.items():
            if on_device.get(slot) != key_id:
                make_key(slot, key_id)
        seed = derive_seed(master_seed, "sign", signing.index)
        sample: Sample = session.sign_slot(signing.slot, seed, msg_len, signing.index)
        yield CtSample(signing.index, signing.key_class, signing.slot_keys[signing.slot], seed, sample.cycles,
                       sample.stack_bytes, sample.status, sample.probes, info.board_serial)


INTERVALS_FILE = "intervals.jsonl"
CT_FIELDS = ("index", "key_class", "key_id", "seed", "cycles", "stack_bytes", "status", "board")
STATUS_BY_LABEL = {status.label: status for status in Status}


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
    records = list(csv.reader(lines))
    probe_names = read_header(samples_path, records[0], CT_FIELDS) if records else ()
    kept: dict[int, CtSample] = {}
    for number, record in enumerate(records[1:], start=2):
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
            lines = [line for line in intervals_path.read_text().splitlines(keepends=True) if line.endswith("\n")]
            lines = [line for line in lines if _interval_id(intervals_path, line) in kept]
            timed |= {_interval_id(intervals_path, line) for line in lines}
            write_atomically(intervals_path, "".join(lines))
        kept = {index: sample for index, sample in kept.items() if index in timed}
    ordered = [kept[index] for index in sorted(kept)]
    write_atomically(samples_path, csv_lines([CT_FIELDS + probe_columns(probe_names), *map(ct_record, ordered)])
                     if ordered else "")
    return ordered


def _interval_id(path: Path, line: str) -> int:
    try:
        return json.loads(line)["sample_id"]
    except (ValueError, KeyError, TypeError):
        raise PqscopeError(f"{path} is damaged: a line without its sample id ({line.strip()[:60]})") from None


class CtCapture(Capture):
    """The constant-time test's signatures (`pqscope ct`): ct.csv, one row per signature, the keys
    the device made in meta.json; finished by the verdict (ct.json, report.html)."""

    kind, unit, samples_name, fields = "ct", "signatures", "ct.csv", CT_FIELDS

    def __init__(self, samples: int, master_seed: bytes, msg_len: int, key_refresh: int = 0, *,
                 variant: Variant = PLAIN, fixed_n: bool = False, bound: float | None = None):
        super().__init__(samples, master_seed, msg_len, variant=variant)
        self.key_refresh = key_refresh
        # The exact check's result (pqscope taint's document) when it ran beside the test: shown
        # next to the statistical localisation.
        self.taint: dict | None = None
        # A no-leak must also show that no leak is larger than this share of the mean time.
        self.bound = bound
        self._live: leakstats.OnlineT | None = None  # the raw total's running t
        self._last_look = ""
        self._arrived: set[int] = set()  # signatures captured, kept or new, by index
        self._prefix = 0  # signatures 0 .. _prefix-1 are all captured: shards deliver out of order
        self._looked = 0  # looks taken so far
        self.decided_at: int | None = None  # the look whose verdict stopped the test
        self._keys_made: deque[KeyMade] = deque()  # by the shards' threads, for `update`
        # Sequential: `samples` is the most it takes; it stops at the first look with a definite verdict.
        self.fixed_n = fixed_n
        self.looks = [samples] if fixed_n else leakstats.sequential_looks(samples)

    def parameters(self) -> dict:
        return {"key_refresh": self.key_refresh, "keys": [], "fixed_n": self.fixed_n, "bound": self.bound}

    def stop_reason(self, implementation, path, records, meta, profiled) -> str | None:
        """At a look before the last, why the test can stop: its verdict is leak or no-leak. A
        look is taken on the schedule's first signatures, once every one of them is captured
        (shards deliver them out of order), so that its verdict does not depend on the shards.
        Between looks, the progress line shows the raw total's live |t|."""
        if self._live is None:
            self._live = leakstats.OnlineT()
            for record in records[:-1]:  # a resumed test's kept signatures
                self._arrive(record)
        self._arrive(records[-1])
        while self._looked < len(self.looks) - 1 and self._prefix >= self.looks[self._looked]:
            look = self.looks[self._looked]
            self._looked += 1
            # The verdict needs no bootstrap intervals: a few resamples keep each look quick.
            result = self._analyse(implementation, path, _first(records, look), meta, profiled,
                                   bootstrap_resamples=10)
            self.progress = self._last_look = _look_summary(result, look)
            if result.verdict != leakstats.Verdict.INCONCLUSIVE and self._bound_shown(result):
                self.decided_at = look
                return f"{result.verdict} at {look} signatures (looks at {', '.join(map(str, self.looks))})"
        live = self._live.t
        self.progress = (self._last_look + "; " if self._last_look else "") + (
            "" if live is None else f"live raw |t| {abs(live):.1f}")
        return None

    def _arrive(self, record: CtSample) -> None:
        self._arrived.add(record.index)
        while self._prefix in self._arrived:
            self._prefix += 1
        if record.status.timed:
            self._live.add(record.key_class, record.cycles)

    def _bound_shown(self, result: "CtResult") -> bool:
        """Whether a requested bound holds (no bound requested, or a leak: nothing to show)."""
        if self.bound is None or result.verdict != leakstats.Verdict.NO_LEAK:
            return True
        shown = result.total.bound
        return shown is not None and shown.share is not None and shown.share <= self.bound

    def _analyse(self, implementation, path, records, meta, profiled, **options) -> "CtResult":
        """The analysis of `records` as the test's verdict is decided (at a look, or at the end)."""
        intervals = load_intervals(path) if profiled else None
        probes = ProbeSet.from_json(meta.probes) if meta.probes else None
        if probes is not None:
            # The corrections need their functions' time: without it the verdict would be the uncorrected one.
            check_probes(probes.names, [*filter(None, [implementation.retry_function]), *implementation.public_functions],
                         Path(meta.elf or "the image").name)
        return analyse(records, intervals, implementation.retry_function or None, implementation.public_functions,
                       probes=probes, looks=len(self.looks), **options)

    def label(self, implementation: Implementation) -> str:
        return f"ct {super().label(implementation)}"

    def profiling(self, implementation: Implementation, directory: Path) -> Profiling:
        # Every signature profiled: the localisation and the attempt counts.
        return Profiling(directory / INTERVALS_FILE, INTERVAL_FUNCTION, implementation.public_functions)

    def keep(self, path: Path, profiled: bool) -> list[CtSample]:
        return keep_captured(path, self.master_seed, self.samples, with_intervals=profiled)

    def records(self, session, info, kept, shard) -> Iterator[CtSample]:
        return capture_ct(session, info, samples=self.samples, master_seed=self.master_seed, msg_len=self.msg_len,
                          key_refresh=self.key_refresh, done={record.index for record in kept}, owns=shard.owns,
                          on_key=self._keys_made.append)

    def update(self, meta) -> None:
        """The keys the shards made, each once (a resumed test and every shard make their pool again)."""
        if not self._keys_made:
            return
        known = {key["key_id"] for key in meta.keys}
        while self._keys_made:
            key = self._keys_made.popleft()
            if key.key_id not in known:
                known.add(key.key_id)
                meta.keys.append(asdict(key))

    def write(self, run_dir: RunDirectory, record: CtSample) -> None:
        run_dir.write_record(ct_record(record))

    def finish(self, implementation, path, records, meta, profiled) -> dict:
        from .plots import class_ecdfs_png, plot_t_vs_n  # matplotlib: loaded only for the report

        # A test stopped at a look has that look's verdict; signatures other shards took meanwhile
        # stay in ct.csv, outside the verdict.
        records = _first(records, self.decided_at or self.samples)
        result = self._analyse(implementation, path, records, meta, profiled)
        probes = ProbeSet.from_json(meta.probes) if meta.probes else None
        document = {"board": meta.board, "scheme": implementation.scheme, "impl": implementation.impl,
                    "clock": {"name": meta.clock, "hz": meta.clock_hz, "flash_wait_states": meta.flash_wait_states},
                    "run_dir": str(path), **result.to_json(),
                    "sequential": {"looks": self.looks, "stopped": meta.stopped_early}}
        if self.bound is not None:
            document["bound_requested"] = {"share_of_mean": self.bound, "shown": self._bound_shown(result)}
        boards = board_summaries(records, meta.boards or {})
        if len(boards) > 1:
            document["boards"] = boards
        if probes is not None:
            timed = [s for s in records if s.status.timed]
            document["probe_inflation"] = probe_inflation(probes, [s.probes for s in timed], [s.cycles for s in timed])
        leaking = [f["function"] for f in document.get("top_functions", []) if f["depends_on_class"]
                   and f["function"] != PUBLIC_TIME]
        if profiled and leaking:
            selection = (["--scheme", implementation.scheme, "--impl", implementation.impl]
                         if implementation.directory is None else ["--impl-dir", str(implementation.directory)])
            document["confirm_on_board"] = confirmation(leaking, implementation.probed_functions, Path(meta.elf),
                                                        meta.info["board"], selection)
        if self.taint is not None:
            document["taint"] = taint_beside(self.taint, document.get("top_functions", []))
        evidence = result.evidence
        sort_by_sample(path / self.samples_name)
        write_atomically(path / "ct.json", json.dumps(document, indent=2) + "\n")
        write_atomically(path / "report.html", ct_page(
            document, plot_t_vs_n(leakstats.t_against_n(evidence.classes, evidence.values)),
            class_ecdfs_png(evidence.classes, evidence.values, evidence.label)))
        return document


def taint_beside(taint: dict, top_functions: list[dict]) -> dict:
    """The exact check's findings for the constant-time test's page: its verdict and findings,
    and, per function the statistics localised, the findings inside it. The two answer different
    questions: the statistics point at the function where the time goes (a callee doing extra
    work), the exact check at the instruction that decides on the secret (often in its caller)."""
    def counts(function: str) -> dict:
        inside = [f for f in taint["findings"] if f["function"] == function]
        return {"leaks": sum(f["leak"] for f in inside), "declassified": sum(f["declassified"] for f in inside)}

    return {"verdict": taint["verdict"], "signatures": taint["signatures"], "findings": taint["findings"],
            "in_top_functions": {f["function"]: counts(f["function"]) for f in top_functions}}


def board_summaries(records: list[CtSample], boards: dict[str, dict]) -> list[dict]:
    """Per board that measured some of `records`: its signatures, median cycles per class, and
    whether its cycles differ from the boards' consensus: per class, t = (the board's mean - the
    median of the boards' means) / the standard error of its mean; the larger |t| of the two
    classes is reported, and `stands_out` past the evidence threshold. Every board signs the same
    keys and messages in the same proportions, so sound boards agree; the median keeps one
    misbehaving board from moving the consensus (with two boards, both differ alike). `boards`:
    meta.json's description of each board by its serial number."""
    timed = [record for record in records if record.status.timed]
    serials = sorted({record.board for record in timed})
    cycles = {(serial, key_class): np.array([r.cycles for r in timed if r.board == serial and r.key_class == key_class],
                                            dtype=np.float64)
              for serial in serials for key_class in (FIXED, RANDOM)}
    consensus = {key_class: np.median([values.mean() for (_, each), values in cycles.items()
                                       if each == key_class and values.size])
                 for key_class in (FIXED, RANDOM)}
    summaries = []
    for serial in serials:
        largest = None
        for key_class in (FIXED, RANDOM):
            values = cycles[serial, key_class]
            if len(serials) < 2 or values.size < leakstats.MIN_SAMPLES_PER_TEST:
                continue
            error = values.std(ddof=1) / np.sqrt(values.size)
            difference = values.mean() - consensus[key_class]
            t = difference / error if error > 0 else (0.0 if difference == 0 else math.copysign(math.inf, difference))
            if largest is None or abs(t) > abs(largest):
                largest = float(t)
        summaries.append({"board": serial, **boards.get(serial, {}),
                          "signatures": sum(1 for r in records if r.board == serial),
                          "median_cycles": {name: float(np.median(cycles[serial, key_class]))
                                            if cycles[serial, key_class].size else None
                                            for key_class, name in ((FIXED, "fixed"), (RANDOM, "random"))},
                          "t_against_the_boards": leakstats.json_number(largest),
                          "stands_out": largest is not None and abs(largest) > leakstats.LEAK_EVIDENCE_T})
    return summaries


def _look_summary(result: "CtResult", count: int) -> str:
    """What the progress line says after a look: max |t|, the leading function, the samples needed."""
    max_abs_t = leakstats.json_number(result.total.max_abs_t)
    text = f"at {count}: max |t| {max_abs_t:.1f}" if isinstance(max_abs_t, float) else f"at {count}: max |t| {max_abs_t}"
    worst = _strongest_function(result.functions or ())
    if worst is not None:
        text += f", {worst.name} |t| {abs(worst.t):.1f}"
    if result.total.samples_needed:
        text += f", a leak this size needs {2 * result.total.samples_needed:,}"
    return text


def _first(records: list[CtSample], count: int) -> list[CtSample]:
    """The schedule's first `count` signatures, in its order."""
    return sorted((record for record in records if record.index < count), key=lambda record: record.index)


def load_intervals(path: Path) -> list[dict]:
    """The emulator's signing intervals (one JSON line per signature) of every shard of the test at `path`."""
    files = [directory / INTERVALS_FILE for directory in shard_directories(path)
             if (directory / INTERVALS_FILE).exists()]
    if not files:
        raise PqscopeError(f"cannot read the emulator's intervals: {path} has no {INTERVALS_FILE}")
    intervals = []
    for file in files:
        try:
            intervals += [json.loads(line) for line in file.read_text().splitlines()]
        except (OSError, ValueError) as error:
            raise PqscopeError(f"cannot read the emulator's intervals {file}: {error}") from None
    return intervals


@dataclass(frozen=True)
class PublicTime:
    """The time of the public-input functions, subtracted from each signature's total."""

    functions: tuple[str, ...]
    mean_fixed: float
    mean_random: float

    def to_json(self) -> dict:
        return {"functions": list(self.functions), "mean_cycles": {"fixed": self.mean_fixed, "random": self.mean_random}}


@dataclass(frozen=True)
class AttemptCorrection:
    """The cost of each signing attempt, removed from the totals and from every function."""

    retry_function: str
    cycles_per_attempt: float
    mean_attempts_fixed: float
    mean_attempts_random: float

    def to_json(self) -> dict:
        return {"retry_function": self.retry_function, "cycles_per_attempt": self.cycles_per_attempt,
                "mean_attempts": {"fixed": self.mean_attempts_fixed, "random": self.mean_attempts_random}}


@dataclass(frozen=True)
class Evidence:
    """The values that decided the verdict, per usable signature in test order: the (corrected)
    total, or the function whose time decided it. The report plots them."""

    classes: np.ndarray
    values: np.ndarray
    label: str


@dataclass(frozen=True)
class CtResult:
    """A constant-time test's outcome: the statistics of the (corrected) total, the corrections,
    the functions ranked by how their time depends on the key class (virtual board), and the
    verdict that weighs both (`decide`)."""

    total: leakstats.LeakResult
    verdict: leakstats.Verdict
    reason: str
    failed_samples: int
    corrupt_accepted: int
    public_time: PublicTime | None = None
    attempts: AttemptCorrection | None = None
    uncorrected: leakstats.LeakResult | None = None  # the total before the corrections
    functions: tuple[leakstats.FunctionLeak, ...] | None = None  # None: no profile
    # Where the functions' cycles come from: the emulator's profiler (exclusive cycles of every
    # function) or the device's probes (inclusive cycles of the probed ones).
    localised_by: str | None = None
    evidence: Evidence | None = None  # not in ct.json: the report's plots

    def to_json(self) -> dict:
        document = self.total.to_json() | {"verdict": str(self.verdict), "reason": self.reason}
        if self.public_time:
            document["public_time"] = self.public_time.to_json()
        if self.attempts:
            document["correction"] = self.attempts.to_json()
        if self.uncorrected:
            document["uncorrected"] = self.uncorrected.to_json()
        document |= {"failed_samples": self.failed_samples, "corrupt_accepted": self.corrupt_accepted}
        if self.evidence is not None:
            document["plotted"] = self.evidence.label
        if self.functions is not None:
            document["localised_by"] = self.localised_by
            document["top_functions"] = [leak.to_json() for leak in self.functions[:TOP_FUNCTIONS]]
            worst = _strongest_function(self.functions)
            if worst:
                document["max_abs_t_function"] = {"function": worst.name, "t": leakstats.json_number(worst.t)}
        return document


def join_intervals(samples: list[CtSample], intervals: list[dict]) -> list[dict]:
    """Each signature's emulator interval, joined by sample id (intervals of emulators that wrote
    no ids: by position, if their numbers agree). A signature without its interval is an error
    naming it: a localisation must never vanish or shift silently. A signature the device ran
    twice (its answer was lost) has two intervals of the same code: the last one counts."""
    if all("sample_id" in line for line in intervals):
        by_id = {line["sample_id"]: line for line in intervals}
    elif len(intervals) == len(samples):
        by_id = {sample.index: line for sample, line in zip(samples, intervals)}
    else:
        raise PqscopeError(f"the emulator wrote {len(intervals)} intervals for {len(samples)} signatures, "
                           "without sample ids to join them by")
    missing = [sample.index for sample in samples if sample.index not in by_id]
    if missing:
        raise PqscopeError(f"the emulator's intervals lack signature {missing[0]}"
                           + (f" and {len(missing) - 1} more" if len(missing) > 1 else "")
                           + ": its localisation would be lost")
    return [by_id[sample.index] for sample in samples]


def analyse_ct(samples: list[CtSample], intervals: list[dict] | None, retry_function: str | None,
               public_functions: tuple[str, ...] = (), *, probes: ProbeSet | None = None, seed: int = 0) -> dict:
    """The verdict document of `analyse` (ct.json)."""
    return analyse(samples, intervals, retry_function, public_functions, probes=probes, seed=seed).to_json()


PROFILER, PROBES = "virtual board profiler (exclusive cycles)", "on-device probes (inclusive cycles)"


def analyse(samples: list[CtSample], intervals: list[dict] | None, retry_function: str | None,
            public_functions: tuple[str, ...] = (), *, probes: ProbeSet | None = None, seed: int = 0, looks: int = 1,
            bootstrap_resamples: int = leakstats.BOOTSTRAP_RESAMPLES) -> CtResult:
    """Leak statistics of the verified signatures' time and, with the emulator's intervals or the
    device's `probes`, of each function's time (the localisation).

    With a `retry_function` (called once per signing attempt, e.g. ML-DSA's challenge sampling),
    times are corrected for the number of attempts first: how often a rejection loop repeats is
    public randomness (its rate may differ slightly between keys, which says nothing about how
    the key is used), so each attempt's cost, fitted over all samples, is removed from the total
    and from every function. The analysis of the uncorrected total stays under "uncorrected".

    Likewise, the time of `public_functions` (booked apart by the emulator) depends only on public
    data — the public key changes with the key class too — so it is subtracted from the total and
    left out of the ranking.

    `looks`: the number of looks of a sequential test (leakstats.sequential_looks), which raises
    the leak thresholds so that looking often does not make leaks of chance.
    """
    usable = [i for i, s in enumerate(samples) if s.status.timed]
    classes = np.array([samples[i].key_class for i in usable])
    raw_cycles = np.array([samples[i].cycles for i in usable], dtype=np.float64)
    cycles = raw_cycles
    if probes is not None:
        profile = [probe_profile(probes.names, sample.probes, public_functions, PUBLIC_TIME) for sample in samples]
    else:
        profile = join_intervals(samples, intervals) if intervals is not None else None
    public_time = attempt_correction = attempts = None
    if public_functions and profile is not None:
        public = np.array([profile[i]["functions"].get(PUBLIC_TIME, (0, 0))[0] for i in usable], dtype=float)
        public_time = PublicTime(tuple(public_functions), float(public[classes == FIXED].mean()),
                                 float(public[classes == RANDOM].mean()))
        cycles = cycles - public
    if retry_function and profile is not None:
        attempts = np.array([profile[i]["functions"].get(retry_function, (0, 0))[1] for i in usable], dtype=float)
        attempt_correction = AttemptCorrection(retry_function, _attempt_slope(attempts, cycles),
                                               float(attempts[classes == FIXED].mean()),
                                               float(attempts[classes == RANDOM].mean()))
        cycles = _without_attempts(attempts, cycles)
    corrected = public_time is not None or attempt_correction is not None
    total = leakstats.analyse(classes, cycles, seed=seed, looks=looks, bootstrap_resamples=bootstrap_resamples)
    series = _function_series(profile, usable, attempts) if profile is not None else None
    functions = None if series is None else tuple(leakstats.rank_functions(
        {name: values[classes == FIXED] for name, values in series.items()},
        {name: values[classes == RANDOM] for name, values in series.items()}, looks))
    verdict, reason, deciding = decide(total, functions)
    evidence = Evidence(classes, series[deciding], f"{deciding} cycles") if deciding else Evidence(
        classes, cycles, "signing cycles" + (" (corrected)" if public_time or attempt_correction else ""))
    return CtResult(total, verdict, reason, failed_samples=len(samples) - len(usable),
                    corrupt_accepted=sum(s.status == Status.CORRUPT_ACCEPTED for s in samples),
                    public_time=public_time, attempts=attempt_correction,
                    uncorrected=leakstats.analyse(classes, raw_cycles, seed=seed, looks=looks,
                                                  bootstrap_resamples=bootstrap_resamples) if corrected else None,
                    functions=functions,
                    localised_by=None if profile is None else PROBES if probes is not None else PROFILER,
                    evidence=evidence)


def _function_series(profile: list[dict], usable: list[int], attempts: np.ndarray | None) -> dict[str, np.ndarray]:
    """Every function's cycles per usable signature, in test order (less each attempt's cost)."""
    rows = [profile[i]["functions"] for i in usable]
    series = {}
    for name in sorted(set().union(*rows) - {PUBLIC_TIME}):
        values = np.array([functions.get(name, (0, 0))[0] for functions in rows], dtype=float)
        series[name] = _without_attempts(attempts, values) if attempts is not None else values
    return series


def decide(total: leakstats.LeakResult, functions: tuple[leakstats.FunctionLeak, ...] | None
           ) -> tuple[leakstats.Verdict, str, str | None]:
    """The verdict, why, and the function that decided it (None: the total did): the total's
    verdict, unless a function's time depends on the key class past the same thresholds: public
    randomness elsewhere (e.g. Falcon's sampler) can hide a small leak in the total, so such a
    function makes the verdict a leak, or keeps it from no-leak."""
    worst = _strongest_function(functions or ())
    if worst is None or total.verdict == leakstats.Verdict.LEAK:
        return total.verdict, total.reason, None
    max_abs_t = leakstats.json_number(total.max_abs_t)
    max_abs_t = f"{max_abs_t:.1f}" if isinstance(max_abs_t, float) else max_abs_t
    if abs(worst.t) > worst.definite_t:
        return leakstats.Verdict.LEAK, (f"{worst.name}'s time depends on the key: |t| = {abs(worst.t):.1f} (test "
                                        f"{worst.test}) > {worst.definite_t:.1f} for {len(functions)} functions "
                                        f"(the total's max |t| is {max_abs_t})"), worst.name
    if total.verdict == leakstats.Verdict.NO_LEAK and abs(worst.t) >= worst.evidence_t:
        return leakstats.Verdict.INCONCLUSIVE, (f"the total shows no leak, but {worst.name}'s time depends on the "
                                                f"key with |t| = {abs(worst.t):.1f} (test {worst.test}) >= "
                                                f"{worst.evidence_t:.1f} for {len(functions)} functions"), worst.name
    return total.verdict, total.reason, None


def _strongest_function(functions) -> leakstats.FunctionLeak | None:
    with_t = [leak for leak in functions if leak.t is not None]
    return max(with_t, key=lambda leak: abs(leak.t)) if with_t else None


def _attempt_slope(attempts: np.ndarray, values: np.ndarray) -> float:
    """Cycles per attempt, by least squares; 0 when it moves the values by less than half a
    cycle over the attempts seen (cycle counts are integers: anything smaller is rounding)."""
    if np.ptp(attempts) == 0:
        return 0.0
    slope = float(np.polyfit(attempts, values, 1)[0])
    return slope if abs(slope) * np.ptp(attempts) >= 0.5 else 0.0


def _without_attempts(attempts: np.ndarray, values: np.ndarray, slope: float | None = None) -> np.ndarray:
    """The values less their attempts' cost, rounded to 1e-6 cycles: an exactly linear function
    must come out exactly constant, not with floating-point residue a t-test would read."""
    slope = _attempt_slope(attempts, values) if slope is None else slope
    return np.round(values - slope * attempts, 6)
