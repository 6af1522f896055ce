"""One measurement's lifecycle, the same for `run`, `ct`, suites and `compare-falcon`: build the
image, record what runs where (meta.json), connect to the target, check the image it runs, capture
samples to disk as they arrive, and record how it ended (complete, interrupted, failed) so that
`--resume` can go on. What is captured is a `Capture`: rows of keygen/sign/verify samples
(`SampleCapture`), or the constant-time test's signatures (`ct.CtCapture`)."""

import contextlib
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from importlib.metadata import version
from pathlib import Path
from typing import ClassVar

from rich.console import Console

from ..link.device import Cancelled, DeviceSession
from ..link.protocol import Info, Op
from ..project.boards import Board, get_board
from ..project.build import PLAIN, Variant, build_info, code_digest
from ..project.catalogue import Implementation, find_implementation, implementation_from_dir, load_catalogue
from ..project.console import progress
from ..project.errors import PqscopeError
from ..project.toolchain import DEFAULT_TOOLCHAIN, Toolchain
from ..results.probes import ProbeSet, probe_columns, probe_inflation
from ..results.records import Row
from ..results.rundir import (CSV_FIELDS, RunDirectory, is_suite, keep_complete_samples, member_state,
                              resume_parameters, sort_by_sample, start_suite, suite_parameters, write_meta)
from ..results.runmeta import RunMeta
from ..results.store import save
from ..targets.target import Connection, Profiling, Tainting, Target
from .capture import capture, check_info


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


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


class Capture:
    """What a measurement captures, and how its records are written, kept on resume and finished."""

    kind: ClassVar[str]  # meta.json's "kind", and the command that resumes it
    view: ClassVar[str | None] = None  # the kind of result its document is (results.store.FILES), if it has one
    unit: ClassVar[str]  # what one record is called in messages
    samples_name: ClassVar[str]
    fields: ClassVar[tuple[str, ...]]  # the CSV's columns, before those of the image's probes
    progress: str = ""  # what the progress line shows besides the count (e.g. a sequential test's last look)
    reports: bool = True  # write report.md and report.html beside the document (`pqscope report` can later)

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

    def companion(self) -> "tuple[Capture, str] | None":
        """A capture measured before this one's records, into that subdirectory of its run
        directory, so that its result can decide when this one stops (None: none)."""
        return None

    def take_companion(self, document: dict) -> None:
        """The companion's result document, before `finish`."""

    def alongside(self, runner: "Runner", implementation: Implementation, elf: Path,
                  path: Path) -> contextlib.AbstractContextManager:
        """What runs beside the whole measurement of `elf` by `runner` into `path` (its companion,
        records and `finish`), ended when the measurement ends (e.g. a board's replay)."""
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


@dataclass
class Outcome:
    """How a measurement ended: its meta.json, every record (kept and new) and its result."""

    meta: RunMeta
    records: list
    result: dict | None = None

    @property
    def interrupted(self) -> bool:
        return self.meta.interrupted


