"""What a measurement captures and how: a capture's hooks (its records, how they are written, kept
on resume and finished), the samples of key generation, signing and verification (`pqscope run`),
and the shards a capture's samples are dealt to, a board each."""

import contextlib
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ..link.device import DeviceSession
from ..link.messages import Info
from ..link.protocol import Op, Status
from ..project.boards import Board
from ..project.build import PLAIN, Variant
from ..project.catalogue import Implementation
from ..project.errors import PqscopeError
from ..results.documents.runs import ProbeSet
from ..results.probes import probe_inflation
from ..results.records import Row, sample_seed
from ..results.rundir import CSV_FIELDS, RunDirectory, keep_complete_samples, sort_by_sample
from ..results.runmeta import RunMeta
from ..targets.target import Profiling, Tainting, Target


@dataclass(frozen=True)
class Shard:
    """Part `index` of `count` of a capture's samples, measured by a board of its own: the samples
    are dealt in pairs (a constant-time test's pair holds one signature of each class), in turn.
    Which samples a shard measures is all that depends on the count: a sample's result is the
    same on any shard (the firmware times each operation alike whatever ran before it)."""

    index: int = 0
    count: int = 1

    def owns(self, sample: int) -> bool:
        return (sample // 2) % self.count == self.index

    def directory(self, run: Path) -> Path:
        """Where the shard's own files go: the board's bytes (raw.bin) and the target's files."""
        return run if self.count == 1 else run / SHARDS_DIRECTORY / str(self.index)


SHARDS_DIRECTORY = "shards"


def shard_directories(run: Path) -> list[Path]:
    """The directories of every shard that measured in `run`, with whatever shard count."""
    shards = run / SHARDS_DIRECTORY
    return [run, *(sorted(path for path in shards.iterdir() if path.is_dir()) if shards.is_dir() else [])]


@dataclass(frozen=True)
class Companion:
    """A capture measured before another's records, into `directory` (a subdirectory of the other's
    run directory), at the board's clock `clock` (None: the measurement's own): its image built for
    that clock."""

    capture: "Capture"
    directory: str
    clock: str | None = None


class Capture:
    """What a measurement captures, and how its records are written, kept on resume and finished."""

    kind: ClassVar[str]  # meta.json's "kind", and the command that resumes it
    view: ClassVar[str | None] = None  # the kind of result its document is (results.store.FILES), if it has one
    unit: ClassVar[str]  # what one record is called in messages
    samples_name: ClassVar[str]
    fields: ClassVar[tuple[str, ...]]  # the CSV's columns, before those of the image's probes
    progress: str = ""  # what the progress line shows besides the count (e.g. a sequential test's last look)
    reports: bool = True  # write report.md and report.html beside the document (`pqscope report` can later)
    keys_held: ClassVar[int] = 1  # the key pairs the device holds at once (an image may have room for one only)

    def __init__(self, samples: int, master_seed: bytes, msg_len: int, *, variant: Variant = PLAIN):
        self.samples, self.master_seed, self.msg_len = samples, master_seed, msg_len
        # The probed image's probes replace the virtual board's profiler: it measures as a board would.
        self.variant = variant

    @classmethod
    def from_meta(cls, meta: RunMeta) -> "Capture":
        """The capture an interrupted measurement began, from its meta.json."""
        raise NotImplementedError

    def parameters(self) -> dict:
        """Its own entries of meta.json, besides samples, msg_len and master_seed."""
        return {}

    def label(self, implementation: Implementation) -> str:
        return f"{implementation.scheme} {implementation.impl}"

    def count_text(self, records: int) -> str:
        """How far `records` records are: "5 of 12 samples"."""
        return f"{records} of {self.samples} {self.unit}"

    def most_shards(self) -> int:
        """The shards that can each have a sample: one per pair (a board without samples would only be started)."""
        return max(1, (self.samples + 1) // 2)

    def keep(self, path: Path, profiled: bool) -> list:
        """Resuming: the records of `path` to keep (files rewritten to hold just those)."""
        raise NotImplementedError

    def instrumented(self, target: Target) -> bool:
        """Whether `target` records what `profiling` asks for (raises if the capture needs it and
        the target cannot)."""
        return False

    def profiling(self, implementation: Implementation, directory: Path) -> Profiling | Tainting | None:
        """What an instrumented target records besides the UART, into a shard's `directory`."""
        return None

    def check_image(self, implementation: Implementation, elf: Path) -> None:
        """Raises, before anything runs, what makes the image unfit for this capture."""

    def companions(self, board: Board) -> Iterator["Companion"]:
        """Captures measured on `board` before this one's records, each into a subdirectory of its
        run directory, so that their results can decide when this one stops: each taken
        (`take_companion`) before the next is asked for, which its result may make unneeded."""
        return iter(())

    def take_companion(self, companion: "Companion", document: dict) -> None:
        """A companion's result document, before `finish`."""

    def alongside(self, runner, implementation: Implementation, elf: Path,
                  path: Path) -> contextlib.AbstractContextManager:
        """What runs beside the whole measurement of `elf` by `runner` (the Runner measuring it)
        into `path` (its companion, records and `finish`), ended when the measurement ends (e.g. a
        board's replay)."""
        return contextlib.nullcontext()

    def records(self, session: DeviceSession, info: Info, kept: list, shard: "Shard") -> Iterator:
        """Captures the records of `shard` not in `kept` from the board answering `session`
        (`info` is its INFO), yielding each once it is complete. Runs in the shard's own thread:
        what it learns for meta.json waits for `update`."""
        raise NotImplementedError

    def update(self, meta: RunMeta) -> None:
        """In the runner's thread, after each record: moves what the shards learnt into `meta`."""

    def write(self, run_dir: RunDirectory, record) -> None:
        raise NotImplementedError

    def stop_reason(self, implementation: Implementation, path: Path, records: list, meta: RunMeta,
                    profiled: bool) -> str | None:
        """After each record: why the capture can end before all its samples (None: go on)."""
        return None

    def finish(self, implementation: Implementation, path: Path, records: list, meta: RunMeta,
               profiled: bool) -> "Finished | None":
        """After a complete capture: its result, kept in meta.json as "result" and, for a capture
        with a `view`, written as that kind of result with its reports (None: no result)."""
        return None


class SampleCapture(Capture):
    """Samples of key generation, signing and verification (`pqscope run`): one record per sample,
    its rows in samples.csv."""

    kind, unit, samples_name, fields = "run", "samples", "samples.csv", CSV_FIELDS

    def __init__(self, ops: tuple[Op, ...], samples: int, master_seed: bytes, msg_len: int, *,
                 variant: Variant = PLAIN):
        super().__init__(samples, master_seed, msg_len, variant=variant)
        self.ops = ops

    @classmethod
    def from_meta(cls, meta: RunMeta) -> "SampleCapture":
        return cls(tuple(op for op in Op if op.label in meta.ops), meta.samples, meta.seed, meta.msg_len,
                   variant=variant_from_json(meta.variant))

    def parameters(self) -> dict:
        return {"ops": [op.label for op in self.ops], "seed_derivation": "sha256(master_seed || u32le(sample_id))"}

    def keep(self, path: Path, profiled: bool) -> list[list[Row]]:
        samples: dict[int, list[Row]] = {}
        for row in keep_complete_samples(path / self.samples_name, self.master_seed):
            samples.setdefault(row.sample_id, []).append(row)
        return list(samples.values())

    def records(self, session, info, kept, shard) -> Iterator[list[Row]]:
        return capture(session, ops=self.ops, samples=self.samples, msg_len=self.msg_len, master_seed=self.master_seed,
                       skip={rows[0].sample_id for rows in kept}, owns=shard.owns, board=info.board_serial)

    def write(self, run_dir: RunDirectory, record: list[Row]) -> None:
        run_dir.write_rows(record)

    def finish(self, implementation, path, records, meta, profiled) -> "Finished | None":
        """samples.csv in sample order; with probes, what they added to each operation's total
        (meta.json's "result")."""
        sort_by_sample(path / self.samples_name)
        if not meta.probes:
            return None
        probes = ProbeSet.from_json(meta.probes)
        timed = [row for rows in records for row in rows if row.status.timed]
        return Finished({"probe_inflation": {op.label: probe_inflation(probes, [r.probes for r in timed if r.op == op],
                                                                       [r.cycles for r in timed if r.op == op])
                                             for op in self.ops}})


@dataclass(frozen=True)
class Finished:
    """A complete capture's result: its document and, for a constant-time test, the values that
    decided its verdict per signature (classes, values, and a replayed board's raw cycles), which
    the report plots."""

    document: dict
    evidence: tuple[list, ...] | None = None


def variant_json(variant: Variant) -> dict | None:
    """meta.json's "variant": absent for the plain image."""
    return {"probed": True, "extra_probes": list(variant.extra_probes)} if variant.probed else None


def variant_from_json(data) -> Variant:
    if data is None:
        return PLAIN
    if not (isinstance(data, dict) and data.get("probed") is True and isinstance(data.get("extra_probes"), list)
            and all(isinstance(name, str) for name in data["extra_probes"])):
        raise PqscopeError(f"cannot resume: meta.json's 'variant' is damaged ({data!r})")
    return Variant(True, tuple(data["extra_probes"]))


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