class Runner:
    """Measures implementations on `targets`, one shard of each measurement per target (the same
    target may be given several times: the virtual board starts an emulator per connection),
    reporting progress on `console`."""

    def __init__(self, targets: Target | list[Target], console: Console, capture: "Capture | None" = None, *,
                 report: Callable[[Path], object] | None = None):
        """`capture`: what the runner will measure, if known now: a target that cannot take it is
        refused before any other check. `report`: writes the reports of a finished result kept in
        a directory (the command that asks for reports gives it; measuring writes none itself)."""
        self.report = report
        self.targets = targets if isinstance(targets, list) else [targets]
        if capture is not None:
            capture.instrumented(self.targets[0])
        for target in self.targets:
            target.check()
        self.target, self.console = self.targets[0], console

    def beside(self, targets: list[Target], console: Console) -> "Runner":
        """A runner on other targets that reports as this one does (a board's replay on virtual boards)."""
        return Runner(targets, console, report=self.report)

    def measure(self, implementation: Implementation, path: Path, what: Capture,
                resumed: RunMeta | None = None) -> Outcome:
        """Captures `what` of `implementation` into the run directory `path`; or, given the
        meta.json of an interrupted measurement there, its missing records. Ctrl-C ends it as
        "interrupted", keeping everything captured."""
        target, console = self.target, self.console
        profiled = what.instrumented(target)  # before the build: a capture the target cannot take fails at once
        if implementation.status != "ok":
            console.print(f"warning: the catalogue marks {implementation.scheme}/{implementation.impl} as "
                          f"'{implementation.status}'")
        image = target.image(implementation, console, what.variant)
        code = code_digest(image.elf)
        if resumed and resumed.code_sha256 not in (None, code):
            # Runs from before the digest was recorded take it from here on.
            raise PqscopeError(f"cannot resume {path}: the code of {image.elf.name} changed since the run started, "
                               f"and its samples would mix two builds; start a new run (or rebuild the code it "
                               f"began with)")
        # A shard per pair of samples at most: a board without samples would only be started.
        targets = self.targets[:max(1, (what.samples + 1) // 2)]
        for each in targets:
            each.prepare(console)
        model = target.timing_model()
        if resumed and resumed.timing_model not in (None, model):
            raise PqscopeError(f"cannot resume {path}: the virtual board's emulator changed since the run started, "
                               f"and its samples would mix two timing models; start a new run (or rebuild the "
                               f"emulator it began with)")
        what.check_image(implementation, image.elf)
        kept = what.keep(path, profiled) if resumed else []
        records = list(kept)
        shards = [Shard(index, len(targets)) for index in range(len(targets))]
        with RunDirectory(path, what.samples_name, resuming=bool(resumed)) as run_dir, \
                what.alongside(self, implementation, image.elf, path):
            meta = resumed or self._new_meta(implementation, image, what)
            meta.code_sha256, meta.timing_model = code, model
            if resumed:
                meta.resumed_at = [*(meta.resumed_at or []), _now()]
            meta.status, meta.samples_completed = "running", len(records)
            write_meta(path, meta)
            connections: list[Connection] = []
            try:
                # First, so that what it finds can decide when the capture stops.
                self._measure_companion(implementation, path, what)
                with contextlib.ExitStack() as stack:
                    for shard, shard_target in zip(shards, targets):
                        directory = shard.directory(path)
                        directory.mkdir(parents=True, exist_ok=True)
                        connections.append(stack.enter_context(shard_target.connect(
                            image.elf, console, stats_dir=directory, on_receive=run_dir.raw_writer(directory),
                            profiling=what.profiling(implementation, directory) if profiled else None)))
                    infos = self._start(connections, implementation, what)
                    info, probe_names = infos[0], connections[0].session.probe_names
                    meta.clock_hz, meta.info = info.clock_hz, asdict(info)
                    # Each board's own probe costs, as it measured them at this boot (the confirmation
                    # on probes takes each board's cost per call apart).
                    meta.boards = {**(meta.boards or {}), **{
                        shard_info.board_serial: {**shard_target.describe(), "port": connection.port,
                                                  **({"probe_self_cycles": shard_info.probe_self_cycles,
                                                      "probe_call_cycles": shard_info.probe_call_cycles}
                                                     if probe_names else {})}
                        for shard_info, shard_target, connection in zip(infos, targets, connections)}}
                    if len(shards) == 1:
                        meta.port = connections[0].port
                    else:  # each board's target and port, in the order of the shards
                        meta.port, meta.place = None, None
                        meta.shards = [{**shard_target.describe(), "port": connection.port,
                                        "board_serial": shard_info.board_serial}
                                       for shard_target, connection, shard_info in zip(targets, connections, infos)]
                    meta.probes = ProbeSet.of(info, probe_names).to_json() if probe_names else None
                    run_dir.start_samples(what.fields + probe_columns(probe_names))
                    write_meta(path, meta)
                    with progress(console) as bar:
                        task = bar.add_task(what.label(implementation), total=what.samples, completed=len(records))
                        for record in _gathered(what, infos, kept, shards, connections,
                                                [shard_target.where() for shard_target in targets]):
                            what.write(run_dir, record)
                            records.append(record)
                            what.update(meta)
                            meta.samples_completed = len(records)
                            bar.advance(task)
                            meta.stopped_early = what.stop_reason(implementation, path, records, meta, profiled)
                            if what.progress:
                                bar.update(task, description=f"{what.label(implementation)} ({what.progress})")
                            if meta.stopped_early:
                                console.print(f"stopped early: {meta.stopped_early}")
                                break
                meta.status = "complete"
            except KeyboardInterrupt:
                meta.status = "interrupted"
            except PqscopeError as error:
                meta.status = f"failed: {error}"
                raise
            finally:
                meta.finished_at = _now()
                self._keep_stats(meta, connections)
                write_meta(path, meta)
            outcome = Outcome(meta, records)
            if outcome.interrupted:
                console.print(f"interrupted after {len(records)} of {what.samples} {what.unit}; data kept in {path}, "
                              f"resume with `pqscope {what.kind} --resume {path}`")
                return outcome
            finished = what.finish(implementation, path, records, meta, profiled)
            if finished is not None:
                outcome.result = meta.result = finished.document
                write_meta(path, meta)
                if what.view:
                    save(path, what.view, finished.document, finished.evidence)
                    if what.reports and self.report is not None:
                        self.report(path)
        return outcome

    def _measure_companion(self, implementation: Implementation, path: Path, what: Capture) -> None:
        """The capture's companion (resumed where an earlier attempt left it); its interruption
        interrupts the capture too."""
        companion = what.companion()
        if companion is None:
            return
        capture, directory = companion
        sub = path / directory
        resumed = resume_parameters(sub, kind=capture.kind) if (sub / "meta.json").is_file() else None
        if resumed is not None and resumed.status == "complete":
            what.take_companion(resumed.result)
            return
        outcome = self.measure(implementation, sub, capture, resumed)
        if outcome.interrupted:
            raise KeyboardInterrupt
        what.take_companion(outcome.result)

    def _start(self, connections: list[Connection], implementation: Implementation, what: Capture) -> list[Info]:
        """Each board's INFO, checked to be the image meant (the same on every shard but for the
        board's serial number and what it measures of itself)."""
        infos = []
        for connection in connections:
            info = connection.session.hello()
            if info.clock_fallback:
                board = f" (board {info.board_serial})" if len(connections) > 1 else ""
                self.console.print(f"{info.clock_fallback}{board}")
            check_info(info, self.target.board, implementation, what.msg_len)
            infos.append(info)
        # The probes' costs are measured at boot: a board with timing noise measures its own; a
        # clock's source changes no cycle count.
        images = [(replace(info, board_serial="", probe_self_cycles=0, probe_call_cycles=0, clock_source="",
                           clock_fallback_reason=""),
                   connection.session.probe_names) for info, connection in zip(infos, connections)]
        if any(other != images[0] for other in images[1:]):
            raise PqscopeError("the boards of the shards run different images (their INFO or probes differ): "
                               "flash the same image onto each")
        serials = [info.board_serial for info in infos]
        if len(set(serials)) < len(serials):
            raise PqscopeError(f"two shards reach the same board (serial number {max(serials, key=serials.count)}): "
                               "give each shard a board of its own")
        return infos

    @staticmethod
    def _keep_stats(meta: RunMeta, connections: list[Connection]) -> None:
        """What the targets measured of themselves (the emulator's statistics): a shard's each."""
        if len(connections) == 1 and connections[0].stats:
            meta.emulator_stats = connections[0].stats
        elif meta.shards and len(meta.shards) == len(connections):
            for entry, connection in zip(meta.shards, connections):
                if connection.stats:
                    entry["emulator_stats"] = connection.stats

    def measure_members(self, members: list["Member"], what: Capture,
                        announce: "Callable[[Member], object]" = lambda member: None) -> bool:
        """Measures the members of a run or suite in turn (complete ones stay as they are; each
        other one `announce`d first), stopping at an interruption, which it returns."""
        for member in members:
            if member.complete:
                continue
            announce(member)
            if self.measure(member.implementation, member.path, what, member.resume_from).interrupted:
                return True
        return False

    def _new_meta(self, implementation: Implementation, image, what: Capture) -> RunMeta:
        board = self.target.board
        return RunMeta(
            kind=what.kind, board=board.name, scheme=implementation.scheme, impl=implementation.impl,
            samples=what.samples, msg_len=what.msg_len, master_seed=what.master_seed.hex(),
            tool_version=version("pqscope"), command_line=sys.argv, build=build_info(self.target.root, board),
            started_at=_now(), **self.target.describe(), elf=str(image.elf), image=asdict(image.size),
            clock=board.clock.name, clock_hz=board.clock_hz, flash_wait_states=board.clock.flash_wait_states,
            toolchain=board.toolchain.to_json(), **what.parameters(), variant=variant_json(what.variant),
            impl_dir=str(implementation.directory.resolve()) if implementation.directory is not None else None,
            impl_stack_bytes=implementation.stack_bytes if implementation.directory is not None else None,
        )


def _gathered(what: Capture, infos: list[Info], kept: list, shards: list[Shard], connections: list[Connection],
              boards: list[str]) -> Iterator:
    """The shards' records as they come, each shard capturing in a thread of its own that asks
    its board for the next record only once the runner has taken (and written) the last one; a
    shard's failure names its board (`boards`) when there are several. Leaving (the capture
    stopped early, failed or was interrupted) cancels every shard's session and waits for its
    thread: the boards are closed only once no thread talks to them."""
    arrivals: queue.Queue = queue.Queue()
    stop = threading.Event()

    def capture_shard(shard: Shard, session: DeviceSession, taken: threading.Semaphore) -> None:
        try:
            for record in what.records(session, infos[shard.index], kept, shard):
                arrivals.put((taken, record))
                taken.acquire()
                if stop.is_set():
                    break
        except Cancelled:
            pass
        except PqscopeError as error:
            arrivals.put(_Failed(PqscopeError(f"shard {shard.index} ({boards[shard.index]}): {error}", error.details)
                                 if len(shards) > 1 else error))
        except BaseException as error:  # handed to the runner's thread, which raises it
            arrivals.put(_Failed(error))
        finally:
            arrivals.put(_FINISHED)

    takens = [threading.Semaphore(0) for _ in shards]
    threads = [threading.Thread(target=capture_shard, args=(shard, connection.session, taken), daemon=True,
                                name=f"shard {shard.index}")
               for shard, connection, taken in zip(shards, connections, takens)]
    for thread in threads:
        thread.start()
    try:
        finished = 0
        while finished < len(threads):
            arrival = arrivals.get()
            if arrival is _FINISHED:
                finished += 1
            elif isinstance(arrival, _Failed):
                raise arrival.error
            else:
                taken, record = arrival
                yield record
                taken.release()
    finally:
        stop.set()
        for connection, taken in zip(connections, takens):
            connection.session.cancel()
            taken.release()
        for thread in threads:
            thread.join()


@dataclass(frozen=True)
class _Failed:
    error: BaseException


_FINISHED = object()


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


@dataclass(frozen=True)
class Member:
    """One implementation of a run or suite, and where it stands."""

    implementation: Implementation
    path: Path
    resume_from: RunMeta | None = None  # the meta.json of an interrupted run to go on with
    complete: bool = False  # measured to the end before: kept as it is


def member_path(suite: Path, implementation: Implementation) -> Path:
    return suite / f"{implementation.scheme}-{implementation.impl}"


def new_suite(path: Path, board: Board, implementations: list[Implementation], what: SampleCapture, *,
              ct_signatures: int = 0, ct_replay: bool = True) -> list[Member]:
    """A suite directory whose manifest (suite.json) lists its members and shared parameters (and
    the signatures of each member's constant-time test, 0: none, and whether a board's test is
    replayed), written before any member starts so that a killed suite can be resumed as a whole."""
    start_suite(path, {
        "schema": 1, "kind": "suite", "command_line": sys.argv, "started_at": _now(), "board": board.name,
        "clock": board.clock.name, "toolchain": board.toolchain.to_json(),
        "members": [{"scheme": row.scheme, "impl": row.impl} for row in implementations],
        "ops": [op.label for op in what.ops], "samples": what.samples, "msg_len": what.msg_len,
        "master_seed": what.master_seed.hex(), **({"variant": variant_json(what.variant)} if what.variant.probed else {}),
        "ct_signatures": ct_signatures, "ct_replay": ct_replay,
    })
    return [Member(row, member_path(path, row)) for row in implementations]


def resumed_implementation(root: Path, meta: RunMeta) -> Implementation:
    """The implementation a run measured: its own directory (--impl-dir) or a catalogue row."""
    if meta.impl_dir is not None:
        return implementation_from_dir(Path(meta.impl_dir), meta.scheme, meta.impl, meta.impl_stack_bytes)
    return find_implementation(load_catalogue(root), meta.scheme, meta.impl)


@dataclass(frozen=True)
class Measurement:
    """What a command measures: the board at its clock, the capture, and its members (one
    implementation, or a suite's), each new, to go on with, or complete."""

    board: Board
    what: Capture
    members: list[Member]


def resumed(root: Path, path: Path, kind: type[Capture]) -> Measurement:
    """What resuming the measurement at `path` (a capture of `kind`, or a suite of runs) measures,
    with the parameters it began with (meta.json, or a suite's suite.json): complete members stay
    as they are, the interrupted one goes on, those never started start."""
    if kind is SampleCapture and is_suite(path):
        return _resumed_suite(root, path)
    meta = resume_parameters(path, kind=kind.kind)
    return Measurement(resumed_board(root, meta), kind.from_meta(meta),
                       [Member(resumed_implementation(root, meta), path, meta)])


def _resumed_suite(root: Path, path: Path) -> Measurement:
    manifest = suite_parameters(path)
    what = SampleCapture(tuple(op for op in Op if op.label in manifest["ops"]), manifest["samples"],
                         bytes.fromhex(manifest["master_seed"]), manifest["msg_len"],
                         variant=variant_from_json(manifest.get("variant")))
    catalogue = load_catalogue(root)
    members = []
    for entry in manifest["members"]:
        implementation = find_implementation(catalogue, entry["scheme"], entry["impl"])
        run_path = member_path(path, implementation)
        meta = member_state(run_path)
        complete = meta is not None and meta.status == "complete" and meta.samples_completed == meta.samples
        members.append(Member(implementation, run_path, meta, complete))
    return Measurement(board_at_clock(root, manifest["board"], manifest.get("clock"),
                                      Toolchain.from_json(manifest.get("toolchain"))), what, members)


def board_at_clock(root: Path, name: str, clock: str | None, built_with: Toolchain = DEFAULT_TOOLCHAIN) -> Board:
    """Board `name` at clock `clock` (None: its default one), its images built `built_with`."""
    board = get_board(root, name)
    return (board.at_clock(clock) if clock else board).built_with(built_with)


def resumed_board(root: Path, meta: RunMeta) -> Board:
    """The board a run measured on, at the clock it measured at, its images built as they were
    (older runs: the defaults)."""
    return board_at_clock(root, meta.board, meta.clock, Toolchain.from_json(meta.toolchain))
